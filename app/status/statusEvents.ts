import type { RunEventSink, SharedRunEvent } from '../runs/runEvents.js';
import type { ObjectStageStatus } from './objectStageStatus.js';
import type { StatusReport } from './partitionStatus.js';
import type { WindowStageStatus } from './windowStageStatus.js';

/** rerun's daily summaries judged, with the buckets and code version they were judged for. */
export interface SummariesStatus extends StatusReport {
  readonly outputBucket: string;
  readonly inputBucket: string;
  readonly codeVersion: string;
}

/** What a `rerun status` judged: rerun's daily summaries, an object stage's inputs or a window stage's windows. */
export type JudgedStatus =
  | {
      readonly of: 'summaries';
      readonly report: SummariesStatus;
      /** What to check when the window holds nothing (emptyWindowHint), if it does not. */
      readonly hint?: string | undefined;
    }
  | { readonly of: 'objectStage'; readonly report: ObjectStageStatus }
  | {
      readonly of: 'windowStage';
      /** The window forms the stage's scheme takes, as its header says them. */
      readonly forms: string;
      readonly report: WindowStageStatus;
    };

/**
 * What a `rerun status` tells, in one stream: the kinds every run tells (app/runs/runEvents.ts) and
 * its own, which statusConsole.ts says in those kinds for the terminal and `--json`.
 */
export type StatusEvent =
  | SharedRunEvent
  /** What was judged: its table and counts, for a reader. */
  | { readonly kind: 'judged'; readonly judged: JudgedStatus }
  /** The end: its exit code, and what was judged, for the SUMMARY line and the `--json` object. */
  | { readonly kind: 'end'; readonly code: number; readonly judged: JudgedStatus };

/** Where a `rerun status` sends its events. */
export type StatusEvents = RunEventSink<StatusEvent>;
