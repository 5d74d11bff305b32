import { describe, expect, it } from 'vitest';
import { describeMessage } from '../../app/redrive/describeMessage.js';
import { isMoveTaskUnsupported } from '../../app/redrive/moveTaskSupport.js';
import {
  failureRecordKey,
  giveUpReason,
  parseFailureRecord,
  queueNameOfArn,
} from '../../src/failures/failureRecord.js';

describe('failure records', () => {
  it('are written when the worker gives up: non-retryable, or the last receive the queue allows', () => {
    expect(giveUpReason({ retryable: false, receiveCount: 1 }, 5)).toBe('non-retryable');
    expect(giveUpReason({ retryable: true, receiveCount: 5 }, 5)).toBe('last-receive');
    expect(giveUpReason({ receiveCount: 6 }, 5)).toBe('last-receive');
    expect(giveUpReason({ retryable: true, receiveCount: 4 }, 5)).toBeUndefined();
    expect(giveUpReason({ retryable: true, receiveCount: 40 }, undefined)).toBeUndefined(); // no DLQ: retried forever
  });

  it('live at a deterministic key per queue and message, and parse back only when they are one', () => {
    expect(failureRecordKey('failures/', 'rerun-normalize-queue', 'm-1')).toBe(
      'failures/rerun-normalize-queue/m-1.json',
    );
    expect(queueNameOfArn('arn:aws:sqs:us-east-1:123456789012:rerun-summarize-queue.fifo')).toBe(
      'rerun-summarize-queue.fifo',
    );
    expect(parseFailureRecord(Buffer.from('{"schema":"rerun.failure/1","reason":"x","messageId":"m"}'))).toMatchObject({
      reason: 'x',
    });
    expect(parseFailureRecord(Buffer.from('{"reason":"x"}'))).toBeUndefined();
    expect(parseFailureRecord(Buffer.from('garbage'))).toBeUndefined();
  });
});

describe('describeMessage', () => {
  it('names the object of an S3 event (form-decoded key), the partition of a task, or an excerpt', () => {
    const s3 = (key: string) => JSON.stringify({ Records: [{ s3: { bucket: { name: 'in' }, object: { key } } }] });
    expect(describeMessage(s3('incoming/2026+sales/caf%C3%A9.csv'))).toBe('s3://in/incoming/2026 sales/café.csv');
    expect(describeMessage('{"type":"summarize","partition":"dt=2026-01-05"}')).toBe('summarize dt=2026-01-05');
    expect(describeMessage('{"type":"summarize","window":"yesterday","at":"2026-01-06T01:15:00Z"}')).toBe(
      'summarize yesterday of 2026-01-06T01:15:00Z',
    );
    expect(describeMessage('{"Event":"s3:TestEvent"}')).toBe('s3:TestEvent');
    expect(describeMessage(`{"orderId":42,"pad":"${'x'.repeat(100)}"}`)).toHaveLength(60);
    expect(describeMessage('')).toBe('(empty body)');
  });
});

describe('isMoveTaskUnsupported', () => {
  const error = (name: string, status: number, message = '') =>
    Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });

  it('detects an endpoint without message move tasks from its answer', () => {
    // moto 5.2.1: an HTML 500 page the SDK cannot parse.
    expect(isMoveTaskUnsupported(error('SyntaxError', 500, 'Unexpected token <'))).toBe(true);
    expect(isMoveTaskUnsupported(error('NotImplemented', 501))).toBe(true);
    expect(isMoveTaskUnsupported(error('UnknownOperationException', 400))).toBe(true);
    expect(isMoveTaskUnsupported(error('AccessDeniedException', 403))).toBe(true);
  });

  it('lets real failures through', () => {
    expect(isMoveTaskUnsupported(error('InternalError', 500, 'We encountered an internal error'))).toBe(false);
    expect(isMoveTaskUnsupported(error('ResourceNotFoundException', 400))).toBe(false);
    expect(isMoveTaskUnsupported(new Error('socket hang up'))).toBe(false);
  });
});
