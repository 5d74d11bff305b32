import { describe, expect, it } from 'vitest';
import { nextDailyOccurrence, scheduledSummaryMessage } from '../../app/partition/localSchedule.js';
import { parseSummaryTask, summaryTaskEnvelope } from '../../app/partition/summaryTask.js';

describe('summary task messages', () => {
  it('name a partition, with a deterministic identity per (partition, lineage)', () => {
    const e = summaryTaskEnvelope('2026-01-05', 'abc');
    expect(e).toEqual({
      body: '{"lineageHash":"abc","partition":"dt=2026-01-05","type":"summarize"}',
      groupId: 'dt=2026-01-05',
      deduplicationId: 'dt=2026-01-05:abc',
    });
    expect(summaryTaskEnvelope('2026-01-05', 'abc')).toEqual(e);
    expect(summaryTaskEnvelope('2026-01-05', 'abd').deduplicationId).not.toBe(e.deduplicationId);
    // Planned with the inputs' coverage: same outputs, another coverage (an input arrived or was
    // dead-lettered) is another task, which SQS FIFO must not drop as a repeat; within 128 characters.
    const h = 'a'.repeat(64);
    const covered = summaryTaskEnvelope('2026-01-05', h, 'c'.repeat(64));
    expect(covered.deduplicationId).toBe(`dt=2026-01-05:${'a'.repeat(32)}:${'c'.repeat(32)}`);
    expect(summaryTaskEnvelope('2026-01-05', h, `d${'c'.repeat(63)}`).deduplicationId).not.toBe(
      covered.deduplicationId,
    );
    expect(covered.deduplicationId.length).toBeLessThanOrEqual(128);
    expect(parseSummaryTask(e.body)).toEqual({
      kind: 'task',
      day: '2026-01-05',
      origin: 'partition',
      plannedLineageHash: 'abc',
    });
  });

  it('resolve "yesterday" from the event time, never the worker clock; without one, from SentTimestamp', () => {
    expect(parseSummaryTask('{"type":"summarize","window":"yesterday","at":"2026-01-01T01:15:00Z"}')).toMatchObject({
      kind: 'task',
      day: '2025-12-31',
    });
    expect(
      parseSummaryTask('{"type":"summarize","window":"yesterday"}', Date.parse('2026-03-01T00:00:01Z')),
    ).toMatchObject({
      day: '2026-02-28',
      origin: 'yesterday of 2026-03-01T00:00:01.000Z (sent)',
    });
    // What the local schedule sends resolves like the stack's EventBridge message.
    const fired = nextDailyOccurrence(Date.parse('2026-01-05T02:00:00Z'), { hourUtc: 1, minuteUtc: 15 });
    expect(new Date(fired).toISOString()).toBe('2026-01-06T01:15:00.000Z');
    expect(parseSummaryTask(scheduledSummaryMessage(fired))).toMatchObject({ day: '2026-01-05' });
    expect(nextDailyOccurrence(Date.parse('2026-01-05T01:00:00Z'), { hourUtc: 1, minuteUtc: 15 })).toBe(
      Date.parse('2026-01-05T01:15:00Z'),
    );
  });

  it('reject anything else as invalid (not retryable), with the reason', () => {
    expect(parseSummaryTask('nope')).toMatchObject({ kind: 'invalid', reason: /not a JSON object/ });
    expect(parseSummaryTask('{"Records":[]}')).toMatchObject({ kind: 'invalid', reason: /type is undefined/ });
    expect(parseSummaryTask('{"type":"summarize","partition":"dt=2026-02-30"}')).toMatchObject({ kind: 'invalid' });
    expect(parseSummaryTask('{"type":"summarize","window":"yesterday","at":"soon"}')).toMatchObject({
      kind: 'invalid',
    });
    expect(parseSummaryTask('{"type":"summarize","window":"yesterday"}')).toMatchObject({ kind: 'invalid' });
    expect(parseSummaryTask('{"type":"summarize"}')).toMatchObject({ kind: 'invalid' });
  });
});
