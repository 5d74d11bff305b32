import { encodeS3EventKey, type S3ObjectEvent } from '../intake/parseS3Event.js';

/*
 * Why a removal looks again.
 *
 * S3's own first delivery of an ObjectCreated event creates the output at once (processObject's
 * `createFirst`), and a create is not followed by a closing check of the input. So a build that read
 * the input just before it was deleted can create its output after the deletion's removal ran, and
 * nothing would remove that output. Instead of every create paying a request for this rare race, the
 * deletion pays: its removal runs at once (outputs disappear promptly), and the same delete event is
 * sent again to the worker's queue, to arrive once every build that can have read the input before the
 * delete has ended. Such a build read the input before the delete, so its invocation began before it
 * and ends within one function timeout of it (Lambda stops an invocation at its timeout): the look
 * again is due one more timeout after that, a margin for a request S3 was still applying when the
 * sandbox stopped (AWS S3 API Reference, CompleteMultipartUpload: processing "could take several
 * minutes"; longer outputs get longer timeouts from the sizing).
 *
 * The event sent again keeps the delete's time (or the first removal's, for an event without one),
 * so its own delivery, once due, removes whatever such a build left (removeOutputs, which also keeps
 * and rebuilds an input uploaded again meanwhile) and sends nothing more.
 */

/** SQS's longest DelaySeconds (SendMessage API reference): a look again further out is sent again when it arrives. */
export const MAX_DELAY_SECONDS = 900;

/**
 * When the removal of a deleted input must run once more: one function timeout after the last build
 * that can have read the input before the delete ended, that is two timeouts after the delete.
 *
 * @example
 * lookAgainDueAt('2026-12-04T10:00:00.000Z', 60_000); // Date.parse('2026-12-04T10:02:00.000Z')
 */
export function lookAgainDueAt(eventTime: string, timeLimitMs: number): number {
  return Date.parse(eventTime) + 2 * timeLimitMs;
}

/**
 * The delete event to send again: one S3 record, shaped as S3 sends it (so the worker needs no second
 * intake), with the time that fixes when it is due.
 *
 * @example
 * lookAgainBody({ bucket: 'in', key: 'incoming/a b.csv', eventName: 'ObjectRemoved:Delete' }, '2026-12-04T10:00:00.000Z');
 */
export function lookAgainBody(object: Pick<S3ObjectEvent, 'bucket' | 'key' | 'eventName'>, eventTime: string): string {
  return JSON.stringify({
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        eventTime,
        eventName: object.eventName,
        requestParameters: { sourceIPAddress: 'rerun-removal-look-again' },
        s3: {
          s3SchemaVersion: '1.0',
          bucket: { name: object.bucket, arn: `arn:aws:s3:::${object.bucket}` },
          object: { key: encodeS3EventKey(object.key) },
        },
      },
    ],
  });
}

/**
 * The delay to send the look again with, in whole seconds (at most SQS's limit), or undefined when
 * it is due already (a late delete event: every build that can have raced it has ended).
 *
 * @example
 * lookAgainDelaySeconds(Date.parse('2026-12-04T10:02:00Z'), Date.parse('2026-12-04T10:00:05Z')); // 115
 */
export function lookAgainDelaySeconds(dueAt: number, now: number): number | undefined {
  if (!(dueAt > now)) return undefined;
  return Math.min(MAX_DELAY_SECONDS, Math.ceil((dueAt - now) / 1000));
}
