import { describe, expect, it } from 'vitest';
import { grainLimits, largestFitting, windowFits } from '../../bench/windowGrains.js';

const sizing = { timeoutSeconds: 11, marginSeconds: 1, maxReceiveCount: 5, maxInputs: 5000 };
// 10 s an invocation, 10 ms an input, listings free: 1,000 inputs an invocation.
const costs = { listPageMs: 0, perInputMs: 10, perInputPartsMs: 10 };

describe("bench/windowGrains.ts: the largest window each grain reaches at a stage's sizing", () => {
  it('a direct window is bounded by one invocation, a window from parts by its receives and its largest part', () => {
    expect(windowFits(1000, 1, costs, sizing)).toBe(true);
    expect(windowFits(1001, 1, costs, sizing)).toBe(false);
    // 24 hours of at most 1,000 each, but 5 receives of 1,000 inputs: 5,000.
    expect(windowFits(5000, 24, costs, sizing)).toBe(true);
    expect(windowFits(5001, 24, costs, sizing)).toBe(false);
    expect(grainLimits(costs, sizing).map((g) => [g.grain, g.largestDirect, g.largestWithParts])).toEqual([
      ['hourly', 1000, 1000],
      ['daily', 1000, 5000],
      ['weekly', 1000, 5000],
      ['monthly', 1000, 5000],
    ]);
  });

  it('maxInputs bounds a window and each of its parts; each receive lists the whole window again', () => {
    const small = { ...sizing, maxInputs: 100 };
    expect(grainLimits(costs, small).map((g) => [g.grain, g.largestDirect, g.largestWithParts])).toEqual([
      ['hourly', 100, 100],
      ['daily', 100, 2400],
      ['weekly', 100, 700],
      ['monthly', 100, 3000],
    ]);
    // A listing page of 1 s: a window of 3,000 keys spends 3 s of each receive on its listing, so its
    // 5 receives read 5 x 7 s = 35 s of inputs, enough for 3,000 x 10 ms; 3,001 keys take a 4th page.
    const listed = { ...costs, listPageMs: 1000 };
    expect(windowFits(3000, 24, listed, sizing)).toBe(true);
    expect(windowFits(3001, 24, listed, sizing)).toBe(false);
    expect(largestFitting((n) => windowFits(n, 24, listed, sizing))).toBe(3000);
  });

  it('largestFitting finds the last n that fits, and 0 when none does', () => {
    expect(largestFitting((n) => n <= 12_345)).toBe(12_345);
    expect(largestFitting(() => false)).toBe(0);
  });
});
