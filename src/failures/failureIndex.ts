import { createHash } from 'node:crypto';
import { dayOfPartition } from '../keys/partition.js';
import { type GiveUpReason, GiveUpReason as Reasons } from './failureRecord.js';

/**
 * An index of failure records by the object they are about, so that `rerun status` can tell from a
 * listing which inputs of a day have a failure record (records themselves are keyed by message id,
 * which no input listing can find). The recorder writes one empty entry beside each record of an
 * S3 object:
 *
 * `{failurePrefix}.by-input/{bucket}/{dt=D | _}/{sha256(key)}/{queue}.{messageId}.{givenUp}`
 *
 * - `.by-input` starts with a dot, which no SQS queue name can (letters, digits, `-` and `_`), so it
 *   never collides with a queue's records;
 * - the input's day comes first, so one listing per day (or one per window) finds every entry;
 * - the key's SHA-256 keeps the entry short whatever the input key's length (S3 keys stop at 1,024
 *   bytes), and the status computes the same hash for each input it lists;
 * - `givenUp` is in the key (a non-retryable failure, or the last receive), so a listing tells why the
 *   worker gave up without reading the record; status and summaries call both dead-lettered (the
 *   worker never deletes a given-up message: the queue's redrive policy moves it to the DLQ).
 */

/** The folder of the index under the failure prefix. */
export const FAILURE_INDEX_FOLDER = '.by-input/';
const NO_PARTITION = '_';

/** What an index entry says, decoded from its key. */
export interface FailureIndexEntry {
  /** SHA-256 (hex) of the input's key. */
  readonly inputHash: string;
  readonly queueName: string;
  readonly messageId: string;
  readonly givenUp: GiveUpReason;
}

/**
 * The SHA-256 (hex) of an input key, as the index names it.
 *
 * @example
 * inputKeyHash('incoming/dt=2026-01-05/a.csv'); // '5d41…' (64 hex digits)
 */
export function inputKeyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * The day of an input key: its first `dt=YYYY-MM-DD` path segment, wherever it is
 * (`incoming/dt=2026-01-05/a.csv`), or undefined.
 *
 * @example
 * dayOfInputKey('incoming/dt=2026-01-05/a.csv'); // '2026-01-05'
 */
export function dayOfInputKey(key: string): string | undefined {
  const segments = key.split('/');
  segments.pop(); // the file name is not a partition
  for (const segment of segments) {
    const day = dayOfPartition(segment);
    if (day) return day;
  }
  return undefined;
}

/**
 * The prefix listing a day's index entries of one input bucket (`failures/.by-input/in/dt=D/`).
 *
 * @example
 * failureIndexDayPrefix('failures/', 'rerun-input', '2026-01-05'); // 'failures/.by-input/rerun-input/dt=2026-01-05/'
 */
export function failureIndexDayPrefix(failurePrefix: string, bucket: string, day: string | undefined): string {
  return `${failureIndexRoot(failurePrefix, bucket)}${day ? `dt=${day}` : NO_PARTITION}/`;
}

/**
 * The root of one input bucket's index entries.
 *
 * @example
 * failureIndexRoot('failures/', 'rerun-input'); // 'failures/.by-input/rerun-input/'
 */
export function failureIndexRoot(failurePrefix: string, bucket: string): string {
  return `${failurePrefix}${FAILURE_INDEX_FOLDER}${bucket}/`;
}

/**
 * The folder of one input's index entries: every failure record of that object, of any message.
 *
 * @example
 * failureIndexInputPrefix('failures/', { bucket: 'in', key: 'incoming/dt=2026-01-05/a.csv' });
 * // 'failures/.by-input/in/dt=2026-01-05/<sha256>/'
 */
export function failureIndexInputPrefix(
  failurePrefix: string,
  object: { readonly bucket: string; readonly key: string },
): string {
  return `${failureIndexDayPrefix(failurePrefix, object.bucket, dayOfInputKey(object.key))}${inputKeyHash(object.key)}/`;
}

/**
 * The key of the index entry of one failure record of an S3 object.
 *
 * @example
 * failureIndexKey('failures/', { bucket: 'in', key: 'incoming/dt=2026-01-05/a.csv' }, 'rerun-normalize-queue', 'm-1', 'last-receive');
 * // 'failures/.by-input/in/dt=2026-01-05/<sha256>/rerun-normalize-queue.m-1.last-receive'
 */
export function failureIndexKey(
  failurePrefix: string,
  object: { readonly bucket: string; readonly key: string },
  queueName: string,
  messageId: string,
  givenUp: GiveUpReason,
): string {
  return `${failureIndexInputPrefix(failurePrefix, object)}${queueName}.${messageId}.${givenUp}`;
}

/**
 * Decodes an index entry's key (relative to its day prefix is not needed: the last two segments
 * carry everything); undefined for anything else.
 *
 * @example
 * parseFailureIndexKey('failures/.by-input/in/dt=2026-01-05/<sha>/q.m-1.last-receive');
 */
export function parseFailureIndexKey(key: string): FailureIndexEntry | undefined {
  const parts = key.split('/');
  const name = parts.pop();
  const inputHash = parts.pop();
  if (!name || !inputHash || !/^[0-9a-f]{64}$/.test(inputHash)) return undefined;
  const givenUpAt = name.lastIndexOf('.');
  const givenUp = name.slice(givenUpAt + 1) as GiveUpReason;
  if (givenUp !== Reasons.LAST_RECEIVE && givenUp !== Reasons.NON_RETRYABLE) return undefined;
  const rest = name.slice(0, givenUpAt);
  // Queue names hold no dot except a `.fifo` suffix; message ids hold none.
  const idAt = rest.lastIndexOf('.');
  if (idAt <= 0) return undefined;
  return { inputHash, queueName: rest.slice(0, idAt), messageId: rest.slice(idAt + 1), givenUp };
}

/**
 * Reads an `s3://bucket/key` subject back into its object; undefined for anything else.
 *
 * @example
 * objectOfSubject('s3://in/incoming/a.csv'); // { bucket: 'in', key: 'incoming/a.csv' }
 */
export function objectOfSubject(subject: string | undefined): { bucket: string; key: string } | undefined {
  const match = subject ? /^s3:\/\/([^/]+)\/(.+)$/s.exec(subject) : null;
  return match?.[1] && match[2] ? { bucket: match[1], key: match[2] } : undefined;
}
