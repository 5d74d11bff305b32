import { describe, expect, it } from 'vitest';
import { OutcomeTracker } from '../../app/dev/OutcomeTracker.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';

const source = { bucket: 'in', key: 'incoming/a.csv' };
const outcome = (o: Partial<RecordOutcome>): RecordOutcome => ({
  messageId: 'm-1',
  status: 'processed',
  reason: 'output created',
  ...o,
});

describe('OutcomeTracker', () => {
  it('counts an object by its final outcome: a failed attempt then a processed retry is one processed object', () => {
    const tracker = new OutcomeTracker();
    tracker.add(outcome({ status: 'failed', reason: 'not started: function deadline is near', source }));
    tracker.add(outcome({ status: 'processed', source }));
    expect(tracker.counts()).toEqual({ processed: 1, skipped: 0, failed: 0 });
    expect(tracker.rows()).toEqual([
      { subject: 's3://in/incoming/a.csv', status: 'processed', reason: 'output created', attempts: 2 },
    ]);
  });

  it('joins an attempt that named only its message id to the object the message names later', () => {
    const tracker = new OutcomeTracker();
    tracker.add(outcome({ status: 'failed', reason: 'not started: function deadline is near' }));
    tracker.add(outcome({ status: 'processed', source }));
    tracker.add(outcome({ messageId: 'm-2', status: 'failed', reason: 'not an S3 event: x' }));
    expect(tracker.counts()).toEqual({ processed: 1, skipped: 0, failed: 1 });
    expect(tracker.rows().map((r) => [r.subject, r.attempts])).toEqual([
      ['s3://in/incoming/a.csv', 2],
      ['message m-2', 1],
    ]);
  });

  it('names a later outcome without an object by the object its message named before', () => {
    const tracker = new OutcomeTracker();
    tracker.add(outcome({ status: 'failed', reason: 'boom', source }));
    tracker.add(outcome({ status: 'failed', reason: 'not started: an earlier record of this FIFO batch failed' }));
    expect(tracker.rows()).toEqual([
      {
        subject: 's3://in/incoming/a.csv',
        status: 'failed',
        reason: 'not started: an earlier record of this FIFO batch failed',
        attempts: 2,
      },
    ]);
  });
});
