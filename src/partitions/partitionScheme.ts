import {
  PartitionKeysInvalidError,
  WindowNameInvalidError,
  WindowRangeReversedError,
  WindowRangeTooLargeError,
} from './errors.js';
import { compileKeyTemplate, subWindowStarts } from './keyTemplate.js';
import {
  type PartitionSpec,
  type StaticPartitionSpec,
  TimeGrain,
  type TimePartitionSpec,
  type UnpartitionedSpec,
} from './partitionSpec.js';
import { nextTimeWindow, parseTimeWindow, type TimeWindow, timeWindowAt } from './timeWindow.js';

/**
 * A partition scheme as behaviour: which window a key belongs to, where a window's keys are listed,
 * what a window is called, and which windows a range holds. Built from a {@link PartitionSpec} (data)
 * by {@link partitionScheme}. Keys are read relative to the stage's prefix.
 */

/** A name of a static scheme's list. */
export interface StaticWindow {
  readonly kind: 'static';
  readonly name: string;
}

/** The one window of an unpartitioned stage: every key. */
export interface WholeWindow {
  readonly kind: 'none';
  readonly name: 'all';
}

/** A window of any scheme. */
export type PartitionWindow = TimeWindow | StaticWindow | WholeWindow;

/**
 * Which window a key is in, or why it is in none. A key in none is never silently left out: the caller
 * counts it and reports it as skipped with its reason.
 */
export type WindowReading<W extends PartitionWindow = PartitionWindow> =
  | { readonly window: W }
  | { readonly reason: string };

/** Options of {@link PartitionScheme.windowsBetween}. */
export interface WindowRangeOptions {
  /**
   * Most windows the range may hold.
   * @default MAX_RANGE_WINDOWS[grain] for a time scheme (about ten years; one leap year of hours), the list's length for a static one
   */
  readonly maxWindows?: number;
}

/**
 * A scheme: reads keys, lists prefixes, names and ranges windows.
 *
 * @example
 * const daily = partitionScheme({ kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' });
 * daily.windowOfKey('dt=2026-12-05/a.csv'); // { window: { kind: 'time', name: '2026-12-05', ... } }
 */
export interface PartitionScheme<W extends PartitionWindow = PartitionWindow> {
  readonly spec: PartitionSpec;
  /** The window of a key relative to the stage's prefix, or the reason it has none. */
  windowOfKey(relativeKey: string): WindowReading<W>;
  /** The prefixes (relative to the stage's prefix) whose listings hold every key of `window`. */
  prefixesOf(window: W): string[];
  /** The window a name denotes (`--from`, `--to`). @throws WindowNameInvalidError */
  parseWindow(name: string): W;
  /** Every window from `from` to `to`, both included, in order. @throws WindowRangeReversedError, WindowRangeTooLargeError */
  windowsBetween(from: string, to: string, options?: WindowRangeOptions): W[];
}

/** A time scheme, which also finds the window of an instant (the schedule's "the window that just closed"). */
export interface TimePartitionScheme extends PartitionScheme<TimeWindow> {
  readonly spec: TimePartitionSpec;
  readonly grain: TimeGrain;
  /** The window holding an instant (epoch ms). */
  windowAt(instant: number): TimeWindow;
  /** The window `offset` windows after `window` (negative: before). */
  next(window: TimeWindow, offset?: number): TimeWindow;
}

/**
 * Most windows one range holds, per grain: about ten years of days (as MAX_WINDOW_DAYS), weeks and
 * months, and one leap year of hours. A typo in a year must not plan a century.
 */
export const MAX_RANGE_WINDOWS: Readonly<Record<TimeGrain, number>> = {
  [TimeGrain.HOURLY]: 366 * 24,
  [TimeGrain.DAILY]: 3660,
  [TimeGrain.WEEKLY]: 523,
  [TimeGrain.MONTHLY]: 120,
};

function windowsApart(from: TimeWindow, to: TimeWindow): number {
  if (from.grain === TimeGrain.MONTHLY) {
    const a = new Date(from.start);
    const b = new Date(to.start);
    return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth();
  }
  return Math.round((to.start - from.start) / (from.end - from.start));
}

function timeScheme(spec: TimePartitionSpec): TimePartitionScheme {
  const { grain } = spec;
  const template = compileKeyTemplate(spec.template, grain);
  // A week over daily or hourly keys is listed day by day: its days have no common prefix but the year's.
  const perDay = grain === TimeGrain.WEEKLY && template.unit !== TimeGrain.WEEKLY;
  return {
    spec,
    grain,
    windowOfKey(relativeKey) {
      const read = template.read(relativeKey);
      if ('reason' in read) return { reason: `not in any ${grain} window of ${spec.template}: ${read.reason}` };
      return { window: timeWindowAt(grain, read.instant) };
    },
    prefixesOf(window) {
      if (!perDay) return [template.prefixOf(window.start, grain)];
      const prefixes = subWindowStarts(TimeGrain.DAILY, window.start, window.end).map((day) =>
        template.prefixOf(day, TimeGrain.DAILY),
      );
      return [...new Set(prefixes)];
    },
    parseWindow: (name) => parseTimeWindow(grain, name),
    windowsBetween(fromName, toName, options = {}) {
      const from = parseTimeWindow(grain, fromName);
      const to = parseTimeWindow(grain, toName);
      const count = windowsApart(from, to) + 1;
      if (count < 1) throw new WindowRangeReversedError(fromName, toName);
      const limit = options.maxWindows ?? MAX_RANGE_WINDOWS[grain];
      if (count > limit) throw new WindowRangeTooLargeError(fromName, toName, grain, count, limit);
      return Array.from({ length: count }, (_, i) => nextTimeWindow(from, i));
    },
    windowAt: (instant) => timeWindowAt(grain, instant),
    next: (window, offset = 1) => nextTimeWindow(window, offset),
  };
}

function staticScheme(spec: StaticPartitionSpec): PartitionScheme<StaticWindow> {
  if (spec.keys.length === 0) throw new PartitionKeysInvalidError('it names no partition');
  const seen = new Set<string>();
  for (const key of spec.keys) {
    if (key === '' || key.includes('/')) {
      throw new PartitionKeysInvalidError(`the name "${key}" is empty or holds "/" (each name is one path segment)`);
    }
    if (seen.has(key)) throw new PartitionKeysInvalidError(`the name "${key}" appears twice`);
    seen.add(key);
  }
  const window = (name: string): StaticWindow => ({ kind: 'static', name });
  const parseWindow = (name: string): StaticWindow => {
    if (!seen.has(name)) throw new WindowNameInvalidError(name, 'static', `one of ${spec.keys.join(', ')}`);
    return window(name);
  };
  return {
    spec,
    windowOfKey(relativeKey) {
      const slash = relativeKey.indexOf('/');
      const segment = slash < 0 ? '' : relativeKey.slice(0, slash);
      if (seen.has(segment)) return { window: window(segment) };
      return { reason: `not in a static partition: its first path segment is not one of ${spec.keys.join(', ')}` };
    },
    prefixesOf: (w) => [`${w.name}/`],
    parseWindow,
    windowsBetween(fromName, toName, options = {}) {
      const from = spec.keys.indexOf(parseWindow(fromName).name);
      const to = spec.keys.indexOf(parseWindow(toName).name);
      if (to < from) throw new WindowRangeReversedError(fromName, toName);
      const count = to - from + 1;
      const limit = options.maxWindows ?? spec.keys.length;
      if (count > limit) throw new WindowRangeTooLargeError(fromName, toName, 'static', count, limit);
      return spec.keys.slice(from, to + 1).map(window);
    },
  };
}

const WHOLE: WholeWindow = { kind: 'none', name: 'all' };

function wholeScheme(spec: UnpartitionedSpec): PartitionScheme<WholeWindow> {
  const parseWindow = (name: string): WholeWindow => {
    if (name !== WHOLE.name) throw new WindowNameInvalidError(name, 'unpartitioned', '"all", its only window');
    return WHOLE;
  };
  return {
    spec,
    windowOfKey: () => ({ window: WHOLE }),
    prefixesOf: () => [''],
    parseWindow,
    windowsBetween: (from, to) => {
      parseWindow(from);
      parseWindow(to);
      return [WHOLE];
    },
  };
}

/**
 * Turns a partition scheme's data into a scheme that reads keys and names windows.
 *
 * @throws PartitionTemplateInvalidError, PartitionKeysInvalidError when the spec cannot be used.
 * @example
 * const hourly = partitionScheme({ kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' });
 * hourly.prefixesOf(hourly.parseWindow('2026-12-05T13')); // ['year=2026/month=12/day=05/hour=13/']
 */
export function partitionScheme(spec: TimePartitionSpec): TimePartitionScheme;
export function partitionScheme(spec: StaticPartitionSpec): PartitionScheme<StaticWindow>;
export function partitionScheme(spec: UnpartitionedSpec): PartitionScheme<WholeWindow>;
export function partitionScheme(spec: PartitionSpec): PartitionScheme;
export function partitionScheme(spec: PartitionSpec): PartitionScheme {
  switch (spec.kind) {
    case 'time':
      return timeScheme(spec) as unknown as PartitionScheme;
    case 'static':
      return staticScheme(spec) as unknown as PartitionScheme;
    case 'none':
      return wholeScheme(spec) as unknown as PartitionScheme;
  }
}
