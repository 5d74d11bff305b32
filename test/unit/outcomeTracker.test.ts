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
  it('shows a requeued delivery as retrying, never as failed, even with no receives known', () => {
    const tracker = new OutcomeTracker();
    tracker.add(outcome({ status: 'requeued', reason: '761 of 764 records requeued', source, requeuedRecords: 761 }));
    expect(tracker.rows()).toMatchObject([{ subject: 's3://in/incoming/a.csv', status: 'retrying' }]);
    expect(tracker.deliveryState(outcome({ status: 'requeued', source }))).toBe('retrying');
    expect(tracker.deliveries()).toEqual({ processed: 0, skipped: 0, failed: 0, requeued: 1 });
  });

  it('counts an object by its final outcome: a failed attempt then a processed retry is one processed object', () => {
    const tracker = new OutcomeTracker();
    tracker.add(outcome({ status: 'failed', reason: 'not started: function deadline is near', source }));
    tracker.add(outcome({ status: 'processed', source }));
    expect(tracker.counts()).toEqual({ processed: 1, skipped: 0, failed: 0, retrying: 0 });
    expect(tracker.rows()).toEqual([
      { subject: 's3://in/incoming/a.csv', status: 'processed', reason: 'output created', attempts: 2 },
    ]);
  });

  it('joins an attempt that named only its message id to the object the message names later', () => {
    const tracker = new OutcomeTracker();
    tracker.add(outcome({ status: 'failed', reason: 'not started: function deadline is near' }));
    tracker.add(outcome({ status: 'processed', source }));
    tracker.add(outcome({ messageId: 'm-2', status: 'failed', reason: 'not an S3 event: x' }));
    expect(tracker.counts()).toEqual({ processed: 1, skipped: 0, failed: 1, retrying: 0 });
    expect(tracker.rows().map((r) => [r.subject, r.attempts])).toEqual([
      ['s3://in/incoming/a.csv', 2],
      ['message m-2', 1],
    ]);
  });

  it('a duplicate delivery skipped as done never hides an output written in the session (issue 20)', () => {
    const tracker = new OutcomeTracker();
    const b = { bucket: 'in', key: 'incoming/b.csv' };
    tracker.add(outcome({ messageId: 'm-1', status: 'processed', reason: 'output created', source, outputKey: 'o/a' }));
    tracker.add(
      outcome({ messageId: 'm-2', status: 'processed', reason: 'output created', source: b, outputKey: 'o/b' }),
    );
    tracker.add(outcome({ messageId: 'm-3', status: 'skipped', reason: 'already done: output current', source }));
    tracker.add(outcome({ messageId: 'm-4', status: 'skipped', reason: 'already done: output current', source: b }));
    // Two outputs written: two processed objects, whatever came after; the deliveries are counted apart.
    expect(tracker.counts()).toEqual({ processed: 2, skipped: 0, failed: 0, retrying: 0 });
    expect(tracker.deliveries()).toEqual({ processed: 2, skipped: 2, failed: 0, requeued: 0 });
    expect(tracker.rows()).toEqual([
      {
        subject: 's3://in/incoming/a.csv',
        status: 'processed',
        reason: 'output created',
        outputKey: 'o/a',
        attempts: 2,
      },
      {
        subject: 's3://in/incoming/b.csv',
        status: 'processed',
        reason: 'output created',
        outputKey: 'o/b',
        attempts: 2,
      },
    ]);
    // An object only ever skipped stays skipped.
    tracker.add(
      outcome({ messageId: 'm-5', status: 'skipped', reason: 'unsupported', source: { bucket: 'in', key: 'x.txt' } }),
    );
    expect(tracker.counts()).toMatchObject({ processed: 2, skipped: 1 });
  });

  it('the final state counts: a failure on the last receive after an output is failed; one with receives left is retrying', () => {
    const maxReceiveCountOf = (id: string) => (id.startsWith('known') ? 3 : undefined);
    const tracker = new OutcomeTracker({ maxReceiveCountOf });
    const b = { bucket: 'in', key: 'incoming/b.csv' };
    const c = { bucket: 'in', key: 'incoming/c.csv' };
    const d = { bucket: 'in', key: 'incoming/d.csv' };
    // a: processed, then the next content fails on its last receive (3 of 3): the object ends failed.
    tracker.add(outcome({ messageId: 'known-1', status: 'processed', source }));
    tracker.add(outcome({ messageId: 'known-2', status: 'failed', reason: 'boom', receiveCount: 3, source }));
    // b: a ledger conflict on receive 1 of 3, and the retry went to another consumer: retrying.
    tracker.add(
      outcome({
        messageId: 'known-3',
        status: 'failed',
        reason: 'effect in progress elsewhere',
        receiveCount: 1,
        source: b,
      }),
    );
    // c: processed, then a duplicate's transient failure (receive 1 of 3): still processed.
    tracker.add(outcome({ messageId: 'known-4', status: 'processed', source: c }));
    tracker.add(outcome({ messageId: 'known-5', status: 'failed', reason: 'conflict', receiveCount: 1, source: c }));
    // d: the queue's maxReceiveCount is unknown for this message: taken as final (never under-reported).
    tracker.add(outcome({ messageId: 'other-1', status: 'failed', reason: 'boom', receiveCount: 1, source: d }));
    expect(tracker.rows().map((r) => [r.subject, r.status, r.reason])).toEqual([
      ['s3://in/incoming/a.csv', 'failed', 'boom'],
      ['s3://in/incoming/b.csv', 'retrying', 'effect in progress elsewhere'],
      ['s3://in/incoming/c.csv', 'processed', 'output created'],
      ['s3://in/incoming/d.csv', 'failed', 'boom'],
    ]);
    expect(tracker.counts()).toEqual({ processed: 1, skipped: 0, failed: 2, retrying: 1 });
    expect(tracker.deliveries()).toEqual({ processed: 2, skipped: 0, failed: 4, requeued: 0 });
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
