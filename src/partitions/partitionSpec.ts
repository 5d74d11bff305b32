/**
 * How a stage's objects are grouped into partitions, as plain data (JSON): what a pipeline
 * description carries, what a stack publishes for the tools, and what `partitionScheme(spec)`
 * (src/partitions/) turns into a scheme that reads keys. Dagster's vocabulary: a scheme is a value,
 * not a key pattern scattered through code.
 */

/** The grains of a time-window scheme. */
export const TimeGrain = {
  HOURLY: 'hourly',
  DAILY: 'daily',
  WEEKLY: 'weekly',
  MONTHLY: 'monthly',
} as const;
export type TimeGrain = (typeof TimeGrain)[keyof typeof TimeGrain];

/**
 * Time windows (UTC) read from a key template. The template is matched against the part of the key
 * after the stage's prefix; its fields are `{yyyy}`, `{MM}`, `{dd}`, `{HH}` (and `{ww}` for an ISO
 * week), e.g. `dt={yyyy}-{MM}-{dd}` or `year={yyyy}/month={MM}/day={dd}/hour={HH}` or `{yyyy}/{MM}/{dd}`.
 *
 * @example
 * const daily: TimePartitionSpec = { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' };
 */
export interface TimePartitionSpec {
  readonly kind: 'time';
  readonly grain: TimeGrain;
  readonly template: string;
}

/**
 * A fixed list of partition names, each a path segment of the key after the stage's prefix
 * (e.g. `region=eu`).
 *
 * @example
 * const regions: StaticPartitionSpec = { kind: 'static', keys: ['region=eu', 'region=us'] };
 */
export interface StaticPartitionSpec {
  readonly kind: 'static';
  readonly keys: readonly string[];
}

/**
 * No partitions: the stage's objects form one unit.
 *
 * @example
 * const none: UnpartitionedSpec = { kind: 'none' };
 */
export interface UnpartitionedSpec {
  readonly kind: 'none';
}

/** A partition scheme as data. */
export type PartitionSpec = TimePartitionSpec | StaticPartitionSpec | UnpartitionedSpec;
