import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import {
  dayOfInputKey,
  type FailureIndexEntry,
  failureIndexDayPrefix,
  inputKeyHash,
  parseFailureIndexKey,
} from '../../src/failures/failureIndex.js';
import type { FailureRecord } from '../../src/failures/failureRecord.js';
import { type Day, dayOfPartition, partitionName } from '../../src/keys/partition.js';
import {
  type CoverageInput,
  classifyInputs,
  InputClass,
  type InputRules,
  recordedSourceEtag,
} from '../partition/inputCoverage.js';
import type { ListOptions, S3PartitionStore } from '../partition/S3PartitionStore.js';
import { headObject } from './objectPreview.js';
import type { InputGroup } from './stageInputLayout.js';

/**
 * `undated`: the inputs directly under the input prefix, outside any `dt=` partition (no summary
 * covers them); on a user's object stage, those outside any day of its own layout, or all its inputs
 * when its layout has no days (stageInputLayout).
 */
export const UNDATED = 'undated';

/** One input of a page, classified by the one rule of `rerun status` ({@link classifyInputs}). */
export interface ConsoleInput {
  readonly key: string;
  readonly class: InputClass;
  readonly outputKey: string;
  readonly quarantineKey?: string;
  /** For a dead-lettered input: why the worker gave up, from its failure record. */
  readonly reason?: string;
  /** For a dead-lettered input: the failure record's queue and message. */
  readonly failure?: { readonly queueName: string; readonly messageId: string; readonly retryable?: boolean };
  /** For a skipped input: the worker's key rule. */
  readonly skipReason?: string;
}

/** A page of a day's inputs. */
export interface InputPage {
  readonly day: Day | typeof UNDATED;
  readonly items: readonly ConsoleInput[];
  /**
   * Pass as `after` for the next page; absent on the last one. A group read by filtering a listing
   * (InputGroup.maxScanned) may give it on a page of fewer items, even none: the keys after it are unread.
   */
  readonly next?: string;
}

/** What {@link listInputPage} reads with. */
export interface InputPageSources {
  readonly reader: S3PartitionStore;
  readonly s3: S3Client;
  readonly outputBucket: string;
  readonly rules: InputRules;
  readonly readFailure: (queueName: string, messageId: string) => Promise<FailureRecord | undefined>;
}

/**
 * One page of a day's inputs (key order, at most `limit`), each classified by {@link classifyInputs}
 * over what the page needs: its output and quarantine objects (HEADs of the deterministic keys, never
 * a listing of the whole day) and the day's failure index. A bucket of 100,000 inputs costs one
 * listing request and `limit` HEADs per page. Dead-lettered inputs get their failure record's reason.
 *
 * @example
 * const page = await listInputPage(sources, '2026-01-05', { limit: 50 });
 * page.items[0]; // { key: 'incoming/dt=2026-01-05/a.csv', class: 'covered', outputKey: '...' }
 */
export async function listInputPage(
  sources: InputPageSources,
  day: Day | typeof UNDATED,
  page: { readonly after?: string; readonly limit: number },
  group: InputGroup = referenceGroup(sources.rules.prefix, day),
): Promise<InputPage> {
  const { reader, s3, outputBucket, rules } = sources;
  const { found: listed, scannedTo } = await listPage(reader, rules.bucket, group, page);
  const more = listed.length > page.limit;
  const inputs = listed.slice(0, page.limit);
  const outputs = new Map<string, number>();
  // The input ETag each output records, from the same HEAD: an output older than its input is
  // covered when built from the input's content (identical bytes uploaded again), as in rerun status.
  const recordedSources = new Map<string, string>();
  await mapWithConcurrency(inputs, 8, async (input) => {
    const source = { bucket: rules.bucket, key: input.key };
    for (const key of [rules.outputKey(source), rules.quarantineKey?.(source)]) {
      if (!key) continue;
      const head = await headObject(s3, outputBucket, key);
      if (head) outputs.set(key, head.lastModified);
      const recorded = head && recordedSourceEtag(head.metadata, source);
      if (recorded) recordedSources.set(key, recorded);
    }
  });
  const failures: FailureIndexEntry[] = [];
  // The recorder files an input's failures by the `dt=` folder of its key (none: undated), whatever its layout.
  const indexDays = new Set(inputs.map((input) => dayOfInputKey(input.key)));
  if (indexDays.size === 0) indexDays.add(day === UNDATED ? undefined : day);
  for (const indexDay of indexDays) {
    for await (const o of reader.list(outputBucket, {
      prefix: failureIndexDayPrefix(rules.failurePrefix, rules.bucket, indexDay),
    })) {
      const entry = parseFailureIndexKey(o.key);
      if (entry) failures.push(entry);
    }
  }
  const classified = classifyInputs({ inputs, outputs, failures, recordedSources }, rules);
  const items = await mapWithConcurrency(classified, 8, async (c): Promise<ConsoleInput> => {
    const source = { bucket: rules.bucket, key: c.key };
    const quarantineKey = rules.quarantineKey?.(source);
    const base = {
      key: c.key,
      class: c.class,
      outputKey: rules.outputKey(source),
      ...(quarantineKey ? { quarantineKey } : {}),
    };
    if (c.class === InputClass.SKIPPED) return { ...base, skipReason: rules.skipReason?.(source) ?? '' };
    if (c.class !== InputClass.DEAD_LETTERED) return base;
    const entry = failures.find((f) => f.inputHash === inputKeyHash(c.key));
    if (!entry) return base;
    const record = await sources.readFailure(entry.queueName, entry.messageId);
    return {
      ...base,
      reason: record?.reason ?? `given up (${entry.givenUp}); its failure record is gone`,
      failure: {
        queueName: entry.queueName,
        messageId: entry.messageId,
        ...(record ? { retryable: record.retryable } : {}),
      },
    };
  });
  const next = more ? inputs.at(-1)?.key : scannedTo;
  return { day, items, ...(next ? { next } : {}) };
}

/** Where the reference layout's day (`{prefix}dt=D/`), or its inputs outside any `dt=` folder, are listed. */
function referenceGroup(prefix: string, day: Day | typeof UNDATED): InputGroup {
  const ranges: ListOptions[] =
    day === UNDATED
      ? // Keys sort by byte: the undated inputs lie before `{prefix}dt=` and after every `{prefix}dt=...` key.
        [
          { prefix, stopAt: (key: string) => key >= `${prefix}dt=` },
          { prefix, startAfter: `${prefix}dt=\uffff` },
        ]
      : [{ prefix: `${prefix}${partitionName(day)}/` }];
  return { ranges };
}

/**
 * Up to limit + 1 inputs of the group (the extra one says whether there is a next page); for a group
 * with `maxScanned`, fewer when that many keys were listed first, with the last of them (`scannedTo`).
 */
async function listPage(
  reader: S3PartitionStore,
  bucket: string,
  group: InputGroup,
  page: { readonly after?: string; readonly limit: number },
): Promise<{ readonly found: CoverageInput[]; readonly scannedTo?: string }> {
  const found: CoverageInput[] = [];
  let scanned = 0;
  for (const range of group.ranges) {
    const startAfter = page.after && page.after > (range.startAfter ?? '') ? page.after : range.startAfter;
    if (range.stopAt && page.after && range.stopAt(page.after)) continue;
    for await (const o of reader.list(bucket, { ...range, ...(startAfter ? { startAfter } : {}) })) {
      const holds = !o.key.endsWith('/') && (!group.holds || group.holds(o.key)); // a folder marker is no input
      if (holds) found.push({ key: o.key, lastModified: o.lastModified ?? 0, etag: o.etag });
      if (found.length > page.limit) return { found };
      // A group read by filtering a listing answers with what it found so far, and where to go on from.
      if (group.maxScanned !== undefined && ++scanned >= group.maxScanned) return { found, scannedTo: o.key };
    }
  }
  return { found };
}

/**
 * The first and last day that have inputs (`{prefix}dt=YYYY-MM-DD/`), from a listing of the
 * partition folders only (ListObjectsV2 with a delimiter, starting at `{prefix}dt=`): a request per
 * 1,000 days, whatever the number of inputs. Undefined when no day has any.
 *
 * @example
 * await inputDaySpan(s3, 'rerun-input', 'incoming/'); // { first: '2026-03-01', last: '2026-03-03', days: 3 }
 */
export async function inputDaySpan(
  s3: S3Client,
  bucket: string,
  prefix: string,
): Promise<{ first: Day; last: Day; days: number } | undefined> {
  const days: Day[] = [];
  let token: string | undefined;
  do {
    const out = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: `${prefix}dt=`,
        Delimiter: '/',
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const p of out.CommonPrefixes ?? []) {
      const day = dayOfPartition((p.Prefix ?? '').slice(prefix.length, -1));
      if (day) days.push(day);
    }
    token = out.IsTruncated ? out.NextContinuationToken : undefined;
  } while (token);
  if (days.length === 0) return undefined;
  days.sort();
  return { first: days[0] as Day, last: days.at(-1) as Day, days: days.length };
}
