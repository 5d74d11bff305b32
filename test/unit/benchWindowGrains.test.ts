import { describe, expect, it } from 'vitest';
import {
  defaultWindowStageSizing,
  grainLimits,
  largestFitting,
  windowFits,
  windowFromParts,
} from '../../bench/windowGrains.js';

const sizing = { timeoutSeconds: 11, marginSeconds: 1, maxInputs: 5000 };
// 10 s an invocation, 10 ms an input, listings free: 1,000 inputs an invocation.
const costs = { listPageMs: 0, perInputMs: 10, perInputPartsMs: 10 };

describe("bench/windowGrains.ts: the largest window each grain reaches at a stage's sizing", () => {
  it('a direct window is bounded by one invocation, a window from parts by its largest part', () => {
    expect(windowFits(1000, 1, costs, sizing)).toBe(true);
    expect(windowFits(1001, 1, costs, sizing)).toBe(false);
    // 24 hours of at most 1,000 each.
    expect(windowFits(24_000, 24, costs, sizing)).toBe(true);
    expect(windowFits(24_001, 24, costs, sizing)).toBe(false);
    expect(grainLimits(costs, sizing).map((g) => [g.grain, g.largestDirect, g.largestWithParts])).toEqual([
      ['hourly', 1000, 1000],
      ['daily', 1000, 24_000],
      ['weekly', 1000, 7000],
      ['monthly', 1000, 30_000],
    ]);
  });

  it('maxInputs bounds a window and each of its parts; each invocation lists the whole window again', () => {
    const small = { ...sizing, maxInputs: 100 };
    expect(grainLimits(costs, small).map((g) => [g.grain, g.largestDirect, g.largestWithParts])).toEqual([
      ['hourly', 100, 100],
      ['daily', 100, 2400],
      ['weekly', 100, 700],
      ['monthly', 100, 3000],
    ]);
    // A listing page of 1 s: a window of 7,000 keys spends 7 s of each invocation on its listing and
    // reads 300 inputs in the other 3, enough for a part of 292; at 7,001 keys an 8th page leaves 2 s.
    const listed = { ...costs, listPageMs: 1000 };
    expect(largestFitting((n) => windowFits(n, 24, listed, sizing))).toBe(7000);
    expect(windowFromParts(7000, 24, listed, sizing)).toMatchObject({
      built: true,
      invocations: 24,
      listingSeconds: 7,
    });
    // At 9,000 keys, 9 s of listing leave 100 inputs an invocation, less than a part.
    expect(windowFromParts(9000, 24, listed, sizing)).toMatchObject({
      built: false,
      why: 'a part holds 375 inputs, above the 100 an invocation reads after the listing',
    });
    expect(windowFromParts(240_000, 24, costs, sizing)).toMatchObject({
      built: false,
      why: 'a part holds 10000 inputs, above maxInputs 5000',
    });
  });

  it("a window stage's defaults build a day of a million inputs from its hours (issue 31)", () => {
    // The costs of the bench's fresh-clone run on 2026-12-07 (bench/README.md, "windows"): 11.74 ms an
    // input from parts behind the modelled latency, and at load 8, 18.9 ms.
    const measured = { listPageMs: 60, perInputMs: 4.16, perInputPartsMs: 11.74 };
    const defaults = defaultWindowStageSizing();
    expect(windowFromParts(1_000_000, 24, measured, defaults)).toMatchObject({ built: true, invocations: 15 });
    expect(windowFromParts(1_000_000, 24, { ...measured, perInputPartsMs: 18.9 }, defaults)).toMatchObject({
      built: true,
      invocations: 23,
    });
    // The sizing before (300 s, maxInputs 20,000) refused it.
    expect(
      windowFromParts(1_000_000, 24, measured, { timeoutSeconds: 300, marginSeconds: 5, maxInputs: 20_000 }),
    ).toMatchObject({ built: false, why: 'a part holds 41667 inputs, above maxInputs 20000' });
  });

  it('largestFitting finds the last n that fits, and 0 when none does', () => {
    expect(largestFitting((n) => n <= 12_345)).toBe(12_345);
    expect(largestFitting(() => false)).toBe(0);
  });
});
