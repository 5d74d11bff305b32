import type { RunEventSink, SharedRunEvent } from '../runs/runEvents.js';
import type { JobOutcome, JobRunner, SubmittedJob } from './batchOperationsEngine.js';
import type { ReprocessEngine } from './batchOperationsJob.js';
import type { CodeVersionCutoff } from './codeVersionCutoff.js';
import type { ReprocessMode } from './planReprocess.js';
import type { ReprocessProgress, ReprocessResult, ReprocessWaitProgress } from './reprocessResult.js';
import type { JobView } from './s3ControlJobs.js';

/**
 * The parts of a reprocess's SUMMARY line (and of its `--json` object), as each engine has them:
 * reprocessReport.ts shapes them, in this order.
 */
export interface ReprocessSummaryParts {
  /** What was planned (not with `--job`, `--manifest` or `--generate-manifest`). */
  readonly plan?: {
    readonly result: ReprocessResult;
    readonly prefix: string;
    readonly mode: ReprocessMode;
    readonly dryRun: boolean;
    readonly cutoff: CodeVersionCutoff;
  };
  readonly engine?: ReprocessEngine;
  readonly runner?: JobRunner['kind'];
  readonly job?: {
    readonly id: string;
    readonly submitted?: SubmittedJob | undefined;
    readonly outcome?: JobOutcome | undefined;
    readonly outputBucket: string;
  };
  /** A job followed with `--wait`: its end, said as the SQS engine's wait fields. */
  readonly jobWait?: JobOutcome;
  /** The SQS engine's `--wait`. */
  readonly wait?: ReprocessResult['wait'];
}

/**
 * What a reprocess tells as it runs, in one stream: the kinds every run tells (app/runs/runEvents.ts)
 * and its own, which reprocessConsole.ts says in those kinds for the terminal, the run file
 * `rerun ui` reads and `--json`.
 */
export type ReprocessEvent =
  | SharedRunEvent
  /** Planning (and, on the SQS engine outside a dry run, enqueueing as it plans). */
  | { readonly kind: 'progress'; readonly phase: 'planning' | 'enqueueing'; readonly progress: ReprocessProgress }
  /** A check of the SQS engine's `--wait`. */
  | { readonly kind: 'waiting'; readonly progress: ReprocessWaitProgress }
  /** A poll of a Batch Operations job. */
  | { readonly kind: 'job'; readonly view: JobView; readonly elapsedMs: number }
  /** A job was created (or found: the same request is the same job). */
  | { readonly kind: 'jobSubmitted'; readonly job: SubmittedJob; readonly runner: JobRunner['kind'] }
  /** The plan's closing table; `sent` says what became of the planned inputs. */
  | {
      readonly kind: 'plan';
      readonly result: ReprocessResult;
      readonly inputBucket: string;
      readonly sent?: string;
    }
  /** How a job ended (or how to follow it). */
  | {
      readonly kind: 'jobEnd';
      readonly jobId: string;
      readonly outcome: JobOutcome | undefined;
      readonly runner: JobRunner['kind'];
      readonly waited: boolean;
    }
  /** The run's end: its exit code (reprocessExitCode.ts) and the parts of its SUMMARY line. */
  | { readonly kind: 'end'; readonly code: number; readonly parts: ReprocessSummaryParts };

/** Where a reprocess sends its events. */
export type ReprocessEvents = RunEventSink<ReprocessEvent>;
