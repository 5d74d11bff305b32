import { WindowNameInvalidError } from './errors.js';
import { TimeGrain } from './partitionSpec.js';

/**
 * Time windows in UTC: an hour, a day, an ISO week (Monday to Sunday) or a month, each a half-open
 * interval `[start, end)` of epoch milliseconds with its name. Pure calendar arithmetic: no clock is
 * read here; the caller passes the instant.
 */

/**
 * One window of a time scheme.
 *
 * @example
 * const day: TimeWindow = { kind: 'time', grain: 'daily', name: '2026-12-05', start: 1796428800000, end: 1796515200000 };
 */
export interface TimeWindow {
  readonly kind: 'time';
  readonly grain: TimeGrain;
  /** `2026-12-05T13` hourly, `2026-12-05` daily, `2026-W49` weekly, `2026-12` monthly. */
  readonly name: string;
  /** First instant of the window (epoch ms, UTC). */
  readonly start: number;
  /** First instant after the window (epoch ms, UTC): windows are half-open. */
  readonly end: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;

/** Years written with four digits; earlier ones are not keys anyone writes, and `Date.UTC` reads 0-99 as 19xx. */
const MIN_YEAR = 1000;
const MAX_YEAR = 9999;

/** How a name of each grain is written, for the message that refuses one. */
export const WINDOW_NAME_FORMS: Readonly<Record<TimeGrain, string>> = {
  [TimeGrain.HOURLY]: 'YYYY-MM-DDTHH (e.g. 2026-12-05T13)',
  [TimeGrain.DAILY]: 'YYYY-MM-DD, a calendar day (e.g. 2026-12-05)',
  [TimeGrain.WEEKLY]: 'YYYY-Www, an ISO week (e.g. 2026-W49)',
  [TimeGrain.MONTHLY]: 'YYYY-MM (e.g. 2026-12)',
};

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/**
 * The ISO week of an instant: its week-year (the year of the week's Thursday) and its number (1-53).
 *
 * @example
 * isoWeekOf(Date.UTC(2027, 0, 1)); // { year: 2026, week: 53 }
 */
export function isoWeekOf(instant: number): { readonly year: number; readonly week: number } {
  const day = Math.floor(instant / DAY_MS) * DAY_MS;
  const mondayBased = (new Date(day).getUTCDay() + 6) % 7;
  const thursday = day + (3 - mondayBased) * DAY_MS;
  const year = new Date(thursday).getUTCFullYear();
  return { year, week: 1 + Math.floor((thursday - Date.UTC(year, 0, 1)) / WEEK_MS) };
}

/**
 * The Monday (epoch ms) that starts ISO week `week` of week-year `year`: week 1 holds January 4th.
 *
 * @example
 * new Date(isoWeekStart(2026, 1)).toISOString(); // '2025-12-29T00:00:00.000Z'
 */
export function isoWeekStart(year: number, week: number): number {
  const jan4 = Date.UTC(year, 0, 4);
  return jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY_MS + (week - 1) * WEEK_MS;
}

/**
 * How many ISO weeks a week-year has (52 or 53): December 28th is always in the last one.
 *
 * @example
 * isoWeeksInYear(2026); // 53
 */
export function isoWeeksInYear(year: number): number {
  return isoWeekOf(Date.UTC(year, 11, 28)).week;
}

function startOf(grain: TimeGrain, instant: number): number {
  switch (grain) {
    case TimeGrain.HOURLY:
      return Math.floor(instant / HOUR_MS) * HOUR_MS;
    case TimeGrain.DAILY:
      return Math.floor(instant / DAY_MS) * DAY_MS;
    case TimeGrain.WEEKLY: {
      const day = Math.floor(instant / DAY_MS) * DAY_MS;
      return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS;
    }
    case TimeGrain.MONTHLY: {
      const date = new Date(instant);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    }
  }
}

function endOf(grain: TimeGrain, start: number): number {
  switch (grain) {
    case TimeGrain.HOURLY:
      return start + HOUR_MS;
    case TimeGrain.DAILY:
      return start + DAY_MS;
    case TimeGrain.WEEKLY:
      return start + WEEK_MS;
    case TimeGrain.MONTHLY: {
      const date = new Date(start);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    }
  }
}

function nameOf(grain: TimeGrain, start: number): string {
  const date = new Date(start);
  const ymd = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  switch (grain) {
    case TimeGrain.HOURLY:
      return `${ymd}T${pad(date.getUTCHours())}`;
    case TimeGrain.DAILY:
      return ymd;
    case TimeGrain.WEEKLY: {
      const { year, week } = isoWeekOf(start);
      return `${pad(year, 4)}-W${pad(week)}`;
    }
    case TimeGrain.MONTHLY:
      return ymd.slice(0, 7);
  }
}

/**
 * The window of `grain` that holds an instant (epoch ms, UTC).
 *
 * @example
 * timeWindowAt('hourly', Date.parse('2026-12-05T13:40:00Z')).name; // '2026-12-05T13'
 */
export function timeWindowAt(grain: TimeGrain, instant: number): TimeWindow {
  const start = startOf(grain, instant);
  return { kind: 'time', grain, name: nameOf(grain, start), start, end: endOf(grain, start) };
}

/**
 * The window after `window` (`offset` windows later; negative goes back).
 *
 * @example
 * nextTimeWindow(parseTimeWindow('daily', '2026-12-31')).name; // '2027-01-01'
 */
export function nextTimeWindow(window: TimeWindow, offset = 1): TimeWindow {
  if (window.grain === TimeGrain.MONTHLY) {
    const date = new Date(window.start);
    return timeWindowAt(window.grain, Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1));
  }
  return timeWindowAt(window.grain, window.start + offset * (window.end - window.start));
}

const NAME_FORMS: Readonly<Record<TimeGrain, RegExp>> = {
  [TimeGrain.HOURLY]: /^(\d{4})-(\d{2})-(\d{2})T(\d{2})$/,
  [TimeGrain.DAILY]: /^(\d{4})-(\d{2})-(\d{2})$/,
  [TimeGrain.WEEKLY]: /^(\d{4})-W(\d{2})$/,
  [TimeGrain.MONTHLY]: /^(\d{4})-(\d{2})$/,
};

/** Calendar fields as read from a name or a key; absent ones default to the start of the coarser unit. */
export interface CalendarFields {
  readonly year: number;
  readonly month?: number;
  readonly day?: number;
  readonly hour?: number;
  /** An ISO week number; with it, `year` is the ISO week-year. */
  readonly week?: number;
}

/**
 * The instant that starts the unit the fields name, or a reason when they name none (a month 13,
 * 2026-02-30, an hour 24, week 53 of a 52-week year).
 *
 * @example
 * instantOfFields({ year: 2026, month: 2, day: 30 }); // { reason: '2026-02-30 is not a calendar day' }
 */
export function instantOfFields(fields: CalendarFields): { readonly instant: number } | { readonly reason: string } {
  const { year, month = 1, day = 1, hour = 0, week } = fields;
  if (year < MIN_YEAR || year > MAX_YEAR) return { reason: `the year ${year} is not ${MIN_YEAR}-${MAX_YEAR}` };
  if (week !== undefined) {
    const weeks = isoWeeksInYear(year);
    if (week < 1 || week > weeks)
      return { reason: `${pad(year, 4)}-W${pad(week)} is not an ISO week (${year} has ${weeks})` };
    return { instant: isoWeekStart(year, week) };
  }
  const instant = Date.UTC(year, month - 1, day, hour);
  const date = new Date(instant);
  const written = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
  if (month < 1 || month > 12) return { reason: `the month ${pad(month)} of ${written} is not 01-12` };
  // The hour first: Date.UTC carries hour 24 into the next day, which would read as a bad day.
  if (hour > 23) return { reason: `the hour ${pad(hour)} of ${written} is not 00-23` };
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return { reason: `${written} is not a calendar day` };
  }
  return { instant };
}

/**
 * The window a name denotes (`2026-12-05T13`, `2026-12-05`, `2026-W49`, `2026-12`), as `--from` and
 * `--to` give it.
 *
 * @throws WindowNameInvalidError when the name is not a window of `grain` (`2026-02-30`, `2026-W54`).
 * @example
 * parseTimeWindow('weekly', '2026-W49').start === Date.parse('2026-11-30T00:00:00Z'); // true
 */
export function parseTimeWindow(grain: TimeGrain, name: string): TimeWindow {
  const match = NAME_FORMS[grain].exec(name);
  if (!match) throw new WindowNameInvalidError(name, grain, WINDOW_NAME_FORMS[grain]);
  const numbers = match.slice(1).map(Number);
  const [year = 0, second = 1, third = 1, hour = 0] = numbers;
  const fields: CalendarFields =
    grain === TimeGrain.WEEKLY ? { year, week: second } : { year, month: second, day: third, hour };
  const read = instantOfFields(fields);
  if ('reason' in read) throw new WindowNameInvalidError(name, grain, `${WINDOW_NAME_FORMS[grain]}; ${read.reason}`);
  return timeWindowAt(grain, read.instant);
}

/** How the grains nest: a finer grain's windows tile a coarser one's exactly (a week does not tile a month). */
const TILES: Readonly<Record<TimeGrain, readonly TimeGrain[]>> = {
  [TimeGrain.HOURLY]: [TimeGrain.HOURLY, TimeGrain.DAILY, TimeGrain.WEEKLY, TimeGrain.MONTHLY],
  [TimeGrain.DAILY]: [TimeGrain.DAILY, TimeGrain.WEEKLY, TimeGrain.MONTHLY],
  [TimeGrain.WEEKLY]: [TimeGrain.WEEKLY],
  [TimeGrain.MONTHLY]: [TimeGrain.MONTHLY],
};

/**
 * Whether the windows of `finer` tile each window of `coarser` exactly (hours tile days, days tile
 * weeks and months; weeks do not tile months).
 *
 * @example
 * grainTiles('daily', 'monthly'); // true
 * grainTiles('weekly', 'monthly'); // false
 */
export function grainTiles(finer: TimeGrain, coarser: TimeGrain): boolean {
  return TILES[finer].includes(coarser);
}
