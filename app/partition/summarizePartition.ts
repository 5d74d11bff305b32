import type { Day } from '../../src/keys/partition.js';
import type { Logger } from '../../src/logging/logger.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { WindowOutputInvalidError, WindowTooLargeError } from '../../src/window/errors.js';
import type { WindowDeadline } from '../../src/window/WindowTaskDefinition.js';
import type { InputRules } from './inputCoverage.js';
import type { S3PartitionStore } from './S3PartitionStore.js';
import type { SummaryLayout } from './summaryLayout.js';
import { summaryWindowTask } from './summaryWindowTask.js';

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

/** What {@link SummarizePartitionOptions.deadline} needs: a window task's deadline. */
export type SummaryDeadline = WindowDeadline;

/** Lineage entries one summary takes by default: its manifest lists each (about 200 bytes apiece). */
export const DEFAULT_MAX_SUMMARY_INPUTS = 20_000;
/** The largest serialized summary by default, bytes. */
export const DEFAULT_MAX_SUMMARY_BYTES = 64 * 1024 ** 2;
export { LINES_PER_TIME_CHECK } from './summaryWindowTask.js';

/**
 * A day too large for the summary stage: more inputs or a larger summary than one summary takes, or
 * more than one invocation can read. Retrying cannot help: split the day's summary or raise the
 * bound (and the function's memory and timeout). Not retryable.
 */
export class SummaryTooLargeError extends WindowTooLargeError {
  constructor(message: string) {
    super(message);
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
export class SummaryValidationError extends WindowOutputInvalidError {
  constructor(message: string) {
    super(message);
    this.name = 'SummaryValidationError';
  }
}

/**
 * Brings one day's summary up to date, idempotently: the reference summary's window task
 * (summaryWindowTask.ts) run by the library's window task engine (src/window/runWindowTask.ts), which
 * lists the day's lineage (and, with `inputs`, its coverage record), HEADs the published summary,
 * builds it from exactly the listed versions, stages, validates and publishes it conditionally,
 * and records its manifest marker. Its errors keep the summary's names (SummaryTooLargeError,
 * SummaryValidationError).
 *
 * @example
 * const outcome = await summarizePartition('2026-01-05', { store, reader, bucket: 'rerun-output',
 *   layout: summaryLayout('rerun-input'), codeVersion: 'summarize@1' });
 */
export async function summarizePartition(day: Day, options: SummarizePartitionOptions): Promise<PartitionOutcome> {
  const { store, reader, bucket, layout, codeVersion, logger, inputs, maxRounds, deadline } = options;
  const task = summaryWindowTask({ bucket, layout, codeVersion, ...(inputs ? { inputs } : {}) });
  const outcome = await task
    .run(day, {
      store,
      reader,
      maxInputs: options.maxInputs ?? DEFAULT_MAX_SUMMARY_INPUTS,
      maxOutputBytes: options.maxSummaryBytes ?? DEFAULT_MAX_SUMMARY_BYTES,
      ...(logger ? { logger } : {}),
      ...(maxRounds !== undefined ? { maxRounds } : {}),
      ...(deadline ? { deadline } : {}),
    })
    .catch((error: unknown) => {
      if (error instanceof WindowTooLargeError) throw new SummaryTooLargeError(error.message);
      if (error instanceof WindowOutputInvalidError) throw new SummaryValidationError(error.message);
      throw error;
    });
  const base = { day, summaryKey: outcome.outputKey, lineageHash: outcome.lineageHash, etag: outcome.etag };
  const counts = outcome.result;
  if (outcome.status === 'skipped' || !counts) return { ...base, status: outcome.status, reason: outcome.reason };
  const totals = `${counts.records} records, ${counts.quarantined} quarantined`;
  return {
    ...base,
    status: 'processed',
    reason: outcome.previous
      ? `summary replaced (${outcome.previous.reason}; now ${totals})`
      : `summary published (${outcome.inputs} inputs: ${totals})`,
    counts,
  };
}
