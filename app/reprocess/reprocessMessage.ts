/**
 * Encodes an object key as S3 writes it into event notifications: URL-encoded as in an HTML form
 * (space as `+`, `+` as `%2B`, non-ASCII as %XX UTF-8), `/` kept. The worker's intake decodes it
 * with `decodeS3EventKey` (docs/AWS-BEHAVIOUR.md, "Event keys and sequencers").
 *
 * @example
 * encodeS3EventKey('incoming/a b+c.csv'); // 'incoming/a+b%2Bc.csv'
 */
export function encodeS3EventKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

/**
 * The body of a reprocess message: an S3 event notification for one object, shaped as S3 sends
 * it (`eventSource` `aws:s3`, `ObjectCreated:Put`), so the deployed worker needs no second intake.
 * It carries the ETag and size the plan listed; the worker reads the input's current content
 * anyway (its done-check), so a message that is late or sent twice changes nothing.
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
}): string {
  return JSON.stringify({
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
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
