/**
 * S3 event intake: turns the body of one SQS message into the S3 objects it names.
 * Pure: no SDK, no clock. See docs/AWS-BEHAVIOUR.md, "Event keys and sequencers".
 */

/** One object named by an S3 event record. `key` is already URL-decoded. */
export interface S3ObjectEvent {
  readonly bucket: string;
  readonly key: string;
  /** e.g. `ObjectCreated:Put`. */
  readonly eventName: string;
  /** The ETag of the version that triggered the event (may no longer be current), without quotes. */
  readonly eTag?: string | undefined;
  readonly size?: number | undefined;
  readonly versionId?: string | undefined;
  /** Orders events for the same key only (PUT and DELETE). Absent in moto's events. */
  readonly sequencer?: string | undefined;
  /** When the change happened (ISO 8601, the notification's `eventTime` or EventBridge's `time`). */
  readonly eventTime?: string | undefined;
  /**
   * Who made the change, as the record's `requestParameters.sourceIPAddress` says: an address for S3's
   * own events, `rerun-reprocess` (or another `rerun-` name) for the messages rerun's tools send.
   */
  readonly origin?: string | undefined;
}

/**
 * Whether an event was sent by one of rerun's own tools (a reprocess message, a removal's look
 * again), not by S3: such a message names an object that is usually done already.
 *
 * @example
 * sentByRerun({ bucket: 'in', key: 'a.csv', eventName: 'ObjectCreated:Put', origin: 'rerun-reprocess' }); // true
 */
export function sentByRerun(object: Pick<S3ObjectEvent, 'origin'>): boolean {
  return object.origin?.startsWith('rerun-') === true;
}

/** What one message body turned out to be. */
export const IntakeKind = {
  /** An S3 event notification naming one or more objects. */
  OBJECTS: 'objects',
  /** The `s3:TestEvent` S3 sends when notifications are configured: acknowledge and ignore. */
  TEST_EVENT: 's3-test-event',
  /** Not an S3 event notification: a classified, non-retryable failure. */
  INVALID: 'invalid',
} as const;

/** What {@link parseS3EventBody} found in one message body (its `kind` is one of `IntakeKind`). */
export type IntakeResult =
  | { readonly kind: 'objects'; readonly objects: readonly S3ObjectEvent[] }
  | { readonly kind: 's3-test-event' }
  | { readonly kind: 'invalid'; readonly reason: string };

/**
 * Encodes an object key as S3 writes it into event notifications: URL-encoded as in an HTML form
 * (space as `+`, `+` as `%2B`, non-ASCII as %XX UTF-8), `/` kept. {@link decodeS3EventKey} reads it back.
 *
 * @example
 * encodeS3EventKey('incoming/a b+c.csv'); // 'incoming/a+b%2Bc.csv'
 */
export function encodeS3EventKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

/**
 * Decodes an object key as S3 writes it into event notifications: URL-encoded as in an HTML form
 * (`+` is a space, `%2B` a plus, `%XX` UTF-8 bytes). moto also encodes `/` as `%2F`, which this
 * generic decoding handles too.
 *
 * @example
 * decodeS3EventKey('incoming/caf%C3%A9+m%C3%BCnchen%2B1.csv'); // 'incoming/café münchen+1.csv'
 */
export function decodeS3EventKey(key: string): string {
  return decodeURIComponent(key.replace(/\+/g, ' '));
}

/**
 * Parses an SQS message body carrying an S3 event notification, directly, wrapped in an SNS
 * notification (S3 -> SNS -> SQS fan-out), or as an S3 event delivered through EventBridge (a rule
 * with an SQS target: `source: "aws.s3"`, `detail-type: "Object Created"` / `"Object Deleted"`; see
 * `parseEventBridgeS3Event`). Never throws: a body that is not an S3 event comes back as
 * `{ kind: 'invalid', reason }`.
 *
 * @example
 * const intake = parseS3EventBody(record.body);
 * if (intake.kind === IntakeKind.OBJECTS) for (const o of intake.objects) console.log(o.bucket, o.key);
 */
export function parseS3EventBody(body: string): IntakeResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return invalid(`message body is not JSON (starts with ${JSON.stringify(body.slice(0, 40))})`);
  }
  if (!isObject(parsed)) return invalid('message body is JSON but not an object');

  // S3 -> SNS -> SQS without raw delivery: the S3 event is a JSON string in `Message`.
  if (parsed.Type === 'Notification' && typeof parsed.Message === 'string') {
    return parseS3EventBody(parsed.Message);
  }
  if (parsed.Event === 's3:TestEvent') return { kind: IntakeKind.TEST_EVENT };
  if (parsed.source === 'aws.s3' && typeof parsed['detail-type'] === 'string') return parseEventBridgeS3Event(parsed);
  if (!Array.isArray(parsed.Records)) {
    return invalid('message is not an S3 event notification (no Records array and not an s3:TestEvent)');
  }
  if (parsed.Records.length === 0) return invalid('S3 event notification has an empty Records array');

  const objects: S3ObjectEvent[] = [];
  for (const [index, record] of parsed.Records.entries()) {
    const result = parseRecord(record);
    if (typeof result === 'string') return invalid(`Records[${index}]: ${result}`);
    objects.push(result);
  }
  return { kind: IntakeKind.OBJECTS, objects };
}

function parseRecord(record: unknown): S3ObjectEvent | string {
  if (!isObject(record)) return 'record is not an object';
  if (record.eventSource !== 'aws:s3') return `eventSource is ${JSON.stringify(record.eventSource)}, not "aws:s3"`;
  const s3 = record.s3;
  if (!isObject(s3) || !isObject(s3.bucket) || !isObject(s3.object)) return 'record has no s3.bucket / s3.object';
  const bucket = s3.bucket.name;
  const rawKey = s3.object.key;
  if (typeof bucket !== 'string' || bucket === '') return 's3.bucket.name is missing';
  if (typeof rawKey !== 'string' || rawKey === '') return 's3.object.key is missing';
  let key: string;
  try {
    key = decodeS3EventKey(rawKey);
  } catch {
    return `s3.object.key ${JSON.stringify(rawKey)} is not valid URL encoding`;
  }
  const object = s3.object;
  const origin = (record.requestParameters as { sourceIPAddress?: unknown } | undefined)?.sourceIPAddress;
  return {
    bucket,
    key,
    eventName: typeof record.eventName === 'string' ? record.eventName : 'unknown',
    ...(typeof object.eTag === 'string' && object.eTag !== '' ? { eTag: stripQuotes(object.eTag) } : {}),
    ...(typeof object.size === 'number' ? { size: object.size } : {}),
    ...(typeof object.versionId === 'string' && object.versionId !== '' ? { versionId: object.versionId } : {}),
    ...(typeof object.sequencer === 'string' && object.sequencer !== '' ? { sequencer: object.sequencer } : {}),
    ...(typeof record.eventTime === 'string' && record.eventTime !== '' ? { eventTime: record.eventTime } : {}),
    ...(typeof origin === 'string' && origin !== '' ? { origin } : {}),
  };
}

/** EventBridge's `detail.reason` of an Object Created event, as the notification's eventName suffix. */
const CREATED_REASONS: Readonly<Record<string, string>> = {
  PutObject: 'Put',
  'POST Object': 'Post',
  CopyObject: 'Copy',
  CompleteMultipartUpload: 'CompleteMultipartUpload',
};

/**
 * Maps an S3 event delivered through EventBridge onto the same object reference as a notification
 * (S3 User Guide, "EventBridge event message structure"): `detail.bucket.name`, `detail.object.key`
 * (decoded as a notification key; AWS does not document its encoding, Powertools for AWS Lambda
 * (Python) decodes it so: unverified, see test/unit/parseS3Event.test.ts), `etag`, `size`, `version-id`,
 * `sequencer`. The event name follows the notification's names, so the worker's rules apply
 * unchanged: `Object Created` with reason `PutObject` / `POST Object` / `CopyObject` /
 * `CompleteMultipartUpload` is `ObjectCreated:Put` / `:Post` / `:Copy` / `:CompleteMultipartUpload`;
 * `Object Deleted` is `ObjectRemoved:Delete`, or `ObjectRemoved:DeleteMarkerCreated` for
 * `deletion-type: "Delete Marker Created"` (`LifecycleExpiration:*` for reason
 * `Lifecycle Expiration`). Other S3 detail types (restore, tagging, storage class...) become
 * `EventBridge:<detail-type>`: acknowledged and skipped by the worker, as they create no content.
 *
 * @example
 * parseEventBridgeS3Event({ source: 'aws.s3', 'detail-type': 'Object Created',
 *   detail: { bucket: { name: 'in' }, object: { key: 'incoming/a.csv', etag: 'abc' }, reason: 'PutObject' } });
 * // { kind: 'objects', objects: [{ bucket: 'in', key: 'incoming/a.csv', eventName: 'ObjectCreated:Put', eTag: 'abc' }] }
 */
export function parseEventBridgeS3Event(event: Record<string, unknown>): IntakeResult {
  const detailType = String(event['detail-type']);
  const detail = event.detail;
  if (!isObject(detail) || !isObject(detail.bucket) || !isObject(detail.object)) {
    return invalid(`EventBridge S3 event "${detailType}" has no detail.bucket / detail.object`);
  }
  const bucket = detail.bucket.name;
  const rawKey = detail.object.key;
  if (typeof bucket !== 'string' || bucket === '')
    return invalid('EventBridge S3 event: detail.bucket.name is missing');
  if (typeof rawKey !== 'string' || rawKey === '') return invalid('EventBridge S3 event: detail.object.key is missing');
  let key: string;
  try {
    key = decodeS3EventKey(rawKey);
  } catch {
    return invalid(`EventBridge S3 event: detail.object.key ${JSON.stringify(rawKey)} is not valid URL encoding`);
  }
  const reason = typeof detail.reason === 'string' ? detail.reason : '';
  let eventName: string;
  if (detailType === 'Object Created') {
    eventName = `ObjectCreated:${CREATED_REASONS[reason] ?? (reason.replace(/\s+/g, '') || 'Put')}`;
  } else if (detailType === 'Object Deleted') {
    const family = reason === 'Lifecycle Expiration' ? 'LifecycleExpiration' : 'ObjectRemoved';
    eventName = `${family}:${detail['deletion-type'] === 'Delete Marker Created' ? 'DeleteMarkerCreated' : 'Delete'}`;
  } else {
    eventName = `EventBridge:${detailType}`;
  }
  const object = detail.object;
  return {
    kind: IntakeKind.OBJECTS,
    objects: [
      {
        bucket,
        key,
        eventName,
        ...(typeof object.etag === 'string' && object.etag !== '' ? { eTag: stripQuotes(object.etag) } : {}),
        ...(typeof object.size === 'number' ? { size: object.size } : {}),
        ...(typeof object['version-id'] === 'string' && object['version-id'] !== ''
          ? { versionId: object['version-id'] }
          : {}),
        ...(typeof object.sequencer === 'string' && object.sequencer !== '' ? { sequencer: object.sequencer } : {}),
        ...(typeof event.time === 'string' && event.time !== '' ? { eventTime: event.time } : {}),
      },
    ],
  };
}

/**
 * Compares two `sequencer` values of events for the SAME key: negative when `a` is older.
 * AWS: left-pad the shorter with zeros, then compare lexicographically.
 *
 * @example
 * compareSequencers('0055AED6DCD90281E5', '0055AED6DCD9028200') < 0; // true
 */
export function compareSequencers(a: string, b: string): number {
  const width = Math.max(a.length, b.length);
  const left = a.toUpperCase().padStart(width, '0');
  const right = b.toUpperCase().padStart(width, '0');
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Removes the double quotes S3 puts around ETags. */
export function stripQuotes(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}

function invalid(reason: string): IntakeResult {
  return { kind: IntakeKind.INVALID, reason };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
