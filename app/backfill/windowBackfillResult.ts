import type { WaitEnd } from '../common/waitEnd.js';
import type { PartitionStatus } from '../partition/judgePartition.js';
import type { WindowStageVerdict } from '../status/windowStageStatus.js';
import type { BackfillMode } from './planBackfill.js';

/** A planned window: its status when planned, and why it is planned. */
export interface PlannedWindow {
  readonly window: string;
  readonly status: PartitionStatus;
  /** Its status's reason, or which planned upstream window it is rebuilt for. */
  readonly reason: string;
  /** Planned because an upstream window it reads is planned, though its own status is not selected. */
  readonly cascade: boolean;
}

/** One stage's plan. */
export interface WindowStagePlan {
  readonly stage: string;
  readonly grain: string;
  readonly upstream?: string;
  readonly range: { readonly from: string; readonly to: string };
  /** Every window of the stage's range, judged as `rerun status --no-validate` judges it. */
  readonly windows: readonly WindowStageVerdict[];
  readonly counts: Readonly<Record<PartitionStatus, number>>;
  readonly tasks: readonly PlannedWindow[];
  /** The plan's listings and HEADs (a HEAD only where listings disagree on an upstream input). */
  readonly requests: { readonly list: number; readonly head: number };
}

/** What happened to one stage. */
export interface WindowStageBackfillResult extends WindowStagePlan {
  readonly enqueued: number;
  /** SendMessageBatch requests (ten messages each at most). */
  readonly sendRequests: number;
  /** Set when the stage was not planned or sent, and why (its upstream did not publish). */
  readonly notSent?: string;
  readonly wait?: {
    readonly ended: WaitEnd;
    readonly published: number;
    readonly total: number;
    readonly deadLettered: number;
    readonly elapsedMs: number;
    readonly polls: number;
    readonly requests: { readonly list: number; readonly head: number };
    readonly remaining: readonly {
      readonly window: string;
      readonly status: PartitionStatus;
      readonly reason: string;
    }[];
  };
}

/** What a window backfill did. */
export interface WindowBackfillResult {
  readonly mode: BackfillMode;
  readonly dryRun: boolean;
  readonly token: string;
  /** Every stage, in dependency order; a stage after one whose wait did not complete has `notSent`. */
  readonly stages: readonly WindowStageBackfillResult[];
  readonly interrupted: boolean;
}
