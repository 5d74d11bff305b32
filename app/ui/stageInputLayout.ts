import type { Day } from '../../src/keys/partition.js';
import { PartitionTemplateInvalidError } from '../../src/partitions/errors.js';
import { partitionScheme, type TimePartitionScheme } from '../../src/partitions/partitionScheme.js';
import type { PartitionSpec } from '../../src/partitions/partitionSpec.js';
import type { ListOptions } from '../../src/s3/S3PartitionStore.js';

/**
 * How the console's days view groups the inputs of a user's object stage (one with no window stage
 * after it), by the stage's own description:
 * - `days`: its partitions are a time template whose windows fall within days
 *   (`year={yyyy}/month={MM}/day={dd}/hour={HH}`, `{yyyy}/{MM}/{dd}`): a day's inputs are the keys the
 *   template reads as that day, listed under the template's prefix for the day;
 * - `all`: any other layout (no partitions, named partitions, a weekly or monthly template): its
 *   inputs are shown as one group, never as days of zero inputs, and `note` says why.
 */
export type StageInputLayout =
  | {
      readonly kind: 'days';
      /** The stage's key template, read on the key after its input prefix. */
      readonly template: string;
      /** The template as a daily scheme: which day a key is in, and the one prefix a day is listed by. */
      readonly scheme: TimePartitionScheme;
    }
  | {
      readonly kind: 'all';
      /** Why the inputs are not shown by day, in the console's words. */
      readonly note: string;
    };

/**
 * The layout of an object stage's inputs, from its described partitions (their template is read on
 * the key after the stage's input prefix, as the window stages over it read it).
 *
 * @example
 * stageInputLayout('clean', 'incoming/', { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' }).kind; // 'days'
 * stageInputLayout('clean', 'incoming/', undefined); // { kind: 'all', note: 'stage "clean" declares no time partitions: ...' }
 */
export function stageInputLayout(
  stage: string,
  prefix: string,
  partitions: PartitionSpec | undefined,
): StageInputLayout {
  if (partitions === undefined || partitions.kind === 'none') {
    return {
      kind: 'all',
      note: `stage "${stage}" declares no time partitions: its inputs under ${prefix} are shown as one group, all inputs, not by day`,
    };
  }
  if (partitions.kind === 'static') {
    return {
      kind: 'all',
      note:
        `stage "${stage}" is partitioned by name (${partitions.keys.join(', ')}), not by time: the console cannot ` +
        `group its inputs by day, and shows those under ${prefix} as one group, all inputs`,
    };
  }
  try {
    const scheme = partitionScheme({ kind: 'time', grain: 'daily', template: partitions.template });
    return { kind: 'days', template: partitions.template, scheme };
  } catch (error) {
    if (!(error instanceof PartitionTemplateInvalidError)) throw error;
    return {
      kind: 'all',
      note:
        `stage "${stage}" keys its inputs by ${partitions.template}, whose windows are not within days: the console ` +
        `cannot group them by day, and shows those under ${prefix} as one group, all inputs`,
    };
  }
}

/** Where a group of inputs is listed, and which of the listed keys belong to it. */
export interface InputGroup {
  /** The listings, in key order. */
  readonly ranges: readonly ListOptions[];
  /** Whether a listed key is in the group. @default every listed key */
  readonly holds?: (key: string) => boolean;
  /**
   * Most keys one page lists (in all its ranges) before it answers with the inputs found so far and
   * where to go on from: a group found by filtering a whole prefix costs a bounded number of requests per page.
   * @default no bound (a page lists until it is full)
   */
  readonly maxScanned?: number;
}

/** Most keys one page of the inputs outside any day lists: five listing requests of 1,000 keys. */
export const MAX_SCANNED_OUTSIDE_DAYS = 5000;

/**
 * Where the inputs of one day of a `days` layout are listed: the one prefix the template writes for
 * the day (`incoming/year=2026/month=12/day=05/hour=`), keeping the keys the template reads as that day.
 *
 * @example
 * dayGroup(layout, 'incoming/', '2026-12-05').ranges; // [{ prefix: 'incoming/year=2026/month=12/day=05/hour=' }]
 */
export function dayGroup(layout: Extract<StageInputLayout, { kind: 'days' }>, prefix: string, day: Day): InputGroup {
  const { scheme } = layout;
  const window = scheme.parseWindow(day);
  return {
    ranges: scheme.prefixesOf(window).map((p) => ({ prefix: `${prefix}${p}` })),
    holds: (key) => {
      const reading = scheme.windowOfKey(key.slice(prefix.length));
      return 'window' in reading && reading.window.name === day;
    },
  };
}

/**
 * The inputs outside any day: for a `days` layout, the keys under the prefix that the template reads
 * as no day, found by listing the prefix in key order, at most {@link MAX_SCANNED_OUTSIDE_DAYS} keys
 * per page (a page stops sooner once full); for an `all` layout, every input under the prefix.
 *
 * @example
 * outsideDaysGroup({ kind: 'all', note: '' }, 'incoming/').ranges; // [{ prefix: 'incoming/' }]
 */
export function outsideDaysGroup(layout: StageInputLayout, prefix: string): InputGroup {
  if (layout.kind === 'all') return { ranges: [{ prefix }] };
  const { scheme } = layout;
  return {
    ranges: [{ prefix }],
    holds: (key) => 'reason' in scheme.windowOfKey(key.slice(prefix.length)),
    maxScanned: MAX_SCANNED_OUTSIDE_DAYS,
  };
}

/**
 * A layout as the console's overview gives it to the page: `days` with the template the days are read
 * by, or `all` with the note that says why the inputs are one group.
 *
 * @example
 * layoutView({ kind: 'all', note: 'stage "clean" declares no time partitions: ...' }); // { kind: 'all', note: '...' }
 */
export function layoutView(layout: StageInputLayout): {
  readonly kind: 'days' | 'all';
  readonly template?: string;
  readonly note?: string;
} {
  return layout.kind === 'days' ? { kind: 'days', template: layout.template } : { kind: 'all', note: layout.note };
}
