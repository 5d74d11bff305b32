import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { StartedRecord } from './FailureRecorder.js';
import { failureIndexKey, objectOfSubject } from './failureIndex.js';
import { GiveUpReason } from './failureRecord.js';

/**
 * How many times a message's last attempt that succeeded tries to remove its provisional record and
 * index entries, each try after the SDK's own attempts: a record left behind names a message that
 * succeeded, and nothing else ever removes it.
 */
export const SUCCEEDED_RECORD_REMOVAL_TRIES = 3;

/** Where a recorder keeps its records. */
export interface RecordPlace {
  readonly store: S3ObjectStore;
  readonly bucket: string;
  readonly prefix: string;
  readonly indexByObject: boolean;
}

/**
 * Removes the provisional record a last attempt wrote when it started (or an earlier receive's record
 * it kept) and the record's index entries, now that the attempt succeeded. Every delete is
 * conditional on the ETag seen (If-Match): a record another delivery of the message replaced since
 * answers 412 and stands. The removal is idempotent (a delete of what is gone answers 404, a HEAD of
 * a removed entry finds nothing), so a try that failed part-way is simply tried again, up to
 * {@link SUCCEEDED_RECORD_REMOVAL_TRIES} times; the last try's error is thrown.
 *
 * @example
 * await removeSucceededRecord({ store, bucket: 'rerun-output', prefix: 'failures/', indexByObject: true }, started);
 */
export async function removeSucceededRecord(place: RecordPlace, started: StartedRecord): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await removeOnce(place, started);
      return;
    } catch (error) {
      if (attempt >= SUCCEEDED_RECORD_REMOVAL_TRIES) throw error;
    }
  }
}

async function removeOnce(place: RecordPlace, started: StartedRecord): Promise<void> {
  const { store, bucket, prefix } = place;
  await store.deleteIfMatch(bucket, started.key, started.etag);
  const object = place.indexByObject ? objectOfSubject(started.subject) : undefined;
  if (!object) return;
  const queueName = /([^/]+)\/[^/]+\.json$/.exec(started.key)?.[1] ?? '';
  const messageId = /([^/]+)\.json$/.exec(started.key)?.[1] ?? '';
  // The entry's key names this message alone: no other writer has one to lose. Conditional all the
  // same, on the ETag seen now, like every delete of the pipeline. Its own provisional record has a
  // last-receive entry; a record it found and kept may be an earlier receive's non-retryable one (or
  // another delivery's provisional one): both reasons then.
  const reasons = started.kept ? [GiveUpReason.LAST_RECEIVE, GiveUpReason.NON_RETRYABLE] : [GiveUpReason.LAST_RECEIVE];
  for (const givenUp of reasons) {
    const entry = failureIndexKey(prefix, object, queueName, messageId, givenUp);
    const seen = await store.head(bucket, entry);
    if (seen) await store.deleteIfMatch(bucket, entry, seen.etag);
  }
}
