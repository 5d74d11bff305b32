import type { RunEventSink, SharedRunEvent } from '../runs/runEvents.js';
import type { BackfillProgress, BackfillResult } from './backfillResult.js';
import type { BackfillPlan } from './planBackfill.js';
import type { WindowBackfillResult, WindowStagePlan } from './windowBackfillResult.js';

/**
 * What a backfill tells as it runs, in one stream: the kinds every run tells (app/runs/runEvents.ts)
 * and its own, which backfillConsole.ts says in those kinds for the terminal, the run file
 * `rerun ui` reads and `--json`. A backfill of rerun's daily summaries (runBackfill.ts) and one of a
 * user's window stages (runWindowStageBackfill.ts) tell the same kinds; a window stage's progress
 * names its stage.
 */
export type BackfillEvent =
  | SharedRunEvent
  /** The daily summaries' plan, known before anything is sent. */
  | {
      readonly kind: 'plan';
      readonly plan: BackfillPlan;
      readonly from: string;
      readonly to: string;
      readonly dryRun: boolean;
    }
  /** One window stage's plan, known before its windows are sent. */
  | { readonly kind: 'stagePlan'; readonly plan: WindowStagePlan; readonly dryRun: boolean }
  /** A batch was enqueued: `sent` of `total` so far (of the window stage `stage`, when it is one). */
  | { readonly kind: 'enqueued'; readonly stage?: string; readonly sent: number; readonly total: number }
  /** A progress check while waiting (of the window stage `stage`, when it is one). */
  | { readonly kind: 'waiting'; readonly stage?: string; readonly progress: BackfillProgress }
  /** How a backfill of the daily summaries ended (its table). */
  | { readonly kind: 'end'; readonly result: BackfillResult }
  /** The run's end: its exit code and SUMMARY line. */
  | { readonly kind: 'summary'; readonly result: BackfillResult; readonly code: number }
  /** How a window stage backfill over `from..to` of `stage` (the one asked) ended (its table). */
  | {
      readonly kind: 'stageEnd';
      readonly result: WindowBackfillResult;
      readonly stage: string;
      readonly from: string;
      readonly to: string;
    }
  /** The window stage backfill's end: its exit code and SUMMARY line. */
  | {
      readonly kind: 'stageSummary';
      readonly result: WindowBackfillResult;
      readonly stage: string;
      readonly from: string;
      readonly to: string;
      readonly code: number;
    };

/** Where a backfill sends its events. */
export type BackfillEvents = RunEventSink<BackfillEvent>;
