import { describe, expect, it } from 'vitest';
import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';

describe('mapWithConcurrency', () => {
  it('never runs more than the limit at once and keeps results in order', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapWithConcurrency([5, 1, 4, 2, 3, 0], 2, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n));
      running--;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 0]);
    expect(peak).toBe(2);
  });
  it('starts no task after one has rejected (p-map starts 3 of 20 here; an unstopped loop starts all 20)', async () => {
    let started = 0;
    const run = mapWithConcurrency(
      Array.from({ length: 20 }, (_, i) => i),
      2,
      async (n) => {
        started++;
        await new Promise((r) => setTimeout(r, 5));
        if (n === 1) throw new Error('task 1 failed');
        return n;
      },
    );
    await expect(run).rejects.toThrow('task 1 failed');
    // Let any lane that would go on run its course.
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toBe(3);
  });

  it('starts 3 of 20 with concurrency 3 when the first task rejects, as p-map does', async () => {
    const started: number[] = [];
    const run = mapWithConcurrency(
      Array.from({ length: 20 }, (_, i) => i),
      3,
      async (n) => {
        started.push(n);
        if (n === 0) throw new Error('task 0 failed');
        await new Promise((r) => setTimeout(r, 5));
        return n;
      },
    );
    await expect(run).rejects.toThrow('task 0 failed');
    // The two lanes still running finish their task; neither may take another one.
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toEqual([0, 1, 2]);
  });

  it('rejects a concurrency below 1', async () => {
    await expect(mapWithConcurrency([1], 0, async (n) => n)).rejects.toThrow(RangeError);
  });
});
