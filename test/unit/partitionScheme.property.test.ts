import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { windowsIntersecting } from '../../src/partitions/mapWindows.js';
import { partitionScheme, type TimePartitionScheme } from '../../src/partitions/partitionScheme.js';
import type { TimeGrain } from '../../src/partitions/partitionSpec.js';
import type { TimeWindow } from '../../src/partitions/timeWindow.js';

/** Each grain with every template that can express it. */
const LAYOUTS: ReadonlyArray<readonly [TimeGrain, string]> = [
  ['hourly', 'year={yyyy}/month={MM}/day={dd}/hour={HH}'],
  ['hourly', '{yyyy}/{MM}/{dd}/{HH}'],
  ['daily', 'dt={yyyy}-{MM}-{dd}'],
  ['daily', '{yyyy}/{MM}/{dd}'],
  ['daily', 'year={yyyy}/month={MM}/day={dd}/hour={HH}'],
  ['weekly', '{yyyy}-W{ww}'],
  ['weekly', 'dt={yyyy}-{MM}-{dd}'],
  ['weekly', '{yyyy}/{MM}/{dd}/{HH}'],
  ['monthly', 'month={yyyy}-{MM}'],
  ['monthly', '{yyyy}/{MM}/{dd}'],
  ['monthly', 'year={yyyy}/month={MM}/day={dd}/hour={HH}'],
];

const schemes = LAYOUTS.map(([grain, template]) => partitionScheme({ kind: 'time', grain, template }));

/** Instants from 1970 to 2200, hours and leap days included. */
const instant = fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) - 1 });

/** A key written under the window of the template's own finest field that holds `at`. */
function keyAt(scheme: TimePartitionScheme, at: number, leaf: string): string {
  const { template } = scheme.spec;
  const finest: TimeGrain = template.includes('{HH}')
    ? 'hourly'
    : template.includes('{dd}')
      ? 'daily'
      : template.includes('{ww}')
        ? 'weekly'
        : 'monthly';
  const unit = partitionScheme({ kind: 'time', grain: finest, template });
  const [prefix] = unit.prefixesOf(unit.windowAt(at));
  return `${prefix}${leaf}`;
}

describe('partition schemes: properties over the calendar', () => {
  it('round-trips name -> window -> name, and every instant falls in its window', () => {
    fc.assert(
      fc.property(fc.constantFrom(...schemes), instant, (scheme, at) => {
        const window = scheme.windowAt(at);
        expect(window.start).toBeLessThanOrEqual(at);
        expect(at).toBeLessThan(window.end);
        expect(scheme.parseWindow(window.name)).toEqual(window);
      }),
    );
  });

  it('round-trips window -> key -> window: a key written under a window is read back in it, under its prefixes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...schemes),
        instant,
        fc.stringMatching(/^[a-z0-9._-]{1,12}$/),
        (scheme, at, leaf) => {
          const window = scheme.windowAt(at);
          const key = keyAt(scheme, at, leaf);
          expect(scheme.windowOfKey(key)).toEqual({ window });
          expect(scheme.prefixesOf(window).some((prefix) => key.startsWith(prefix))).toBe(true);
        },
      ),
    );
  });

  it('lists a key under no prefix of a window it is not in', () => {
    fc.assert(
      fc.property(fc.constantFrom(...schemes), instant, instant, (scheme, at, other) => {
        const window = scheme.windowAt(at);
        const key = keyAt(scheme, other, 'x');
        const listed = scheme.prefixesOf(window).some((prefix) => key.startsWith(prefix));
        const reading = scheme.windowOfKey(key);
        // A prefix may hold keys of other windows (it narrows), but the key's reading never lies.
        if (!listed) expect(reading).not.toEqual({ window });
        if ('window' in reading && reading.window.name === window.name) expect(listed).toBe(true);
      }),
    );
  });

  it('maps a window onto finer windows that cover its interval exactly, with no gap and no overlap', () => {
    const pairs: ReadonlyArray<readonly [TimeGrain, TimeGrain]> = [
      ['hourly', 'daily'],
      ['hourly', 'weekly'],
      ['hourly', 'monthly'],
      ['daily', 'weekly'],
      ['daily', 'monthly'],
      ['daily', 'daily'],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...pairs), instant, ([finer, coarser], at) => {
        const up = partitionScheme({
          kind: 'time',
          grain: finer,
          template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}',
        });
        const down = partitionScheme({ kind: 'time', grain: coarser, template: 'dt={yyyy}-{MM}-{dd}' });
        const window = down.windowAt(at);
        const mapped = windowsIntersecting(up, window) as TimeWindow[];
        expect(mapped[0]?.start).toBe(window.start);
        expect(mapped.at(-1)?.end).toBe(window.end);
        for (let i = 1; i < mapped.length; i++) expect(mapped[i]?.start).toBe(mapped[i - 1]?.end);
        // And the other way: each finer window maps back onto exactly this one.
        for (const w of mapped) expect(windowsIntersecting(down, w)).toEqual([window]);
      }),
    );
  });

  it('maps a window onto the coarser windows that hold it, which cover it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<readonly [TimeGrain, TimeGrain]>(
          ['monthly', 'daily'],
          ['monthly', 'weekly'],
          ['weekly', 'daily'],
        ),
        instant,
        ([coarser, finer], at) => {
          const up = partitionScheme({ kind: 'time', grain: coarser, template: 'dt={yyyy}-{MM}-{dd}' });
          const window = partitionScheme({ kind: 'time', grain: finer, template: 'dt={yyyy}-{MM}-{dd}' }).windowAt(at);
          const mapped = windowsIntersecting(up, window) as TimeWindow[];
          expect(mapped[0]?.start).toBeLessThanOrEqual(window.start);
          expect(mapped.at(-1)?.end).toBeGreaterThanOrEqual(window.end);
          expect(mapped.length).toBeLessThanOrEqual(2);
        },
      ),
    );
  });

  it('lists a range as consecutive windows from its first to its last', () => {
    fc.assert(
      fc.property(fc.constantFrom(...schemes), instant, fc.integer({ min: 0, max: 60 }), (scheme, at, steps) => {
        const from = scheme.windowAt(at);
        const to = scheme.next(from, steps);
        const range = scheme.windowsBetween(from.name, to.name);
        expect(range).toHaveLength(steps + 1);
        expect(range[0]).toEqual(from);
        expect(range.at(-1)).toEqual(to);
        for (let i = 1; i < range.length; i++) expect(range[i]?.start).toBe(range[i - 1]?.end);
      }),
    );
  });
});
