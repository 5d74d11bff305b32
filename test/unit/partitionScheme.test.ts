import { describe, expect, it } from 'vitest';
import { RerunError } from '../../src/errors.js';
import {
  PartitionKeysInvalidError,
  PartitionTemplateInvalidError,
  WindowMappingUnsupportedError,
  WindowNameInvalidError,
  WindowRangeReversedError,
  WindowRangeTooLargeError,
} from '../../src/partitions/errors.js';
import { windowsIntersecting } from '../../src/partitions/mapWindows.js';
import { MAX_RANGE_WINDOWS, partitionScheme } from '../../src/partitions/partitionScheme.js';
import type { TimeGrain } from '../../src/partitions/partitionSpec.js';

const HIVE_HOURS = 'year={yyyy}/month={MM}/day={dd}/hour={HH}';
const daily = partitionScheme({ kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' });
const hourly = partitionScheme({ kind: 'time', grain: 'hourly', template: HIVE_HOURS });
const weekly = partitionScheme({ kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' });
const monthly = partitionScheme({ kind: 'time', grain: 'monthly', template: '{yyyy}/{MM}/{dd}' });
const time = (grain: TimeGrain, template: string) => partitionScheme({ kind: 'time', grain, template });

describe('partition schemes: which window a key is in', () => {
  it('reads the window of a key from each layout, relative to the stage prefix', () => {
    expect(daily.windowOfKey('dt=2026-12-05/a.csv')).toMatchObject({ window: { name: '2026-12-05' } });
    expect(hourly.windowOfKey('year=2026/month=12/day=05/hour=13/a.csv')).toMatchObject({
      window: { name: '2026-12-05T13' },
    });
    expect(weekly.windowOfKey('2026-W49/a.csv')).toMatchObject({ window: { name: '2026-W49' } });
    expect(monthly.windowOfKey('2026/12/05/a.csv')).toMatchObject({ window: { name: '2026-12' } });
    expect(time('daily', '{yyyy}/{MM}/{dd}').windowOfKey('2026/12/05/x/y.json')).toMatchObject({
      window: { name: '2026-12-05' },
    });
  });

  it('puts a key of a finer template in the window of the scheme that holds it (an hour in its day, a day in its ISO week)', () => {
    expect(time('daily', HIVE_HOURS).windowOfKey('year=2026/month=12/day=05/hour=23/a')).toMatchObject({
      window: { name: '2026-12-05' },
    });
    // 2027-01-01 is a Friday: it belongs to the last ISO week of 2026, which has 53.
    expect(time('weekly', 'dt={yyyy}-{MM}-{dd}').windowOfKey('dt=2027-01-01/a')).toMatchObject({
      window: { name: '2026-W53' },
    });
  });

  it('classifies a key that matches no window with its reason instead of dropping it', () => {
    expect(daily.windowOfKey('orders.csv')).toEqual({
      reason: 'not in any daily window of dt={yyyy}-{MM}-{dd}: the key does not start with dt={yyyy}-{MM}-{dd}/',
    });
    expect(daily.windowOfKey('dt=2026-12-05-extra/a.csv')).toHaveProperty('reason');
    expect(daily.windowOfKey('dt=2026-12-05')).toHaveProperty('reason');
    expect(daily.windowOfKey('a/dt=2026-12-05/b.csv')).toHaveProperty('reason');
    expect(daily.windowOfKey('dt=2026-02-30/a.csv')).toEqual({
      reason: 'not in any daily window of dt={yyyy}-{MM}-{dd}: 2026-02-30 is not a calendar day',
    });
    expect(hourly.windowOfKey('year=2026/month=12/day=05/hour=24/a')).toMatchObject({
      reason: expect.stringMatching(/hour 24 .* is not 00-23/),
    });
    expect(weekly.windowOfKey('2025-W53/a')).toMatchObject({ reason: expect.stringMatching(/2025 has 52/) });
  });
});

describe('partition schemes: the prefixes of a window', () => {
  it("lists a window of the template's own grain under one exact prefix", () => {
    expect(daily.prefixesOf(daily.parseWindow('2026-12-05'))).toEqual(['dt=2026-12-05/']);
    expect(hourly.prefixesOf(hourly.parseWindow('2026-12-05T07'))).toEqual(['year=2026/month=12/day=05/hour=07/']);
    expect(weekly.prefixesOf(weekly.parseWindow('2026-W49'))).toEqual(['2026-W49/']);
    expect(time('daily', '{yyyy}/{MM}/{dd}/').prefixesOf(daily.parseWindow('2026-12-05'))).toEqual(['2026/12/05/']);
  });

  it('cuts a finer template before its first field finer than the grain, a prefix the key reading narrows', () => {
    const day = time('daily', HIVE_HOURS);
    expect(day.prefixesOf(day.parseWindow('2026-12-05'))).toEqual(['year=2026/month=12/day=05/hour=']);
    expect(monthly.prefixesOf(monthly.parseWindow('2026-12'))).toEqual(['2026/12/']);
  });

  it('lists a week over daily keys day by day, across a year end', () => {
    const week = time('weekly', 'dt={yyyy}-{MM}-{dd}');
    expect(week.prefixesOf(week.parseWindow('2026-W53'))).toEqual([
      'dt=2026-12-28/',
      'dt=2026-12-29/',
      'dt=2026-12-30/',
      'dt=2026-12-31/',
      'dt=2027-01-01/',
      'dt=2027-01-02/',
      'dt=2027-01-03/',
    ]);
  });
});

describe('partition schemes: window names and ranges', () => {
  it('names each grain and parses the name back', () => {
    expect(hourly.windowAt(Date.parse('2026-12-05T13:59:59Z')).name).toBe('2026-12-05T13');
    expect(daily.windowAt(Date.parse('2026-12-05T23:59:59.999Z')).name).toBe('2026-12-05');
    expect(weekly.windowAt(Date.parse('2026-12-05T00:00:00Z')).name).toBe('2026-W49');
    expect(monthly.windowAt(Date.parse('2026-12-31T23:00:00Z')).name).toBe('2026-12');
    expect(weekly.parseWindow('2026-W49').start).toBe(Date.parse('2026-11-30T00:00:00Z'));
    expect(monthly.parseWindow('2024-02').end).toBe(Date.parse('2024-03-01T00:00:00Z'));
  });

  it('knows the calendar edges: leap days, ISO week 1 in the previous December, week 53', () => {
    expect(daily.parseWindow('2024-02-29').name).toBe('2024-02-29');
    expect(daily.next(daily.parseWindow('2024-02-28')).name).toBe('2024-02-29');
    expect(daily.next(daily.parseWindow('2026-02-28')).name).toBe('2026-03-01');
    expect(weekly.parseWindow('2026-W01').start).toBe(Date.parse('2025-12-29T00:00:00Z'));
    expect(weekly.windowAt(Date.parse('2021-01-03T12:00:00Z')).name).toBe('2020-W53');
    expect(weekly.next(weekly.parseWindow('2026-W53')).name).toBe('2027-W01');
    expect(monthly.next(monthly.parseWindow('2026-12'), -12).name).toBe('2025-12');
    expect(hourly.next(hourly.parseWindow('2026-12-31T23')).name).toBe('2027-01-01T00');
  });

  it('refuses names that are no window of the grain, with a named error', () => {
    for (const [scheme, name] of [
      [daily, '2026-02-30'],
      [daily, '2025-02-29'],
      [daily, '2026-12-5'],
      [daily, '2026-12'],
      [hourly, '2026-12-05T24'],
      [weekly, '2026-W54'],
      [weekly, '2025-W53'],
      [weekly, '2026-W00'],
      [monthly, '2026-13'],
    ] as const) {
      expect(() => scheme.parseWindow(name), name).toThrow(WindowNameInvalidError);
    }
    expect(() => daily.parseWindow('2026-02-30')).toThrow(/"2026-02-30" is not a daily window: .*not a calendar day/);
  });

  it('lists the windows of a range in order, and refuses one reversed or beyond the bound', () => {
    expect(daily.windowsBetween('2024-02-28', '2024-03-01').map((w) => w.name)).toEqual([
      '2024-02-28',
      '2024-02-29',
      '2024-03-01',
    ]);
    expect(weekly.windowsBetween('2026-W52', '2027-W01').map((w) => w.name)).toEqual([
      '2026-W52',
      '2026-W53',
      '2027-W01',
    ]);
    expect(monthly.windowsBetween('2026-11', '2027-02').map((w) => w.name)).toEqual([
      '2026-11',
      '2026-12',
      '2027-01',
      '2027-02',
    ]);
    expect(() => daily.windowsBetween('2026-12-05', '2026-12-04')).toThrow(WindowRangeReversedError);
    expect(() => daily.windowsBetween('1026-01-01', '2026-01-01')).toThrow(WindowRangeTooLargeError);
    expect(() => hourly.windowsBetween('2026-01-01T00', '2027-12-31T00')).toThrow(
      new RegExp(`at most ${MAX_RANGE_WINDOWS.hourly} at once`),
    );
    expect(() => daily.windowsBetween('2026-12-01', '2026-12-05', { maxWindows: 4 })).toThrow(/holds 5 daily windows/);
  });
});

describe('partition schemes: templates are checked when the scheme is built', () => {
  it.each([
    ['dt={yyyy}-{mm}-{dd}', 'daily', /\{mm\} is not a field/],
    ['{yyyy}/{MM}/{dd}/{yyyy}', 'daily', /\{yyyy\} appears twice/],
    ['{yyyy}/{MM}/{dd}', 'hourly', /daily windows, which do not tile hourly/],
    ['{yyyy}-W{ww}', 'monthly', /weekly windows, which do not tile monthly/],
    ['{yyyy}-W{ww}', 'daily', /weekly windows, which do not tile daily/],
    ['{yyyy}-W{ww}/{dd}', 'weekly', /cannot be combined/],
    ['{MM}/{dd}', 'daily', /no \{yyyy\}/],
    ['{yyyy}/{dd}', 'daily', /\{dd\} without \{MM\}/],
    ['{yyyy}', 'monthly', /only \{yyyy\}/],
    ['dt={yyyy-{MM}', 'monthly', /is not a field/],
    ['dt=}{yyyy}', 'monthly', /"\}" has no "\{"/],
    ['', 'daily', /empty/],
  ] as const)('refuses %s for a %s grain with the template named', (template, grain, problem) => {
    const build = () => time(grain, template);
    expect(build).toThrow(PartitionTemplateInvalidError);
    expect(build).toThrow(problem);
    expect(build).toThrow(`"${template}"`);
    try {
      build();
    } catch (error) {
      expect(error).toBeInstanceOf(RerunError);
      expect((error as PartitionTemplateInvalidError).name).toBe('PartitionTemplateInvalidError');
      expect((error as PartitionTemplateInvalidError).retryable).toBe(false);
    }
  });

  it('accepts the layouts users write', () => {
    for (const [grain, template] of [
      ['daily', 'dt={yyyy}-{MM}-{dd}'],
      ['hourly', HIVE_HOURS],
      ['daily', '{yyyy}/{MM}/{dd}'],
      ['weekly', '{yyyy}-W{ww}'],
      ['monthly', 'month={yyyy}{MM}'],
    ] as const) {
      expect(time(grain, template).spec.template).toBe(template);
    }
  });
});

describe('static and unpartitioned schemes', () => {
  const regions = partitionScheme({ kind: 'static', keys: ['region=eu', 'region=us', 'region=ap'] });
  const whole = partitionScheme({ kind: 'none' });

  it('reads a static name from the first path segment and reports other keys with their reason', () => {
    expect(regions.windowOfKey('region=us/a.csv')).toEqual({ window: { kind: 'static', name: 'region=us' } });
    expect(regions.windowOfKey('region=sa/a.csv')).toHaveProperty('reason');
    expect(regions.prefixesOf(regions.parseWindow('region=eu'))).toEqual(['region=eu/']);
    expect(regions.windowsBetween('region=us', 'region=ap').map((w) => w.name)).toEqual(['region=us', 'region=ap']);
    expect(() => regions.windowsBetween('region=ap', 'region=eu')).toThrow(WindowRangeReversedError);
    expect(() => regions.parseWindow('region=sa')).toThrow(WindowNameInvalidError);
  });

  it('refuses an empty list, a name twice and a name with a slash', () => {
    expect(() => partitionScheme({ kind: 'static', keys: [] })).toThrow(PartitionKeysInvalidError);
    expect(() => partitionScheme({ kind: 'static', keys: ['a', 'a'] })).toThrow(/"a" appears twice/);
    expect(() => partitionScheme({ kind: 'static', keys: ['a/b'] })).toThrow(/holds "\/"/);
  });

  it('puts every key of an unpartitioned stage in its one window, listed from the stage prefix', () => {
    expect(whole.windowOfKey('anything/at/all.csv')).toEqual({ window: { kind: 'none', name: 'all' } });
    expect(whole.prefixesOf(whole.parseWindow('all'))).toEqual(['']);
  });
});

describe('partition mappings', () => {
  const names = (windows: readonly { name: string }[]) => windows.map((w) => w.name);

  it('maps a day on its 24 hours, a week on its 7 days, a month on its days, a day on its one month', () => {
    const hours = windowsIntersecting(hourly, daily.parseWindow('2026-12-05'));
    expect(hours).toHaveLength(24);
    expect(hours[0]?.name).toBe('2026-12-05T00');
    expect(hours[23]?.name).toBe('2026-12-05T23');
    expect(names(windowsIntersecting(daily, weekly.parseWindow('2026-W53')))).toEqual([
      '2026-12-28',
      '2026-12-29',
      '2026-12-30',
      '2026-12-31',
      '2027-01-01',
      '2027-01-02',
      '2027-01-03',
    ]);
    expect(windowsIntersecting(daily, monthly.parseWindow('2024-02'))).toHaveLength(29);
    expect(names(windowsIntersecting(monthly, daily.parseWindow('2026-12-05')))).toEqual(['2026-12']);
    expect(names(windowsIntersecting(monthly, weekly.parseWindow('2026-W53')))).toEqual(['2026-12', '2027-01']);
  });

  it('maps an hour downstream onto the day it makes stale', () => {
    expect(names(windowsIntersecting(daily, hourly.parseWindow('2026-12-05T23')))).toEqual(['2026-12-05']);
  });

  it('maps static names onto the same names, anything onto an unpartitioned upstream, and refuses the rest', () => {
    const regions = partitionScheme({ kind: 'static', keys: ['eu', 'us'] });
    const whole = partitionScheme({ kind: 'none' });
    expect(windowsIntersecting(regions, { kind: 'static', name: 'eu' })).toEqual([{ kind: 'static', name: 'eu' }]);
    expect(windowsIntersecting(regions, { kind: 'static', name: 'ap' })).toEqual([]);
    expect(names(windowsIntersecting(regions, { kind: 'none', name: 'all' }))).toEqual(['eu', 'us']);
    expect(windowsIntersecting(whole, daily.parseWindow('2026-12-05'))).toEqual([{ kind: 'none', name: 'all' }]);
    expect(() => windowsIntersecting(daily, { kind: 'static', name: 'eu' })).toThrow(WindowMappingUnsupportedError);
    expect(() => windowsIntersecting(daily, { kind: 'none', name: 'all' })).toThrow(WindowMappingUnsupportedError);
  });
});
