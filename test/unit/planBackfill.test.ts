import { describe, expect, it } from 'vitest';
import { BackfillMode, parseBackfillMode, planBackfill } from '../../app/backfill/planBackfill.js';
import { isProgressStep, renderProgressBar } from '../../app/common/progressBar.js';
import { RateLimiter } from '../../app/common/RateLimiter.js';
import type { PartitionStatus, PartitionVerdict } from '../../app/partition/judgePartition.js';
import { formatStatusCounts, formatStatusTable } from '../../app/status/formatStatusTable.js';

const verdict = (day: string, status: PartitionStatus): PartitionVerdict => ({
  day,
  status,
  reason: `${status} because`,
  lineageHash: `h-${day}`,
  inputs: 2,
  quarantineInputs: 0,
});
const partitions = [
  verdict('2026-01-04', 'stale'),
  verdict('2026-01-01', 'published'),
  verdict('2026-01-02', 'missing'),
  verdict('2026-01-03', 'invalid'),
];

describe('planBackfill', () => {
  it('selects by mode, in day order, with the planned lineage hash', () => {
    const days = (mode: BackfillMode) => planBackfill(partitions, mode).tasks.map((t) => t.day);
    expect(days(BackfillMode.MISSING)).toEqual(['2026-01-02']);
    expect(days(BackfillMode.STALE)).toEqual(['2026-01-02', '2026-01-03', '2026-01-04']);
    expect(days(BackfillMode.ALL)).toEqual(['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04']);
    expect(planBackfill(partitions, BackfillMode.STALE).tasks[0]).toEqual({
      day: '2026-01-02',
      lineageHash: 'h-2026-01-02',
      status: 'missing',
      reason: 'missing because',
    });
    expect(planBackfill(partitions, BackfillMode.ALL).counts).toEqual({
      published: 1,
      missing: 1,
      stale: 1,
      invalid: 1,
      incomplete: 0,
    });
  });

  it('treats an incomplete day (inputs without outputs) as not done: stale and all plan it, missing does not', () => {
    const incomplete = [
      { ...partitions[0], day: '2026-01-09', status: 'incomplete' as const, reason: 'c.csv pending' },
    ];
    expect(planBackfill(incomplete as typeof partitions, BackfillMode.STALE).tasks.map((t) => t.day)).toEqual([
      '2026-01-09',
    ]);
    expect(planBackfill(incomplete as typeof partitions, BackfillMode.ALL).tasks).toHaveLength(1);
    expect(planBackfill(incomplete as typeof partitions, BackfillMode.MISSING).tasks).toEqual([]);
  });

  it('plans nothing when everything is published, whatever the mode but all', () => {
    const done = partitions.map((p) => ({ ...p, status: 'published' as const }));
    expect(planBackfill(done, BackfillMode.STALE).tasks).toEqual([]);
    expect(planBackfill(done, BackfillMode.MISSING).tasks).toEqual([]);
  });

  it('reads --mode strictly', () => {
    expect(parseBackfillMode('stale')).toBe('stale');
    expect(parseBackfillMode('failed')).toBeUndefined();
    expect(() => planBackfill(partitions, 'failed' as BackfillMode)).toThrow(/unknown backfill mode/);
  });
});

describe('RateLimiter', () => {
  it('spaces work to the average rate on an injected clock, without building a burst while idle', async () => {
    let now = 1000;
    const waits: number[] = [];
    const limiter = new RateLimiter({
      perSecond: 10,
      now: () => now,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
      },
    });
    await limiter.take(10); // first batch at once
    await limiter.take(10); // the next 10 after one second
    await limiter.take(1);
    expect(waits).toEqual([1000, 1000]);
    now += 60_000; // idle for a minute
    await limiter.take(5);
    await limiter.take(1);
    expect(waits).toEqual([1000, 1000, 500]);
    expect(() => new RateLimiter({ perSecond: 0 })).toThrow(/positive/);
  });
});

describe('status and progress text', () => {
  it('renders the status table and the summary line', () => {
    const table = formatStatusTable(partitions);
    expect(table.split('\n')[0]).toMatch(/^PARTITION\s+STATUS\s+INPUTS\s+REASON$/);
    expect(table).toContain('dt=2026-01-03  invalid    2       invalid because\n');
    expect(formatStatusCounts({ published: 28, missing: 1, stale: 1, invalid: 0, incomplete: 0 })).toBe(
      '30 partitions: 28 published, 1 missing, 1 stale, 0 invalid',
    );
    expect(formatStatusTable([])).toBe('No partition in the window.\n');
  });

  it('draws a bounded progress bar', () => {
    expect(renderProgressBar(15, 30, 20)).toBe('[##########..........] 15/30 (50%)');
    expect(renderProgressBar(0, 0, 4)).toBe('[####] 0/0 (100%)');
    expect(renderProgressBar(40, 30, 4)).toBe('[####] 40/30 (100%)');
    expect([1, 2, 3, 29, 30].map((n) => isProgressStep(n, 30))).toEqual([false, false, true, false, true]);
    expect(isProgressStep(1, 3)).toBe(true);
  });
});
