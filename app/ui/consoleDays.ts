import type { Day } from '../../src/keys/partition.js';
import type { PartitionStatus } from '../partition/judgePartition.js';
import type { ConsoleDaysJudge } from './consoleDaysJudge.js';

/** One day of a user's pipeline, as the days view shows it. */
export interface ConsoleDay {
  /** The day, or for a window stage of another grain, the window's name (`2026-12-05T13`, `2026-12`). */
  readonly day: string;
  /** A window stage's verdict (as `rerun status --stage`), or `unjudged` when the pipeline has no window stage. */
  readonly status: PartitionStatus | typeof UNJUDGED;
  readonly reason: string;
  /** The window's inputs (the upstream outputs in it), or the day's inputs when unjudged. */
  readonly inputs: number;
  /** The window's output key (a window stage only). */
  readonly outputKey?: string;
  /** Keys under the window's listings in no window of their scheme (a window stage only). */
  readonly skipped?: number;
}

/** The days of a user's pipeline: its window stage's, judged, or its inputs' alone. */
export interface ConsoleDaysReport {
  readonly from: Day;
  readonly to: Day;
  /** The stage the days are of: its name, and whether they are judged (`window`) or counted (`inputs`). */
  readonly stage: {
    readonly name: string;
    readonly kind: ConsoleDaysJudge['kind'];
    readonly codeVersion?: string;
    /** The window stage's grain, when it is not daily (its windows are then hours, weeks or months). */
    readonly grain?: string;
  };
  readonly partitions: readonly ConsoleDay[];
  /** Why no day is shown (a user's object stage whose layout has no days): its inputs are one group, `undated`. */
  readonly note?: string;
  readonly counts: Readonly<Partial<Record<PartitionStatus | typeof UNJUDGED, number>>>;
  readonly requests: { readonly list: number; readonly head: number };
}

/** The status of a day of a pipeline with no window stage: nothing judges it. */
export const UNJUDGED = 'unjudged';
