import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { DeadlineNearError, PublishConflictError, RerunError } from '../../src/errors.js';
import type { Day } from '../../src/keys/partition.js';
import { type Logger, silentLogger } from '../../src/logging/logger.js';
import { withFields } from '../../src/logging/withFields.js';
import { type S3ObjectStore, type WriteCondition, type WriteResult, WriteStatus } from '../../src/s3/S3ObjectStore.js';
import { type DailySummary, parseSummary, SummaryAccumulator, serializeSummary } from './dailySummary.js';
import type { InputRules } from './inputCoverage.js';
import { judgeSummaryHead, SummaryState } from './judgeSummaryHead.js';
import { type LineageEntry, lineageHash, sortLineage } from './lineage.js';
import { listSummaryInputs } from './listPartitions.js';
import type { S3PartitionStore } from './S3PartitionStore.js';
import {
  classifySummaryKey,
  lineageRoot,
  type MarkerInfo,
  markerKey,
  markerPrefix,
  type SummaryLayout,
  stagingKey,
  summaryKey,
} from './summaryLayout.js';
import { buildSummaryMetadata } from './summaryMetadata.js';

/** Options of {@link summarizePartition}. */
export interface SummarizePartitionOptions {
  /** Conditional puts, HEAD with checksum, deletes. */
  readonly store: S3ObjectStore;
  /** Listings with ETags and GETs pinned to an ETag. */
  readonly reader: S3PartitionStore;
  /** The output bucket (holds the lineage and the summaries). */
  readonly bucket: string;
  readonly layout: SummaryLayout;
  /** Version of the summary code and format; summaries of another version are rebuilt. */
  readonly codeVersion: string;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * The day's inputs (input bucket, prefix, failure index, the worker's key rules): the summary then
   * records which inputs it covers and which it does not (pending, dead-lettered, outdated,
   * skipped), and its lineage hash includes that coverage, as `rerun status` and the backfill planner
   * judge it. Two more listings per task, no request per input.
   * @default undefined: the outputs' lineage only, no coverage record
   */
  readonly inputs?: InputRules;
  /**
   * Times to start over when the inputs change while they are read, or another writer publishes
   * first, before failing with a retryable error.
   * @default 4
   */
  readonly maxRounds?: number;
  /**
   * The most lineage entries (normalized outputs and quarantine objects) one day's summary takes:
   * its manifest lists each one, and one invocation reads them all. A larger day fails at once,
   * not retryable, with a {@link SummaryTooLargeError} naming the count and the bound.
   * @default DEFAULT_MAX_SUMMARY_INPUTS (20,000)
   */
  readonly maxInputs?: number;
  /**
   * The largest serialized summary (with its manifest), bytes: it is built in memory and written
   * with one PutObject. Above it: a non-retryable {@link SummaryTooLargeError}.
   * @default DEFAULT_MAX_SUMMARY_BYTES (64 MiB)
   */
  readonly maxSummaryBytes?: number;
  /**
   * The invocation's time. Checked before each input and every {@link LINES_PER_TIME_CHECK} lines:
   * when less than `marginMs` is left the task stops before the timeout, with a retryable
   * DeadlineNearError when it only started late, or a non-retryable SummaryTooLargeError when its
   * pace cannot read the day within a whole invocation (`timeLimitMs`).
   * @default none: no time guard
   */
  readonly deadline?: SummaryDeadline;
}

/** What {@link SummarizePartitionOptions.deadline} needs. */
export interface SummaryDeadline {
  remainingTimeMs(): number;
  readonly marginMs: number;
  /** The invocation's whole time when it started (at most the function's timeout). */
  readonly timeLimitMs: number;
  /** The clock (epoch ms) that measures how long the task has read. */
  now(): number;
}

/** Lineage entries one summary takes by default: its manifest lists each (about 200 bytes apiece). */
export const DEFAULT_MAX_SUMMARY_INPUTS = 20_000;
/** The largest serialized summary by default, bytes. */
export const DEFAULT_MAX_SUMMARY_BYTES = 64 * 1024 ** 2;
/** Lines read between two checks of the time left. */
export const LINES_PER_TIME_CHECK = 1000;

/**
 * A day too large for the summary stage: more inputs or a larger summary than one summary takes, or
 * more than one invocation can read. Retrying cannot help: split the day's summary or raise the
 * bound (and the function's memory and timeout). Not retryable.
 */
export class SummaryTooLargeError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'SummaryTooLargeError';
  }
}

/** How a partition task ended (failures are thrown). */
export interface PartitionOutcome {
  readonly status: 'processed' | 'skipped';
  readonly reason: string;
  readonly day: Day;
  readonly summaryKey: string;
  readonly lineageHash: string;
  /** ETag of the published summary. */
  readonly etag: string;
  /** Counts of the summary, when this run computed it. */
  readonly counts?: { readonly files: number; readonly records: number; readonly quarantined: number };
}

/** The staged copy is not the summary that was written (overwritten, truncated, unreadable). Retryable. */
export class SummaryValidationError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: true });
    this.name = 'SummaryValidationError';
  }
}

/**
 * Brings one day's summary up to date, idempotently: a task that owns its output slice.
 *
 * 1. Lineage: list the day's normalized outputs and quarantine objects with their ETags (sorted);
 *    with `inputs`, also list the day's inputs and failure index and judge which inputs the summary
 *    covers and which not. Hash the lineage with the code version; the coverage record's digest goes
 *    beside it (metadata and marker), so a summary is current only while its coverage record is true.
 * 2. Done-check: HEAD the published summary; when its integrity holds and its lineage hash and code
 *    version are the current ones, it is done: only make sure its manifest marker is right, write
 *    nothing else.
 * 3. Compute: read every input with `If-Match: <listed ETag>`, so the summary is exactly the
 *    function of the lineage it records; a 412/404 means an input changed meanwhile: start over.
 * 4. Stage -> validate -> publish (write-audit-publish): put the canonical bytes at the deterministic
 *    staging key, read them back and validate them (checksum, parse, manifest), then publish the same
 *    bytes with `If-None-Match: *` (first publish) or `If-Match: <ETag seen in 2>` (replace). A 412
 *    means another writer published first: start over (its summary may be current). Readers see the
 *    old summary or the new one, never a partial or mixed one (one PutObject is atomic).
 * 5. Remove the staging copy, then record the manifest marker (its key names lineage hash, summary
 *    ETag and code version, for the planner's list-only done-check) and remove older markers.
 *
 * A crash at any point leaves either the previous summary or the new one; a leftover staging copy or
 * a missing or extra marker is repaired by the next run (and the planner treats it as stale).
 *
 * @example
 * const outcome = await summarizePartition('2026-01-05', { store, reader, bucket: 'rerun-output',
 *   layout: summaryLayout('rerun-input'), codeVersion: 'summarize@1' });
 */
export async function summarizePartition(day: Day, options: SummarizePartitionOptions): Promise<PartitionOutcome> {
  const maxRounds = options.maxRounds ?? 4;
  const logger = withFields(options.logger ?? silentLogger, { partition: `dt=${day}` });
  let last = '';
  for (let round = 1; round <= maxRounds; round++) {
    const result = await attempt(day, options, logger);
    if (typeof result !== 'string') return result;
    last = result;
    logger.info(`summary attempt restarts: ${result}`, { round });
  }
  throw new PublishConflictError(
    `The summary of dt=${day} could not be completed in ${maxRounds} rounds (last: ${last}); ` +
      'the message will be retried.',
  );
}

type Restart =
  | 'inputs changed while being read'
  | `reading an input was interrupted (${string})`
  | 'another writer published first'
  | 'staged copy vanished';

async function attempt(
  day: Day,
  options: SummarizePartitionOptions,
  logger: Logger,
): Promise<PartitionOutcome | Restart> {
  const { store, bucket, layout, codeVersion } = options;
  // 1. Lineage.
  const { lineage, coverage } = await listLineage(day, options);
  const hash = lineageHash({ day, codeVersion, entries: lineage });
  const coverageDigest = coverage?.digest;
  const recorded = coverageDigest !== undefined ? { coverageDigest } : {};
  // 2. Done-check.
  const key = summaryKey(layout, day);
  const head = await store.head(bucket, key);
  const verdict = judgeSummaryHead(head, { day, lineageHash: hash, codeVersion, ...recorded });
  const base = { day, summaryKey: key, lineageHash: hash };

  if (verdict.state === SummaryState.CURRENT) {
    const repaired = await ensureMarker(options, day, {
      lineageHash: hash,
      summaryEtag: verdict.etag,
      codeVersion,
      ...recorded,
    });
    // A missing marker means a publish was interrupted, possibly before its staging copy was removed.
    if (repaired) await removeIfPresent(store, bucket, stagingKey(layout, day, hash));
    return {
      ...base,
      status: 'skipped',
      reason: `already done: summary is current (${lineage.length} inputs)${repaired ? '; manifest marker repaired' : ''}`,
      etag: verdict.etag,
    };
  }
  if (verdict.state !== SummaryState.MISSING)
    logger.info('rebuilding summary', { was: verdict.state, why: verdict.reason });

  // 3. Compute from exactly the listed versions.
  const accumulator = await readLineage(day, options, lineage);
  if (typeof accumulator === 'string') return accumulator;
  const summary = accumulator.finish({
    day,
    codeVersion,
    lineageHash: hash,
    lineage,
    ...(coverage ? { coverage } : {}),
  });
  const write = summaryWrite(day, options, summary, { hash, entries: lineage.length, recorded });

  // 4. Stage -> validate -> publish, then 5. cleanup.
  const published = await stageValidatePublish(day, options, write, { hash, key, head });
  if (typeof published === 'string') return published;
  await ensureMarker(options, day, { lineageHash: hash, summaryEtag: published.etag, codeVersion, ...recorded });
  return {
    ...base,
    status: 'processed',
    reason:
      verdict.state === SummaryState.MISSING
        ? `summary published (${lineage.length} inputs: ${summary.records} records, ${summary.quarantined} quarantined)`
        : `summary replaced (${verdict.reason}; now ${summary.records} records, ${summary.quarantined} quarantined)`,
    etag: published.etag,
    counts: { files: summary.files, records: summary.records, quarantined: summary.quarantined },
  };
}

/** 1. The day's lineage (sorted) and, with `inputs`, its coverage record; a day above `maxInputs` is refused. */
async function listLineage(day: Day, options: SummarizePartitionOptions) {
  const { reader, bucket, layout } = options;
  const listed = await listSummaryInputs(reader, bucket, layout, day, options.inputs);
  const lineage = sortLineage(listed.lineage);
  const maxInputs = options.maxInputs ?? DEFAULT_MAX_SUMMARY_INPUTS;
  if (lineage.length > maxInputs) {
    throw new SummaryTooLargeError(
      `dt=${day} has ${lineage.length} lineage entries (normalized outputs and quarantine objects), above the ` +
        `summary's bound of ${maxInputs} (maxInputs): nothing was read or written; raise maxInputs with the ` +
        "summarize function's memory and timeout, then redrive this task",
    );
  }
  return { lineage, coverage: listed.coverage };
}

/**
 * 3. Reads every lineage entry with `If-Match: <listed ETag>` into one accumulator, checking the
 * time as it goes; a restart when an input changed or its read was interrupted.
 */
async function readLineage(
  day: Day,
  options: SummarizePartitionOptions,
  lineage: readonly LineageEntry[],
): Promise<SummaryAccumulator | Restart> {
  const { reader, bucket, layout } = options;
  const accumulator = new SummaryAccumulator();
  const clock = timeGuard(day, lineage.length, options.deadline);
  for (const [done, entry] of lineage.entries()) {
    clock(done);
    const read = await reader.getExact(bucket, `${lineageRoot(layout, entry.kind)}${entry.path}`, entry.etag);
    if (read.status !== 'ok') return 'inputs changed while being read';
    accumulator.startFile(entry, read.contentLength);
    const lines = createInterface({ input: read.body, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      let count = 0;
      for await (const line of lines) {
        accumulator.addLine(line);
        if (++count % LINES_PER_TIME_CHECK === 0) clock(done);
      }
    } catch (error) {
      // A connection dropped mid-body: the lines read so far are already counted, so start the
      // round over with a fresh accumulator rather than failing the task. A corrupt input is not
      // retried (SummaryInputInvalidError is not retryable).
      if (RerunError.isRerunError(error) && !error.retryable) throw error;
      return `reading an input was interrupted (${error instanceof Error ? error.message : String(error)})`;
    } finally {
      lines.close();
      read.body.destroy();
    }
  }
  return accumulator;
}

/** The summary's canonical bytes, their digest, and a put of them with its metadata. */
interface SummaryWrite {
  readonly sha256Base64: string;
  readonly put: (target: string, condition: WriteCondition) => Promise<WriteResult>;
}

/** Serializes the summary within `maxSummaryBytes` and prepares the puts every stage of its publish makes. */
function summaryWrite(
  day: Day,
  options: SummarizePartitionOptions,
  summary: DailySummary,
  lineage: { readonly hash: string; readonly entries: number; readonly recorded: { readonly coverageDigest?: string } },
): SummaryWrite {
  const { store, bucket, codeVersion } = options;
  const { hash, recorded } = lineage;
  const bytes = serializeSummary(summary);
  const maxBytes = options.maxSummaryBytes ?? DEFAULT_MAX_SUMMARY_BYTES;
  if (bytes.byteLength > maxBytes) {
    throw new SummaryTooLargeError(
      `the summary of dt=${day} is ${bytes.byteLength} bytes (${lineage.entries} lineage entries), above the bound of ` +
        `${maxBytes} bytes (maxSummaryBytes): nothing was written; raise maxSummaryBytes with the summarize ` +
        "function's memory, then redrive this task",
    );
  }
  const sha256Base64 = createHash('sha256').update(bytes).digest('base64');
  const metadata = buildSummaryMetadata({
    day,
    lineageHash: hash,
    codeVersion,
    sha256Base64,
    bytes: bytes.byteLength,
    ...recorded,
  });
  const put = (target: string, condition: WriteCondition) =>
    // The store retries a 409 ConditionalRequestConflict (full jitter); one left over is a lost race.
    store.put(bucket, target, bytes, {
      condition,
      metadata,
      sha256Base64,
      contentType: 'application/json',
    });
  return { sha256Base64, put };
}

/**
 * 4. Stage, validate, publish (write-audit-publish), then 5. remove the staging copy. Returns the
 * published write, or a restart when another writer published first or the staged copy vanished.
 */
async function stageValidatePublish(
  day: Day,
  options: SummarizePartitionOptions,
  write: SummaryWrite,
  target: { readonly hash: string; readonly key: string; readonly head: { readonly etag: string } | undefined },
): Promise<{ readonly etag: string } | Restart> {
  const { store, reader, bucket, layout, codeVersion } = options;
  const { sha256Base64, put } = write;
  const { hash, key, head } = target;
  // 4a. Stage. The staging key is a function of the lineage hash, so an object already there holds
  // the same lineage's summary from a crashed or concurrent run: accept it when its digest matches.
  const staged = stagingKey(layout, day, hash);
  let stagedWrite = await put(staged, { ifNoneMatch: '*' });
  if (stagedWrite.status === WriteStatus.PRECONDITION_FAILED) {
    const existing = await store.head(bucket, staged);
    if (existing && existing.checksumSHA256 !== sha256Base64) {
      stagedWrite = await put(staged, { ifMatch: existing.etag });
    } else if (existing) {
      stagedWrite = { status: WriteStatus.WRITTEN, etag: existing.etag };
    } else {
      stagedWrite = await put(staged, { ifNoneMatch: '*' });
    }
  }
  if (stagedWrite.status !== WriteStatus.WRITTEN) return 'another writer published first';

  // 4b. Validate what was staged (the audit step): read it back, compare digests, parse, check the manifest.
  const stagedBytes = await reader.getBytes(bucket, staged);
  if (!stagedBytes) return 'staged copy vanished';
  if (createHash('sha256').update(stagedBytes).digest('base64') !== sha256Base64) {
    throw new SummaryValidationError(`staged summary s3://${bucket}/${staged} differs from the bytes written`);
  }
  const checked = parseSummary(stagedBytes, { day, lineageHash: hash, codeVersion });
  if (!checked.ok)
    throw new SummaryValidationError(`staged summary s3://${bucket}/${staged} is invalid: ${checked.reason}`);

  // 4c. Publish: create-only when nothing was there, compare-and-swap on what the done-check saw.
  const published = await put(key, head ? { ifMatch: head.etag } : { ifNoneMatch: '*' });
  if (published.status !== WriteStatus.WRITTEN) {
    // The next round stages under its own lineage hash: do not leave this copy behind.
    await store.deleteIfMatch(bucket, staged, stagedWrite.etag);
    return 'another writer published first';
  }

  // 5. Cleanup, then the marker (by the caller). A crash before the marker leaves a published
  // summary the planner reports as stale; the next run's done-check finds it current, removes the
  // staging copy it may have left and writes only the marker.
  await store.deleteIfMatch(bucket, staged, stagedWrite.etag);
  return published;
}

/**
 * Makes the day's markers exactly `[marker]`: creates it (create-only; a 412 means it exists) and
 * deletes any other. Returns whether anything changed.
 */
async function ensureMarker(options: SummarizePartitionOptions, day: Day, marker: MarkerInfo): Promise<boolean> {
  const { store, reader, bucket, layout } = options;
  const wanted = markerKey(layout, day, marker);
  const existing = await reader.listAll(bucket, { prefix: markerPrefix(layout, day) });
  let changed = false;
  if (!existing.some((o) => o.key === wanted)) {
    const empty = new Uint8Array();
    const result = await store.put(bucket, wanted, empty, {
      condition: { ifNoneMatch: '*' },
      metadata: {},
      sha256Base64: createHash('sha256').update(empty).digest('base64'),
    });
    if (result.status === WriteStatus.CONFLICT) {
      throw new PublishConflictError(`manifest marker s3://${bucket}/${wanted} is being written concurrently`);
    }
    changed = result.status === WriteStatus.WRITTEN;
  }
  for (const object of existing) {
    if (object.key === wanted || classifySummaryKey(layout, object.key).kind !== 'marker') continue;
    await store.deleteIfMatch(bucket, object.key, object.etag);
    changed = true;
  }
  return changed;
}

/**
 * Removes a staging copy left by an interrupted run: a HEAD for its ETag, then a delete with
 * `If-Match` on it (no blind delete: the bucket policy requires `s3:if-match` on DeleteObject).
 */
async function removeIfPresent(store: S3ObjectStore, bucket: string, key: string): Promise<void> {
  const head = await store.head(bucket, key);
  if (head) await store.deleteIfMatch(bucket, key, head.etag);
}

/**
 * Checks the time left while a day is read (`done` inputs of `total` so far): throws before the
 * timeout, which would return the task with no outcome until the DLQ says "crashed or timed out".
 * A task whose pace cannot read the day within a whole invocation is too large; one that only
 * started late is retried (a summary is computed whole, so an invocation that started fresh is the
 * only measure).
 */
function timeGuard(day: Day, total: number, deadline: SummaryDeadline | undefined): (done: number) => void {
  if (!deadline) return () => {};
  const startedAt = deadline.now();
  return (done) => {
    if (deadline.remainingTimeMs() >= deadline.marginMs) return;
    const elapsedMs = Math.max(0, deadline.now() - startedAt);
    const budgetMs = deadline.timeLimitMs - deadline.marginMs;
    const read = `read ${done} of ${total} inputs in ${(elapsedMs / 1000).toFixed(1)} s`;
    if (done > 0 && (elapsedMs * total) / done > budgetMs) {
      throw new SummaryTooLargeError(
        `dt=${day} cannot be summarized within the function's time: it ${read}, which projects ` +
          `${((elapsedMs * total) / done / 1000).toFixed(0)} s for the day, above the ${(budgetMs / 1000).toFixed(0)} s an ` +
          "invocation has; stopped before the timeout, nothing was written; raise the summarize function's timeout " +
          'and memory, then redrive this task',
      );
    }
    throw new DeadlineNearError(
      `stopped: the function deadline came near (less than ${deadline.marginMs} ms left) after it ${read}; ` +
        'the day fits a fresh invocation, so the task will be retried',
    );
  };
}
