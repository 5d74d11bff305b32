import { encodeS3EventKey, type S3ObjectEvent } from '../intake/parseS3Event.js';
import { CLOCK_SKEW_ALLOWANCE_MS } from './clockSkew.js';

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

/** One S3 record of a look again: the delete event as S3 sends it, with the time that fixes when it is due. */
function lookAgainRecord(object: Pick<S3ObjectEvent, 'bucket' | 'key' | 'eventName'>, eventTime: string): unknown {
  return {
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
  };
}

/**
 * The delete event to send again: one S3 record, shaped as S3 sends it (so the worker needs no second
 * intake), with the time that fixes when it is due.
 *
 * @example
 * lookAgainBody({ bucket: 'in', key: 'incoming/a b.csv', eventName: 'ObjectRemoved:Delete' }, '2026-12-04T10:00:00.000Z');
 */
export function lookAgainBody(object: Pick<S3ObjectEvent, 'bucket' | 'key' | 'eventName'>, eventTime: string): string {
  return JSON.stringify({ Records: [lookAgainRecord(object, eventTime)] });
}

/** A look again one record of a message asks for. */
export interface PendingLookAgain {
  readonly object: Pick<S3ObjectEvent, 'bucket' | 'key' | 'eventName'>;
  readonly eventTime: string;
  readonly delaySeconds: number;
}

/** The bytes of one look-again message's body at most: below SQS's 256 KiB, with room for its attributes. */
export const MAX_LOOK_AGAIN_BODY_BYTES = 200_000;

/**
 * The messages that carry a message's look agains: as few as fit SQS's body limit, each delayed to
 * the latest due of its records. A look again later than due is as good (every build it waits for
 * has ended either way), and one message of 500 deletes then costs one send, not 500.
 *
 * @example
 * lookAgainMessages([{ object, eventTime: '2026-12-04T10:00:00.000Z', delaySeconds: 115 }]);
 * // [{ body: '{"Records":[...]}', delaySeconds: 115, records: 1 }]
 */
export function lookAgainMessages(
  pending: readonly PendingLookAgain[],
  maxBodyBytes = MAX_LOOK_AGAIN_BODY_BYTES,
): { readonly body: string; readonly delaySeconds: number; readonly records: number }[] {
  const messages: { body: string; delaySeconds: number; records: number }[] = [];
  let records: string[] = [];
  let bytes = 0;
  let delaySeconds = 0;
  const close = () => {
    if (records.length === 0) return;
    messages.push({ body: `{"Records":[${records.join(',')}]}`, delaySeconds, records: records.length });
    records = [];
    bytes = 0;
    delaySeconds = 0;
  };
  for (const look of pending) {
    const record = JSON.stringify(lookAgainRecord(look.object, look.eventTime));
    const size = Buffer.byteLength(record) + 1;
    if (records.length > 0 && bytes + size + '{"Records":[]}'.length > maxBodyBytes) close();
    records.push(record);
    bytes += size;
    delaySeconds = Math.max(delaySeconds, look.delaySeconds);
  }
  close();
  return messages;
}

/**
 * What a delete event asks of the look again: a send with its delay, or none with the reason. Only
 * an eventTime within the look-again window is believed: one ahead of the clock by more than
 * CLOCK_SKEW_ALLOWANCE_MS (clockSkew.ts) cannot be a delete that happened (a forged or mistimed event: it
 * would be due in the future for ever and sent again every 900 s), one that is not a time says so,
 * and one older than the window needs no look again (every build that read the input before it
 * has ended). The removal itself runs either way: it judges by the input, not by the event.
 *
 * @example
 * planLookAgain('2026-12-04T10:00:00.000Z', Date.parse('2026-12-04T10:00:05Z'), 60_000);
 * // { send: true, eventTime: '2026-12-04T10:00:00.000Z', delaySeconds: 115 }
 */
export function planLookAgain(
  eventTime: string | undefined,
  now: number,
  timeLimitMs: number,
):
  | { readonly send: true; readonly eventTime: string; readonly delaySeconds: number }
  | { readonly send: false; readonly note: string } {
  // An event without a time (rerun's own tools send some) looks again from the first removal.
  const time = eventTime ?? new Date(now).toISOString();
  const at = Date.parse(time);
  if (Number.isNaN(at))
    return { send: false, note: `not looking again: its eventTime ${JSON.stringify(time)} is not a time` };
  if (at - now > CLOCK_SKEW_ALLOWANCE_MS) {
    const ahead = Math.round((at - now) / 1000);
    return {
      send: false,
      note:
        `not looking again: its eventTime ${time} is ${ahead} s ahead of this function's clock, beyond the ` +
        `${CLOCK_SKEW_ALLOWANCE_MS / 1000} s allowed for clock skew (a delete cannot be in the future: a forged or mistimed event)`,
    };
  }
  const delaySeconds = lookAgainDelaySeconds(lookAgainDueAt(time, timeLimitMs), now);
  if (delaySeconds === undefined) {
    return {
      send: false,
      note: `no look again needed (every build that read the input before the delete at ${time} has ended)`,
    };
  }
  return { send: true, eventTime: time, delaySeconds };
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
