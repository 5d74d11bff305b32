import type { SQSClient } from '@aws-sdk/client-sqs';
import { windowsIntersecting } from '../../src/partitions/mapWindows.js';
import type { PartitionWindow } from '../../src/partitions/partitionScheme.js';
import type { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import type { WindowTask } from '../../src/window/defineWindowTask.js';
import { windowTaskMessage } from '../../src/window/windowTaskMessage.js';
import { RateLimiter } from '../common/RateLimiter.js';
import { sendMessageBatch } from '../common/sendMessageBatch.js';
import { WaitEnd } from '../common/waitEnd.js';
import { deadLetterMark, waitForQueue } from '../common/waitForQueue.js';
import type { InputRules } from '../partition/inputCoverage.js';
import { windowStageStatus } from '../status/windowStageStatus.js';
import type { BackfillEvents } from './backfillEvents.js';
import { type BackfillMode, backfillSelects, BackfillMode as Mode } from './planBackfill.js';
import type {
  PlannedWindow,
  WindowBackfillResult,
  WindowStageBackfillResult,
  WindowStagePlan,
} from './windowBackfillResult.js';
import { WindowPublishWatch } from './windowPublishWatch.js';

/** One stage a window backfill plans, in dependency order (each after the stage it reads). */
export interface WindowBackfillStage {
  /** The stage as the tools judge it (windowStageTask). */
  readonly task: WindowTask<unknown, unknown>;
  /** The stage it reads, when it is planned in the same backfill (`--downstream`). */
  readonly upstream?: string;
  /** Its FIFO work queue. Required unless the backfill is a dry run. */
  readonly queueUrl?: string;
  /** @default not watched */
  readonly dlqUrl?: string;
  /** windowStageInputRules of the stage, when it reads an object stage (its `incomplete` state). */
  readonly upstreamInputs?: InputRules;
}

/** Options of {@link runWindowStageBackfill}. */
export interface RunWindowStageBackfillOptions {
  readonly reader: S3PartitionStore;
  readonly sqs: Pick<SQSClient, 'send'>;
  /** The stage asked for first, then its downstream stages in dependency order. */
  readonly stages: readonly WindowBackfillStage[];
  /** The first stage's windows (`--from..--to`). Downstream stages get the windows intersecting them. */
  readonly windows: readonly PartitionWindow[];
  /** @default BackfillMode.STALE */
  readonly mode?: BackfillMode;
  /** @default false */
  readonly dryRun?: boolean;
  /** @default no limit */
  readonly ratePerSecond?: number;
  /**
   * Send stage by stage: each stage's windows, then wait until they are published before planning
   * and sending the next stage. Without it every stage is sent at once.
   * @default false
   */
  readonly wait?: boolean;
  /** @default 2000 */
  readonly pollIntervalMs?: number;
  /** For the whole backfill. @default no limit */
  readonly timeoutMs?: number;
  /**
   * Part of every message's deduplication id (windowTaskMessage's `token`), so a deliberate backfill
   * sends a window again even within SQS FIFO's 5-minute deduplication interval.
   */
  readonly token: string;
  readonly signal?: AbortSignal;
  /**
   * Where it tells each stage's plan, each enqueued batch and each progress check while waiting.
   * @default told to no one
   */
  readonly events?: BackfillEvents;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * A backfill of a user's window stage (and, with more stages, of the stages downstream of it): each
 * stage planned with `rerun status`'s judgement (windowStageStatus, listings only), the windows the
 * mode selects plus, downstream, every window that reads a planned upstream window (it will change);
 * one windowTaskMessage per planned window on the stage's FIFO queue.
 *
 * With `wait`, stage by stage: a downstream stage is planned and sent only once every planned window
 * of the stage it reads is published, so its task builds from the new upstream outputs. Without it,
 * every stage is sent at once: a downstream task may run before its upstream window is rebuilt; it
 * then builds from (or keeps) the old upstream output, status calls it stale once the upstream
 * publishes, and the next backfill (or the next scheduled run) rebuilds it.
 *
 * @example
 * const result = await runWindowStageBackfill({ reader, sqs, stages: [{ task, queueUrl }],
 *   windows: task.scheme.windowsBetween('2026-12-01', '2026-12-07'), token: 'backfill-1', wait: true });
 */
export async function runWindowStageBackfill(options: RunWindowStageBackfillOptions): Promise<WindowBackfillResult> {
  const mode = options.mode ?? Mode.STALE;
  const now = options.now ?? Date.now;
  const started = now();
  const dryRun = options.dryRun === true;
  const limiter = options.ratePerSecond ? new RateLimiter({ perSecond: options.ratePerSecond, now }) : undefined;
  const results: WindowStageBackfillResult[] = [];
  const windowsOf = new Map<string, readonly PartitionWindow[]>();
  const plannedOf = new Map<string, ReadonlySet<string>>();
  let interrupted = false;
  let blocked: string | undefined;

  // Without --wait every stage is planned before anything is sent: the plan is what was judged.
  const plans: WindowStagePlan[] = [];
  const planStage = async (stage: WindowBackfillStage, index: number): Promise<WindowStagePlan> => {
    const windows = index === 0 ? options.windows : downstreamWindows(stage, windowsOf);
    windowsOf.set(stage.task.definition.name, windows);
    const plan = await planWindowStage(options.reader, stage, windows, mode, plannedOf);
    plannedOf.set(plan.stage, new Set(plan.tasks.map((t) => t.window)));
    options.events?.({ kind: 'stagePlan', plan, dryRun: options.dryRun === true });
    return plan;
  };
  if (!options.wait || dryRun) {
    for (const [i, stage] of options.stages.entries()) plans.push(await planStage(stage, i));
  }

  for (const [i, stage] of options.stages.entries()) {
    const name = stage.task.definition.name;
    if (blocked !== undefined || interrupted) {
      results.push(notSentStage(stage, blocked ?? 'the backfill was interrupted before this stage'));
      continue;
    }
    const plan = plans[i] ?? (await planStage(stage, i));
    if (dryRun || plan.tasks.length === 0) {
      results.push({ ...plan, enqueued: 0, sendRequests: 0 });
      continue;
    }
    if (!stage.queueUrl) throw new RangeError(`stage "${name}" has no queue URL to send its windows to`);
    const deadBefore = await deadLetterMark(options.sqs, stage.dlqUrl);
    const sent = await sendWindows(options, stage.queueUrl, name, plan.tasks, limiter);
    interrupted = sent.enqueued < plan.tasks.length;
    if (!options.wait || interrupted) {
      results.push({ ...plan, ...sent });
      continue;
    }
    const windows = (windowsOf.get(name) ?? []).filter((w) => plan.tasks.some((t) => t.window === w.name));
    const wait = await waitForStage(options, stage, plan, windows, deadBefore, started, now);
    results.push({ ...plan, ...sent, wait });
    if (wait.ended === WaitEnd.INTERRUPTED) interrupted = true;
    else if (wait.ended !== WaitEnd.COMPLETE) {
      blocked = `not sent: stage "${name}" ended its wait ${wait.ended} with ${wait.total - wait.published} window(s) not published`;
    }
  }
  return { mode, dryRun, token: options.token, stages: results, interrupted };
}

/** A downstream stage's windows: those of its scheme intersecting the windows of the stage it reads. */
function downstreamWindows(
  stage: WindowBackfillStage,
  windowsOf: ReadonlyMap<string, readonly PartitionWindow[]>,
): PartitionWindow[] {
  const upstream = stage.upstream !== undefined ? windowsOf.get(stage.upstream) : undefined;
  if (!upstream) throw new RangeError(`stage "${stage.task.definition.name}" is planned before the stage it reads`);
  const seen = new Map<string, PartitionWindow>();
  for (const w of upstream) {
    for (const mine of windowsIntersecting(stage.task.scheme, w)) if (!seen.has(mine.name)) seen.set(mine.name, mine);
  }
  return [...seen.values()];
}

/** One stage judged now (listings only, as `rerun status --no-validate`), and the windows it reruns. */
async function planWindowStage(
  reader: S3PartitionStore,
  stage: WindowBackfillStage,
  windows: readonly PartitionWindow[],
  mode: BackfillMode,
  plannedOf: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<WindowStagePlan> {
  const { task } = stage;
  const judged = await windowStageStatus(task, windows, {
    reader,
    ...(stage.upstreamInputs ? { upstreamInputs: stage.upstreamInputs } : {}),
  });
  const upstreamPlanned = stage.upstream !== undefined ? plannedOf.get(stage.upstream) : undefined;
  const upstreamScheme = task.sources[0]?.scheme;
  const tasks: PlannedWindow[] = [];
  for (const [i, verdict] of judged.windows.entries()) {
    if (backfillSelects(mode, verdict.status)) {
      tasks.push({ window: verdict.window, status: verdict.status, reason: verdict.reason, cascade: false });
      continue;
    }
    const window = windows[i];
    if (!upstreamPlanned || upstreamPlanned.size === 0 || !upstreamScheme || !window) continue;
    const reads = windowsIntersecting(upstreamScheme, window).filter((w) => upstreamPlanned.has(w.name));
    if (reads.length === 0) continue;
    tasks.push({
      window: verdict.window,
      status: verdict.status,
      reason: `${verdict.reason}; rebuilt for ${stage.upstream} ${reads.map((w) => w.name).join(', ')} (planned)`,
      cascade: true,
    });
  }
  return {
    stage: judged.stage,
    grain: judged.grain,
    ...(stage.upstream !== undefined ? { upstream: stage.upstream } : {}),
    range: { from: windows[0]?.name ?? '', to: windows.at(-1)?.name ?? '' },
    windows: judged.windows,
    counts: judged.counts,
    tasks,
    requests: judged.requests,
  };
}

/** One windowTaskMessage per planned window, ten per SendMessageBatch. */
async function sendWindows(
  options: RunWindowStageBackfillOptions,
  queueUrl: string,
  stage: string,
  tasks: readonly PlannedWindow[],
  limiter: RateLimiter | undefined,
): Promise<{ enqueued: number; sendRequests: number }> {
  let enqueued = 0;
  let sendRequests = 0;
  for (let start = 0; start < tasks.length; start += 10) {
    if (options.signal?.aborted) break;
    const batch = tasks.slice(start, start + 10);
    await limiter?.take(batch.length);
    const messages = batch.map((t) => windowTaskMessage({ stage, window: t.window, token: options.token }));
    sendRequests++;
    enqueued += await sendMessageBatch(options.sqs, queueUrl, messages, 'Run the same backfill again to resume.');
    options.events?.({ kind: 'enqueued', stage, sent: enqueued, total: tasks.length });
  }
  return { enqueued, sendRequests };
}

/**
 * Polls the stage's planned windows (WindowPublishWatch: one listing of their folders per check, the
 * same judgement as the plan for the windows whose folder changed) and its queues until they are
 * published.
 */
async function waitForStage(
  options: RunWindowStageBackfillOptions,
  stage: WindowBackfillStage,
  plan: WindowStagePlan,
  windows: readonly PartitionWindow[],
  deadBefore: number,
  started: number,
  now: () => number,
): Promise<NonNullable<WindowStageBackfillResult['wait']>> {
  const total = plan.tasks.length;
  const watch = new WindowPublishWatch({
    task: stage.task,
    windows,
    reader: options.reader,
    ...(stage.upstreamInputs ? { upstreamInputs: stage.upstreamInputs } : {}),
  });
  const wait = await waitForQueue({
    sqs: options.sqs,
    queueUrl: stage.queueUrl as string,
    dlqUrl: stage.dlqUrl,
    deadLetteredBefore: deadBefore,
    timing: options,
    started,
    now,
    judge: (previous) => watch.check(previous !== undefined && previous.queued + previous.inFlight === 0),
    complete: ({ published }) => published === total,
    onProgress: ({ published }, queue) =>
      options.events?.({ kind: 'waiting', stage: plan.stage, progress: { published, total, ...queue } }),
  });
  const { published, remaining } = wait.judged;
  const { deadLettered, elapsedMs } = wait.queue;
  return {
    ended: wait.ended,
    published,
    total,
    deadLettered,
    elapsedMs,
    polls: wait.polls,
    requests: { ...watch.requests },
    remaining: remaining.map((w) => ({ window: w.window, status: w.status, reason: w.reason })),
  };
}

/** A stage left unplanned because the stage it reads did not publish. */
function notSentStage(stage: WindowBackfillStage, why: string): WindowStageBackfillResult {
  const counts = { published: 0, missing: 0, stale: 0, invalid: 0, incomplete: 0 };
  const { spec } = stage.task.scheme;
  return {
    stage: stage.task.definition.name,
    grain: spec.kind === 'time' ? spec.grain : spec.kind,
    ...(stage.upstream !== undefined ? { upstream: stage.upstream } : {}),
    range: { from: '', to: '' },
    windows: [],
    counts,
    tasks: [],
    requests: { list: 0, head: 0 },
    enqueued: 0,
    sendRequests: 0,
    notSent: why,
  };
}
