import { PartitionTemplateInvalidError } from './errors.js';
import { TimeGrain } from './partitionSpec.js';
import { type CalendarFields, grainTiles, instantOfFields, isoWeekOf, timeWindowAt } from './timeWindow.js';

/**
 * A key template such as `dt={yyyy}-{MM}-{dd}` or `year={yyyy}/month={MM}/day={dd}/hour={HH}`, parsed
 * once and checked against its scheme's grain: it reads the calendar fields of a key and writes the
 * prefix of a window. The template matches the start of a key relative to the stage's prefix, up to a
 * `/`, so `dt=2026-12-05/a.csv` is in 2026-12-05 and `dt=2026-12-05-extra/a.csv` in no window.
 */

/** The fields a template may hold. */
const FIELDS = {
  yyyy: { width: 4, unit: 'year' },
  MM: { width: 2, unit: 'month' },
  ww: { width: 2, unit: 'week' },
  dd: { width: 2, unit: 'day' },
  HH: { width: 2, unit: 'hour' },
} as const;
type Field = keyof typeof FIELDS;

type Token = { readonly literal: string } | { readonly field: Field };

/** The grain of a template's finest field: the windows its keys can name. */
function templateUnit(template: string, grain: TimeGrain, fields: ReadonlySet<Field>): TimeGrain {
  const refuse = (problem: string): never => {
    throw new PartitionTemplateInvalidError(template, grain, problem);
  };
  if (!fields.has('yyyy')) refuse('it has no {yyyy} field, so a key cannot say its year');
  if (fields.has('ww')) {
    if (fields.has('MM') || fields.has('dd') || fields.has('HH')) {
      refuse('{ww} (an ISO week) cannot be combined with {MM}, {dd} or {HH}: a week straddles months');
    }
    return TimeGrain.WEEKLY;
  }
  if (fields.has('HH') && !fields.has('dd')) refuse('it has {HH} without {dd}');
  if (fields.has('dd') && !fields.has('MM')) refuse('it has {dd} without {MM}');
  if (fields.has('HH')) return TimeGrain.HOURLY;
  if (fields.has('dd')) return TimeGrain.DAILY;
  if (fields.has('MM')) return TimeGrain.MONTHLY;
  return refuse('it has only {yyyy}, and no grain is as coarse as a year');
}

function tokenize(template: string, grain: TimeGrain): Token[] {
  const tokens: Token[] = [];
  const seen = new Set<Field>();
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf('{');
    const close = rest.indexOf('}');
    if (open < 0 && close < 0) {
      tokens.push({ literal: rest });
      break;
    }
    if (open < 0 || close < open) throw new PartitionTemplateInvalidError(template, grain, 'a "}" has no "{"');
    if (open > 0) tokens.push({ literal: rest.slice(0, open) });
    const end = rest.indexOf('}', open);
    if (end < 0) throw new PartitionTemplateInvalidError(template, grain, 'a "{" is not closed');
    const name = rest.slice(open + 1, end);
    if (!Object.hasOwn(FIELDS, name)) {
      throw new PartitionTemplateInvalidError(template, grain, `{${name}} is not a field`);
    }
    const field = name as Field;
    if (seen.has(field)) throw new PartitionTemplateInvalidError(template, grain, `{${field}} appears twice`);
    seen.add(field);
    tokens.push({ field });
    rest = rest.slice(end + 1);
  }
  return tokens;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether a template field holds a unit finer than `grain` (so a window of `grain` leaves it open). */
function finerThan(field: Field, grain: TimeGrain): boolean {
  const finer: Readonly<Record<TimeGrain, readonly Field[]>> = {
    [TimeGrain.HOURLY]: [],
    [TimeGrain.DAILY]: ['HH'],
    [TimeGrain.WEEKLY]: ['dd', 'HH'],
    [TimeGrain.MONTHLY]: ['dd', 'HH'],
  };
  return finer[grain].includes(field);
}

/**
 * A checked template: reads keys, writes prefixes.
 *
 * @example
 * const t = compileKeyTemplate('year={yyyy}/month={MM}/day={dd}/hour={HH}', 'daily');
 * t.prefixOf(Date.parse('2026-12-05T00:00:00Z'), 'daily'); // 'year=2026/month=12/day=05/hour='
 */
export interface KeyTemplate {
  readonly template: string;
  /** The grain of the template's finest field (hourly for a template with {HH}). */
  readonly unit: TimeGrain;
  /** The instant that starts the unit a relative key names, or why it names none. */
  read(relativeKey: string): { readonly instant: number } | { readonly reason: string };
  /**
   * The prefix under which every key of the window of `grain` starting at `start` lies: the template
   * written out up to its first field finer than `grain` (a listing of it may return keys of
   * neighbouring windows only when the template is finer than the grain and so narrows further).
   */
  prefixOf(start: number, grain: TimeGrain): string;
}

/**
 * Parses and checks a template against the grain of its scheme.
 *
 * @throws PartitionTemplateInvalidError on an unknown field, a field twice, or fields that cannot
 *   name a window of `grain` (a daily template for an hourly grain, a week for a month).
 * @example
 * compileKeyTemplate('dt={yyyy}-{MM}-{dd}', 'daily').read('dt=2026-12-05/a.csv'); // { instant: 1796428800000 }
 */
export function compileKeyTemplate(template: string, grain: TimeGrain): KeyTemplate {
  if (template.length === 0 || template.startsWith('/')) {
    throw new PartitionTemplateInvalidError(
      template,
      grain,
      'it is empty or starts with "/" (it is relative to the stage\'s prefix)',
    );
  }
  const tokens = tokenize(template, grain);
  const fields = tokens.flatMap((token) => ('field' in token ? [token.field] : []));
  const unit = templateUnit(template, grain, new Set(fields));
  if (!grainTiles(unit, grain)) {
    throw new PartitionTemplateInvalidError(
      template,
      grain,
      `its finest field names ${unit} windows, which do not tile ${grain} windows`,
    );
  }
  const endsWithSlash = template.endsWith('/');
  const source = tokens
    .map((token) => ('field' in token ? `(\\d{${FIELDS[token.field].width}})` : escapeRegExp(token.literal)))
    .join('');
  // The template ends at a path segment's end: `dt=2026-12-05-extra/` is not `dt=2026-12-05/`.
  const pattern = new RegExp(`^${source}${endsWithSlash ? '' : '/'}`);
  const shown = endsWithSlash ? template : `${template}/`;

  const read: KeyTemplate['read'] = (relativeKey) => {
    const match = pattern.exec(relativeKey);
    if (!match) return { reason: `the key does not start with ${shown}` };
    const values = Object.fromEntries(fields.map((field, i) => [field, Number(match[i + 1])])) as Record<Field, number>;
    const calendar: CalendarFields =
      unit === TimeGrain.WEEKLY
        ? { year: values.yyyy, week: values.ww }
        : { year: values.yyyy, month: values.MM, day: values.dd, hour: values.HH };
    return instantOfFields(calendar);
  };

  const fieldValue = (field: Field, date: Date, start: number): string => {
    const value = {
      yyyy: unit === TimeGrain.WEEKLY ? isoWeekOf(start).year : date.getUTCFullYear(),
      MM: date.getUTCMonth() + 1,
      ww: isoWeekOf(start).week,
      dd: date.getUTCDate(),
      HH: date.getUTCHours(),
    }[field];
    return String(value).padStart(FIELDS[field].width, '0');
  };

  const prefixOf: KeyTemplate['prefixOf'] = (start, prefixGrain) => {
    const date = new Date(start);
    let prefix = '';
    for (const token of tokens) {
      if ('literal' in token) prefix += token.literal;
      else if (finerThan(token.field, prefixGrain)) return prefix;
      else prefix += fieldValue(token.field, date, start);
    }
    return endsWithSlash ? prefix : `${prefix}/`;
  };

  return { template, unit, read, prefixOf };
}

/**
 * The instants that start each window of `unit` in `[start, end)`, when the template's unit is finer
 * than the window's grain and the prefix must be written per sub-window (a week over daily keys).
 *
 * @example
 * subWindowStarts('daily', Date.parse('2026-11-30T00:00:00Z'), Date.parse('2026-12-07T00:00:00Z')).length; // 7
 */
export function subWindowStarts(unit: TimeGrain, start: number, end: number): number[] {
  const starts: number[] = [];
  for (let window = timeWindowAt(unit, start); window.start < end; window = timeWindowAt(unit, window.end)) {
    starts.push(window.start);
  }
  return starts;
}
