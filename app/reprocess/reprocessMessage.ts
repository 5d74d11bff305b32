import { encodeS3EventKey } from '../../src/intake/parseS3Event.js';

export { encodeS3EventKey } from '../../src/intake/parseS3Event.js';

/**
 * The body of a reprocess message: an S3 event notification for one object, shaped as S3 sends
 * it (`eventSource` `aws:s3`, `ObjectCreated:Put`), so the deployed worker needs no second intake.
 * It carries the ETag and size the plan listed; the worker reads the input's current content
 * anyway (its done-check), so a message that is late or sent twice changes nothing. With `sentAt`
 * it carries its own send time as `eventTime`: received for the first time within the function's
 * time limit of it, it is then a fresh delivery (src/batch/isFreshDelivery.ts), so an object found
 * built from that ETag costs the worker one HEAD; a redrive of it, much later, is not fresh.
 * `rerun-reprocess` in `requestParameters.sourceIPAddress` tells people reading a DLQ where it came from.
 *
 * @example
 * reprocessMessageBody({ bucket: 'in', key: 'incoming/a.csv', etag: '9b2c', size: 12 });
 */
export function reprocessMessageBody(object: {
  readonly bucket: string;
  readonly key: string;
  readonly etag: string;
  readonly size: number;
  /** When the message is sent (epoch ms). @default none: the message is never a fresh delivery */
  readonly sentAt?: number | undefined;
}): string {
  return JSON.stringify({
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        ...(object.sentAt !== undefined ? { eventTime: new Date(object.sentAt).toISOString() } : {}),
        eventName: 'ObjectCreated:Put',
        requestParameters: { sourceIPAddress: 'rerun-reprocess' },
        s3: {
          s3SchemaVersion: '1.0',
          bucket: { name: object.bucket, arn: `arn:aws:s3:::${object.bucket}` },
          object: { key: encodeS3EventKey(object.key), size: object.size, eTag: object.etag },
        },
      },
    ],
  });
}
