import { describe, expect, it } from 'vitest';
import { compareSequencers, decodeS3EventKey, IntakeKind, parseS3EventBody } from '../../src/intake/parseS3Event.js';

const s3Record = (key: string, extra: Record<string, unknown> = {}) => ({
  eventVersion: '2.1',
  eventSource: 'aws:s3',
  awsRegion: 'us-east-1',
  eventTime: '2026-12-02T10:00:00.000Z',
  eventName: 'ObjectCreated:Put',
  s3: {
    bucket: { name: 'in' },
    object: { key, size: 12, eTag: '0123abcd', sequencer: '0055AED6DCD90281E5', ...extra },
  },
});

describe('decodeS3EventKey (docs/AWS-BEHAVIOUR.md: keys are form-URL-encoded)', () => {
  it('turns + into a space, %2B into a plus and %XX into UTF-8', () => {
    expect(decodeS3EventKey('incoming/2026+sales%2Breturns/caf%C3%A9+m%C3%BCnchen.csv')).toBe(
      'incoming/2026 sales+returns/café münchen.csv',
    );
  });
  it("accepts moto's encoded slash as well as real S3's literal slash", () => {
    expect(decodeS3EventKey('incoming%2Fa.csv')).toBe('incoming/a.csv');
    expect(decodeS3EventKey('incoming/a.csv')).toBe('incoming/a.csv');
  });
});

describe('parseS3EventBody', () => {
  it('returns every object of an S3 event with decoded keys and unquoted ETags', () => {
    const body = JSON.stringify({ Records: [s3Record('incoming/a+b.csv', { eTag: '"quoted"' })] });
    const result = parseS3EventBody(body);
    expect(result).toEqual({
      kind: IntakeKind.OBJECTS,
      objects: [
        {
          bucket: 'in',
          key: 'incoming/a b.csv',
          eventName: 'ObjectCreated:Put',
          eTag: 'quoted',
          size: 12,
          sequencer: '0055AED6DCD90281E5',
          eventTime: '2026-12-02T10:00:00.000Z',
        },
      ],
    });
  });

  it('recognises the s3:TestEvent S3 sends when notifications are configured', () => {
    const body = JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'in', RequestId: 'x' });
    expect(parseS3EventBody(body)).toEqual({ kind: IntakeKind.TEST_EVENT });
  });

  it('unwraps an S3 event delivered through SNS', () => {
    const inner = JSON.stringify({ Records: [s3Record('incoming/x.csv')] });
    const result = parseS3EventBody(JSON.stringify({ Type: 'Notification', Message: inner }));
    expect(result.kind).toBe(IntakeKind.OBJECTS);
  });

  it.each([
    ['not JSON', 'hello', /not JSON/],
    ['a JSON array', '[1,2]', /not an object/],
    ['another JSON message', '{"orderId":7}', /not an S3 event notification/],
    ['empty Records', '{"Records":[]}', /empty Records/],
    ['a non-S3 record', JSON.stringify({ Records: [{ eventSource: 'aws:sqs' }] }), /eventSource is "aws:sqs"/],
    [
      'a record without a key',
      JSON.stringify({ Records: [{ eventSource: 'aws:s3', s3: { bucket: { name: 'b' }, object: {} } }] }),
      /key is missing/,
    ],
    [
      'a key with broken encoding',
      JSON.stringify({ Records: [s3Record('bad%E0%A4%A.csv')] }),
      /not valid URL encoding/,
    ],
  ])('classifies %s as invalid with a reason, without throwing', (_name, body, reason) => {
    const result = parseS3EventBody(body);
    expect(result.kind).toBe(IntakeKind.INVALID);
    expect(result.kind === IntakeKind.INVALID && result.reason).toMatch(reason);
  });
});

describe('compareSequencers (docs/AWS-BEHAVIOUR.md: left-pad, then compare)', () => {
  it('orders sequencers of different lengths by padding the shorter with zeros', () => {
    expect(compareSequencers('FF', '0100')).toBeLessThan(0);
    expect(compareSequencers('0055AED6DCD9028200', '0055AED6DCD90281E5')).toBeGreaterThan(0);
    expect(compareSequencers('00AB', 'ab')).toBe(0);
  });
});

/** An S3 event as an EventBridge rule with an SQS target delivers it (S3 User Guide, "EventBridge event message structure"). */
const eventBridge = (detailType: string, detail: Record<string, unknown>) =>
  JSON.stringify({
    version: '0',
    id: '17793124-05d4-b198-2fde-7ededc63b103',
    'detail-type': detailType,
    source: 'aws.s3',
    account: '111122223333',
    time: '2021-11-12T00:00:00Z',
    region: 'ca-central-1',
    resources: ['arn:aws:s3:::in'],
    detail: { version: '0', bucket: { name: 'in' }, 'request-id': 'N4N7GDK58NMKJ12R', requester: '1', ...detail },
  });

describe('parseS3EventBody: S3 events delivered through EventBridge', () => {
  it.each([
    ['PutObject', 'ObjectCreated:Put'],
    ['POST Object', 'ObjectCreated:Post'],
    ['CopyObject', 'ObjectCreated:Copy'],
    ['CompleteMultipartUpload', 'ObjectCreated:CompleteMultipartUpload'],
  ])('Object Created (%s) maps onto the same object reference as a notification (%s)', (reason, eventName) => {
    const body = eventBridge('Object Created', {
      object: {
        key: 'incoming/2026+sales%2Breturns/caf%C3%A9.csv',
        size: 5,
        etag: 'b1946ac92492d2347c6235b4d2611184',
        'version-id': 'IYV3p45BT0ac8hjHg1houSdS1a.Mro8e',
        sequencer: '617f08299329d189',
      },
      reason,
    });
    expect(parseS3EventBody(body)).toEqual({
      kind: IntakeKind.OBJECTS,
      objects: [
        {
          bucket: 'in',
          key: 'incoming/2026 sales+returns/café.csv',
          eventName,
          eTag: 'b1946ac92492d2347c6235b4d2611184',
          size: 5,
          versionId: 'IYV3p45BT0ac8hjHg1houSdS1a.Mro8e',
          sequencer: '617f08299329d189',
          eventTime: '2021-11-12T00:00:00Z',
        },
      ],
    });
  });

  /*
   * How EventBridge encodes `detail.object.key` is NOT verified against AWS. What AWS's own material says:
   * - the S3 User Guide, "EventBridge event message structure" (ev-events), lists `detail.object` without
   *   saying how the key is encoded, and its examples use `example-key`, where no encoding shows; for
   *   notifications it says the key "is URL encoded" (notification-content-structure);
   * - Powertools for AWS Lambda (Python) decodes it as a notification key:
   *   `S3EventBridgeNotificationObject.key` returns `unquote_plus(self["key"])`
   *   (aws_lambda_powertools/utilities/data_classes/s3_event.py); its fixtures
   *   (tests/events/s3EventBridgeNotificationObjectCreatedEvent.json) hold keys no encoding changes;
   * - Powertools for AWS Lambda (TypeScript)'s parser (packages/parser/src/schemas/s3.ts) and
   *   @types/aws-lambda 8.10.164 (trigger/s3-event-notification.d.ts) type it as a plain string.
   * rerun follows the one AWS-maintained decoder found (Powertools Python): a `+` is a space, `%2B` a plus.
   * Should EventBridge send raw keys, a key with a `+` would be read with a space and skipped as
   * "input no longer exists" (classified, not lost: `rerun reprocess` plans it from the listings).
   */
  it('decodes the key as a notification key is (form encoding, as Powertools for AWS Lambda (Python) does; unverified against AWS)', () => {
    const body = eventBridge('Object Created', {
      object: { key: 'incoming/a+b%2Bc%20d.csv', size: 1, etag: 'e' },
      reason: 'PutObject',
    });
    expect(parseS3EventBody(body)).toMatchObject({ objects: [{ key: 'incoming/a b+c d.csv' }] });
  });

  it.each([
    ['Permanently Deleted', 'DeleteObject', 'ObjectRemoved:Delete'],
    ['Delete Marker Created', 'DeleteObject', 'ObjectRemoved:DeleteMarkerCreated'],
    ['Permanently Deleted', 'Lifecycle Expiration', 'LifecycleExpiration:Delete'],
    ['Delete Marker Created', 'Lifecycle Expiration', 'LifecycleExpiration:DeleteMarkerCreated'],
  ])(
    'Object Deleted (%s, %s) is %s, which the worker acknowledges without writing',
    (deletionType, reason, eventName) => {
      const body = eventBridge('Object Deleted', {
        object: { key: 'incoming/a.csv', sequencer: '617f0837b476e463' },
        reason,
        'deletion-type': deletionType,
      });
      expect(parseS3EventBody(body)).toEqual({
        kind: IntakeKind.OBJECTS,
        objects: [
          {
            bucket: 'in',
            key: 'incoming/a.csv',
            eventName,
            sequencer: '617f0837b476e463',
            eventTime: '2021-11-12T00:00:00Z',
          },
        ],
      });
    },
  );

  it('another S3 detail type (a restore, a tag change) names no new content: EventBridge:<detail-type>', () => {
    const body = eventBridge('Object Tags Added', { object: { key: 'incoming/a.csv', etag: 'e' } });
    const result = parseS3EventBody(body);
    expect(result.kind).toBe(IntakeKind.OBJECTS);
    if (result.kind === IntakeKind.OBJECTS) expect(result.objects[0]?.eventName).toBe('EventBridge:Object Tags Added');
  });

  it('an EventBridge S3 event without bucket or key is a classified failure, never a throw', () => {
    expect(parseS3EventBody(eventBridge('Object Created', {}))).toEqual({
      kind: IntakeKind.INVALID,
      reason: 'EventBridge S3 event "Object Created" has no detail.bucket / detail.object',
    });
    expect(parseS3EventBody(eventBridge('Object Created', { object: { key: '' } }))).toMatchObject({
      kind: IntakeKind.INVALID,
      reason: 'EventBridge S3 event: detail.object.key is missing',
    });
    expect(parseS3EventBody(eventBridge('Object Created', { object: { key: '%E0%A4%A' } }))).toMatchObject({
      kind: IntakeKind.INVALID,
    });
  });

  it('an EventBridge event from another source is still "not an S3 event"', () => {
    const body = JSON.stringify({
      source: 'aws.ec2',
      'detail-type': 'EC2 Instance State-change Notification',
      detail: {},
    });
    expect(parseS3EventBody(body).kind).toBe(IntakeKind.INVALID);
  });
});
