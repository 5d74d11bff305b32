import { describe, expect, it } from 'vitest';
import { compareSequencers, decodeS3EventKey, IntakeKind, parseS3EventBody } from '../../src/intake/parseS3Event.js';

const s3Record = (key: string, extra: Record<string, unknown> = {}) => ({
  eventVersion: '2.1',
  eventSource: 'aws:s3',
  awsRegion: 'us-east-1',
  eventName: 'ObjectCreated:Put',
  s3: {
    bucket: { name: 'in' },
    object: { key, size: 12, eTag: '0123abcd', sequencer: '0055AED6DCD90281E5', ...extra },
  },
});

describe('decodeS3EventKey (AWS-SEMANTICS: keys are form-URL-encoded)', () => {
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

describe('compareSequencers (AWS-SEMANTICS: left-pad, then compare)', () => {
  it('orders sequencers of different lengths by padding the shorter with zeros', () => {
    expect(compareSequencers('FF', '0100')).toBeLessThan(0);
    expect(compareSequencers('0055AED6DCD9028200', '0055AED6DCD90281E5')).toBeGreaterThan(0);
    expect(compareSequencers('00AB', 'ab')).toBe(0);
  });
});
