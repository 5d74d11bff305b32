import { RerunError } from '../errors.js';
import { partitionScheme } from '../partitions/partitionScheme.js';

/**
 * Daily partitions. A partition is a calendar day in UTC, written `YYYY-MM-DD` (a "day") or
 * `dt=YYYY-MM-DD` (its name, as it appears in keys). Which partition an object belongs to is read
 * from its key, never from a clock: an upload under `incoming/dt=2026-01-05/` belongs to 2026-01-05
 * whenever it arrives, so a rerun of that day reads the same inputs.
 */

/** A day in UTC, `YYYY-MM-DD`. */
export type Day = string;

/** Most days one window may span (about ten years): a typo in a year must not plan a century. */
export const MAX_WINDOW_DAYS = 3660;

/** The daily scheme these helpers are a shorthand for. */
const DAILY = partitionScheme({ kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' });

/** A day or a window that cannot be used (bad date, reversed or oversized window). Not retryable. */
export class PartitionWindowInvalidError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'PartitionWindowInvalidError';
  }
}

/**
 * Whether `value` is a real calendar day `YYYY-MM-DD` (so `2026-02-30` is not).
 *
 * @example
 * isDay('2026-02-28'); // true
 * isDay('2026-02-30'); // false
 */
export function isDay(value: string): boolean {
  try {
    return DAILY.parseWindow(value).name === value;
  } catch {
    return false;
  }
}

/**
 * The partition name of a day, as it appears in keys.
 *
 * @example
 * partitionName('2026-01-05'); // 'dt=2026-01-05'
 */
export function partitionName(day: Day): string {
  return `dt=${day}`;
}

/**
 * The day of a partition name (`dt=YYYY-MM-DD`), or undefined when it is not one.
 *
 * @example
 * dayOfPartition('dt=2026-01-05'); // '2026-01-05'
 */
export function dayOfPartition(name: string): Day | undefined {
  if (!name.startsWith('dt=')) return undefined;
  const day = name.slice(3);
  return isDay(day) ? day : undefined;
}

/**
 * The day a key belongs to, from its first path segment: `dt=2026-01-05/a.csv.ndjson` belongs to
 * 2026-01-05; a key without a leading `dt=` segment belongs to no partition.
 *
 * @example
 * dayOfRelativeKey('dt=2026-01-05/orders.csv.ndjson'); // '2026-01-05'
 * dayOfRelativeKey('orders.csv.ndjson'); // undefined
 */
export function dayOfRelativeKey(relativeKey: string): Day | undefined {
  const reading = DAILY.windowOfKey(relativeKey);
  return 'window' in reading ? reading.window.name : undefined;
}

/**
 * The day before `day`.
 *
 * @example
 * previousDay('2026-03-01'); // '2026-02-28'
 */
export function previousDay(day: Day): Day {
  return addDays(day, -1);
}

/**
 * The UTC day of an instant (epoch milliseconds or an ISO 8601 string).
 *
 * @example
 * dayOfInstant('2026-01-06T01:15:00Z'); // '2026-01-06'
 */
export function dayOfInstant(instant: number | string): Day {
  const ms = typeof instant === 'number' ? instant : Date.parse(instant);
  if (!Number.isFinite(ms)) throw new PartitionWindowInvalidError(`"${String(instant)}" is not a date and time`);
  return DAILY.windowAt(ms).name;
}

/**
 * Every day from `from` to `to`, both included, in order.
 *
 * @example
 * daysInWindow('2026-01-30', '2026-02-02'); // ['2026-01-30', '2026-01-31', '2026-02-01', '2026-02-02']
 */
export function daysInWindow(from: Day, to: Day): Day[] {
  for (const [name, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (!isDay(value)) throw new PartitionWindowInvalidError(`--${name} "${value}" is not a day (YYYY-MM-DD)`);
  }
  const first = DAILY.parseWindow(from);
  const count = Math.round((DAILY.parseWindow(to).start - first.start) / (first.end - first.start)) + 1;
  if (count < 1) throw new PartitionWindowInvalidError(`the window ends (${to}) before it starts (${from})`);
  if (count > MAX_WINDOW_DAYS) {
    throw new PartitionWindowInvalidError(
      `the window ${from}..${to} spans ${count} days; at most ${MAX_WINDOW_DAYS} at once (split it)`,
    );
  }
  return DAILY.windowsBetween(from, to, { maxWindows: MAX_WINDOW_DAYS }).map((window) => window.name);
}

function addDays(day: Day, days: number): Day {
  if (!isDay(day)) throw new PartitionWindowInvalidError(`"${day}" is not a day (YYYY-MM-DD)`);
  return DAILY.next(DAILY.parseWindow(day), days).name;
}
