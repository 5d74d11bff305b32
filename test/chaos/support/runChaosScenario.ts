import { randomBytes } from 'node:crypto';
import { SUMMARIZE_CODE_VERSION } from '../../../app/partition/codeVersion.js';
import { scheduledSummaryMessage } from '../../../app/partition/localSchedule.js';
import { LineageKind, lineageRoot, type SummaryLayout } from '../../../app/partition/summaryLayout.js';
import { scheduleMessageGroupAt, summaryTaskEnvelope } from '../../../app/partition/summaryTask.js';
import type { Topology } from '../../../app/topology.js';
import type { PipelineClients } from '../../../src/ledger/pipelineClients.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../../../src/normalize/normalizeWorker.js';
import type { WorkerDefinition } from '../../../src/worker/defineWorker.js';
import { Service } from './awsRequest.js';
import { ChaosPipeline, type ChaosRunnerSettings, ChaosStage, type RunnerSlot } from './ChaosPipeline.js';
import { runCleanReference } from './cleanReference.js';
import type { FaultPlan, Interceptor, ProxyLogEntry } from './FaultProxy.js';
import { CHAOS_WINDOW, type ChaosInput, generateInputs, rewriteInput } from './inputs.js';
import { createPrng, type Prng } from './prng.js';
import { withSummarizeTimeout } from './scenarios.js';
import { type ChaosVerdict, type InputHistory, verifyAgainstClean } from './verifyAgainstClean.js';
import { type SummaryVerdict, verifySummaries } from './verifySummaries.js';

/** Where scenarios run: the emulator and the settings shared by every scenario. */
export interface ChaosEnvironment {
  /** The emulator (moto with atomic conditional writes). */
  readonly endpoint: string;
  /** Clients on the emulator, without faults. */
  readonly clients: PipelineClients;
  /** Timeouts and redrive of the scenario queues. */
  readonly topology: Topology;
  readonly runner: ChaosRunnerSettings;
}

/** A seeded scenario: inputs, faults, kills, duplicates, mutations during the run. */
export interface ChaosScenario {
  readonly name: string;
  readonly seed: number;
  /** Input files uploaded at the start. */
  readonly items: number;
  /** Runner processes on the normalize queue. @default 1 */
  readonly runners?: number;
  /** Runner processes on the summarize queue. @default the same as `runners` */
  readonly summaryRunners?: number;
  /** Overrides of the environment's runner settings (batch size, concurrency). @default none */
  readonly runner?: Partial<ChaosRunnerSettings>;
  /** Faults between the runners and AWS. @default none */
  readonly awsFaults?: FaultPlan;
  /** Faults between the runners and the webhook. @default none */
  readonly webhookFaults?: FaultPlan;
  /** Deliver every input's event, and every summary task, a second time. @default false */
  readonly duplicateDeliveries?: boolean;
  /** Inputs overwritten / deleted while the runners work, and late events for their older versions. */
  readonly mutations?: {
    readonly overwrite: number;
    readonly delete: number;
    /** Send, after the change, an event naming the old ETag (overwrites) or the deleted key. */
    readonly lateEvents: boolean;
  };
  /** Non-S3 messages that must end in the DLQ (and nothing else). @default 0 */
  readonly poison?: number;
  /** Invalid summary tasks that must end in the summarize DLQ (and nothing else). @default 0 */
  readonly summaryPoison?: number;
  /** SIGKILL normalize runner processes at random request boundaries (each followed by a fresh process). */
  readonly kills?: Kills;
  /** The same for the summarize runner processes. @default none */
  readonly summaryKills?: Kills;
  /**
   * The summarize function's timeout in this scenario, s (its queue's visibility timeout is set to
   * the same, the least Lambda accepts): see {@link withSummarizeTimeout}.
   * @default the chaos topology's (as normalize's, 8 s)
   */
  readonly summarizeTimeoutSeconds?: number;
  /** Give up after this long. @default 300_000 */
  readonly timeoutMs?: number;
}

/** SIGKILLs at random request boundaries: `count` in all, each `gap[0]..gap[1]` work requests into a fresh process. */
export interface Kills {
  readonly count: number;
  readonly gap: readonly [number, number];
}

/** What the scenario sent to the summary stage. */
export interface SummaryTasks {
  /** Tasks the mid-run backfill enqueued (normalize still busy: these summarize partial days). */
  readonly midRun: number;
  /** Second copies of them (FIFO: sent with another deduplication id, so SQS delivers them). */
  readonly duplicates: number;
  /** "Summarize yesterday" messages, as the daily schedule sends them. */
  readonly scheduled: number;
  /** Tasks the catch-up backfill enqueued once normalize was done (the days that were stale). */
  readonly catchUp: number;
}

/** One row of the chaos table. */
export interface ScenarioResult extends ChaosVerdict {
  readonly name: string;
  readonly seed: number;
  readonly faultsInjected: number;
  readonly faultsByKind: Record<string, number>;
  /** Kills of both stages. */
  readonly kills: number;
  readonly killsByStage: Record<ChaosStage, number>;
  /** The summary stage's own verdict (its lost, duplicated and DLQ figures are included in the totals). */
  readonly summaries: SummaryVerdict;
  readonly summaryTasks: SummaryTasks;
  readonly requests: number;
  readonly runnerStarts: number;
  readonly recordsFailed: number;
  readonly invocationsTimedOut: number;
  readonly openUploads: number;
  readonly durationMs: number;
  /** The most frequent record failure reasons (what the faults turned into before the retries absorbed them). */
  readonly failureReasons: Record<string, number>;
}

/**
 * Runs one scenario through both stages and compares its final state with a clean run of the same
 * inputs (which runs alongside, on its own resources):
 *
 * 1. upload the inputs (and poison), start the runners of both stages (faults, kills per stage);
 * 2. once a quarter of the work is done: overwrite and delete inputs, and run a backfill of the
 *    window while normalize is still busy (its summaries are of partial days), plus duplicates of
 *    its tasks and a scheduled "summarize yesterday" message;
 * 3. when both queues are drained, run the same backfill again: it must plan exactly the days whose
 *    summary is no longer current, and bring them up to date;
 * 4. verify the normalize stage (verifyAgainstClean) and the summary stage (verifySummaries).
 *
 * Inputs, fault decisions, kill points and mutations all derive from `scenario.seed`; the
 * interleaving of concurrent requests does not, so a rerun with the same seed injects the same kinds
 * of faults at the same rates, not necessarily at the same requests.
 *
 * @example
 * const result = await runChaosScenario(env, { name: 'faults', seed: 1, items: 12, awsFaults: { rates: { 'error-500': 0.05 } } });
 * result.lost; // 0
 */
export async function runChaosScenario(env: ChaosEnvironment, scenario: ChaosScenario): Promise<ScenarioResult> {
  const started = Date.now();
  const rng = createPrng(scenario.seed);
  const inputs = generateInputs(rng.fork('inputs'), scenario.items);
  const plan = planMutations(rng.fork('mutations'), inputs, scenario.mutations);
  const poison = Array.from({ length: scenario.poison ?? 0 }, (_, i) =>
    i % 2 === 0 ? JSON.stringify({ orderId: i, note: 'not an S3 event' }) : `poison ${i}: not even JSON`,
  );
  const summaryPoison = Array.from({ length: scenario.summaryPoison ?? 0 }, (_, i) =>
    i % 2 === 0
      ? JSON.stringify({ type: 'summarize', partition: `dt=2026-02-${30 + i}` })
      : `summary poison ${i}: not a task`,
  );
  const id = `chaos-${randomBytes(3).toString('hex')}`;
  const timeoutMs = scenario.timeoutMs ?? 300_000;
  const runner: ChaosRunnerSettings = { ...env.runner, ...scenario.runner };
  const topology =
    scenario.summarizeTimeoutSeconds === undefined
      ? env.topology
      : withSummarizeTimeout(env.topology, scenario.summarizeTimeoutSeconds);
  const window = CHAOS_WINDOW;

  const deletedKeys = new Set(plan.deletes.map((d) => d.key));
  const replaced = new Map(plan.overwrites.map((o) => [o.input.key, o.next]));
  const clean = runCleanReference({
    endpoint: env.endpoint,
    clients: env.clients,
    id: `${id}-clean`,
    topology,
    runner,
    // What the input bucket holds at the end, and every content it held before.
    finals: inputs.filter((i) => !deletedKeys.has(i.key)).map((i) => replaced.get(i.key) ?? i),
    superseded: inputs.filter((i) => deletedKeys.has(i.key) || replaced.has(i.key)),
    poison,
    window,
    timeoutMs,
  });
  // Do not leave the clean run's rejection unobserved while the chaos run goes on.
  clean.catch(() => {});

  let records = 0;
  let onRecords: (() => void) | undefined;
  const pipeline = await ChaosPipeline.create({
    endpoint: env.endpoint,
    clients: env.clients,
    id,
    topology,
    runner,
    runners: scenario.runners ?? 1,
    summaryRunners: scenario.summaryRunners ?? scenario.runners ?? 1,
    ...(scenario.awsFaults ? { awsFaults: scenario.awsFaults } : {}),
    ...(scenario.webhookFaults ? { webhookFaults: scenario.webhookFaults } : {}),
    seed: scenario.seed,
    onRunnerEvent: (event) => {
      if (event.event !== 'record') return;
      records++;
      onRecords?.();
    },
  });
  try {
    const history = new Map<string, { etags: string[]; finalEtag: string | undefined }>();
    for (const body of poison) await pipeline.sendRaw(body);
    for (const [i, body] of summaryPoison.entries()) {
      await pipeline.sendSummaryTask(body, { groupId: `poison-${i}`, deduplicationId: `${id}-poison-${i}` });
    }
    for (const input of inputs) {
      const etag = await pipeline.upload(input.key, input.body);
      history.set(input.key, { etags: [etag], finalEtag: etag });
    }
    if (scenario.duplicateDeliveries) {
      for (const input of inputs) await pipeline.sendEvent(input.key, history.get(input.key)?.finalEtag);
    }

    const killers = {
      [ChaosStage.NORMALIZE]: scenario.kills ? randomKiller(rng.fork('kills'), scenario.kills) : undefined,
      [ChaosStage.SUMMARIZE]: scenario.summaryKills
        ? randomKiller(rng.fork('summary-kills'), scenario.summaryKills)
        : undefined,
    };
    pipeline.startRunners((slot) => killers[slot.stage]?.(slot));

    // Once a quarter of the uploads have been handled the runners are mid-way: change inputs and
    // start summarizing. (If the runners make no progress for a minute, go on anyway; the drain
    // then times out and says so.)
    const threshold = Math.max(1, Math.floor(scenario.items / 4));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 60_000);
      const check = () => {
        if (records >= threshold) {
          onRecords = undefined;
          clearTimeout(timer);
          resolve();
        }
      };
      onRecords = check;
      check();
    });
    if (scenario.mutations) {
      for (const { input, next } of plan.overwrites) {
        const entry = history.get(input.key);
        const etag = await pipeline.upload(next.key, next.body);
        if (entry) {
          entry.etags.push(etag);
          entry.finalEtag = etag;
        }
        if (scenario.mutations.lateEvents) await pipeline.sendEvent(input.key, entry?.etags[0]);
      }
      for (const input of plan.deletes) {
        await pipeline.deleteInput(input.key);
        const entry = history.get(input.key);
        if (entry) entry.finalEtag = undefined;
        if (scenario.mutations.lateEvents) await pipeline.sendEvent(input.key, entry?.etags[0]);
      }
    }
    const midRun = await pipeline.backfill(window);
    let duplicates = 0;
    if (scenario.duplicateDeliveries) {
      for (const task of midRun.tasks) {
        const envelope = summaryTaskEnvelope(task.day, task.lineageHash);
        await pipeline.sendSummaryTask(envelope.body, {
          groupId: envelope.groupId,
          deduplicationId: `${envelope.deduplicationId}:again`,
        });
        duplicates++;
      }
    }
    // The daily schedule's message for the window's last day, fired at 01:15 UTC the day after.
    const firedAt = Date.parse(`${window.to}T01:15:00Z`) + 86_400_000;
    await pipeline.sendSummaryTask(scheduledSummaryMessage(firedAt), {
      groupId: scheduleMessageGroupAt(firedAt),
      deduplicationId: `schedule-${firedAt}`,
    });

    await pipeline.waitDrained(timeoutMs);
    const catchUp = await pipeline.backfill(window);
    await pipeline.waitDrained(timeoutMs);
    // A healthy message proven dead-lettered by a crash storm is what an operator redrives; the
    // final state is then checked against the clean run as for every other message.
    const redriven = await pipeline.redriveProvenCrashStorms(topology.normalize.maxReceiveCount);
    if (redriven.length > 0) {
      await pipeline.waitDrained(timeoutMs);
      await pipeline.backfill(window);
      await pipeline.waitDrained(timeoutMs);
    }
    await pipeline.stopRunners();
    const snapshot = await pipeline.snapshot();
    const reference = await clean;
    const stats = pipeline.stats();
    const worker = createNormalizeWorker({ outputBucket: snapshot.outputBucket, prefixes: topology });
    const verdict = verifyAgainstClean({
      snapshot,
      history: [...history].map(([key, h]): InputHistory => ({ key, etags: h.etags, finalEtag: h.finalEtag })),
      clean: reference,
      worker,
      codeVersion: NORMALIZE_CODE_VERSION,
      poison,
      failurePrefix: topology.failurePrefix,
      summaryPrefix: topology.summaryPrefix,
      crashStorm: {
        maxReceiveCount: topology.normalize.maxReceiveCount,
        diedWhileHeld: stats.byStage.normalize.diedWhileHeld,
      },
      redriven: redriven.map((m) => m.messageId),
    });
    const summaries = await verifySummaries({
      snapshot,
      layout: pipeline.summaryLayout,
      window,
      codeVersion: SUMMARIZE_CODE_VERSION,
      clean: reference.summaries ?? new Map(),
      deleted: lineageOfInputs(plan.deletes, worker, snapshot.inputBucket, pipeline.summaryLayout),
      poison: summaryPoison,
      failurePrefix: topology.failurePrefix,
      crashStorm: {
        maxReceiveCount: topology.summarize.maxReceiveCount,
        diedWhileHeld: stats.byStage.summarize.diedWhileHeld,
      },
    });
    const faultsByKind: Record<string, number> = {};
    for (const source of [stats.proxies.faults, stats.webhook.faults]) {
      for (const [kind, n] of Object.entries(source)) faultsByKind[kind] = (faultsByKind[kind] ?? 0) + n;
    }
    return {
      name: scenario.name,
      seed: scenario.seed,
      ...verdict,
      lost: verdict.lost + summaries.lost,
      duplicated: verdict.duplicated + summaries.duplicated,
      dlqNonPoison: verdict.dlqNonPoison + summaries.dlqNonPoison,
      dlqMissingPoison: verdict.dlqMissingPoison + summaries.dlqMissingPoison,
      problems: [...verdict.problems, ...summaries.problems],
      crashStorm: [
        ...(verdict.crashStorm ?? []),
        ...(summaries.crashStorm ?? []),
        ...redriven.map((m) => `normalize DLQ ${m.messageId}: every receive died with it; redriven, then verified`),
      ],
      summaries,
      summaryTasks: { midRun: midRun.enqueued, duplicates, scheduled: 1, catchUp: catchUp.enqueued },
      faultsInjected: Object.values(faultsByKind).reduce((a, b) => a + b, 0),
      faultsByKind,
      kills: stats.runners.kills,
      killsByStage: {
        [ChaosStage.NORMALIZE]: stats.byStage.normalize.kills,
        [ChaosStage.SUMMARIZE]: stats.byStage.summarize.kills,
      },
      requests: stats.proxies.requests + stats.webhook.requests,
      runnerStarts: stats.runners.starts,
      recordsFailed: stats.runners.records.failed ?? 0,
      invocationsTimedOut: stats.runners.outcomes.timeout ?? 0,
      openUploads: snapshot.openUploads,
      durationMs: Date.now() - started,
      failureReasons: topReasons(stats.runners.failureReasons, 6),
    };
  } finally {
    await pipeline.dispose();
    await clean.catch(() => undefined);
  }
}

/** The lineage objects (as lineageIds) the normalize worker writes for these inputs. */
function lineageOfInputs(
  inputs: readonly ChaosInput[],
  worker: WorkerDefinition,
  bucket: string,
  layout: SummaryLayout,
): Set<string> {
  const ids = new Set<string>();
  for (const input of inputs) {
    const source = { bucket, key: input.key };
    const keys = [
      [LineageKind.NORMALIZED, worker.outputKey(source)],
      [LineageKind.QUARANTINE, worker.sideOutputs?.quarantine?.(source)],
    ] as const;
    for (const [kind, key] of keys) {
      const root = lineageRoot(layout, kind);
      if (key?.startsWith(root)) ids.add(`${kind}/${key.slice(root.length)}`);
    }
  }
  return ids;
}

/** Which inputs a scenario overwrites and deletes (decided before the run, from the seed). */
function planMutations(
  rng: Prng,
  inputs: readonly ChaosInput[],
  mutations: ChaosScenario['mutations'],
): { overwrites: { input: ChaosInput; next: ChaosInput }[]; deletes: ChaosInput[] } {
  if (!mutations) return { overwrites: [], deletes: [] };
  // Only data files with content: the empty and the unsupported file stay as they are.
  const candidates = rng.shuffle(inputs.filter((i) => /\.(csv|ndjson)$/.test(i.key) && i.body !== ''));
  const overwrites = candidates
    .slice(0, mutations.overwrite)
    .map((input) => ({ input, next: rewriteInput(rng, input) }));
  const deletes = candidates.slice(mutations.overwrite, mutations.overwrite + mutations.delete);
  return { overwrites, deletes };
}

/** Polling requests of the runner itself are not moments of an item's work. */
function isPolling(entry: ProxyLogEntry): boolean {
  return (
    entry.service === Service.SQS && (entry.operation === 'ReceiveMessage' || entry.operation === 'GetQueueAttributes')
  );
}

/**
 * SIGKILLs runner processes at random request boundaries: after every (re)start a process is
 * killed just before or just after its n-th work request, n drawn from `gap`, until `count` kills.
 * "After" means the server applied the request and the process dies before it sees the answer.
 */
function randomKiller(rng: Prng, kills: Kills): (slot: RunnerSlot) => Interceptor {
  let budget = kills.count;
  return (slot) => {
    let pid: number | undefined;
    let seen = 0;
    let target = rng.int(kills.gap[0], kills.gap[1]);
    const phaseOf = new Map<number, 'before-forward' | 'after-response'>();
    return async (entry, phase) => {
      if (budget <= 0 || isPolling(entry)) return 'continue';
      if (slot.runner.pid !== pid) {
        // A fresh process: count its requests from zero.
        pid = slot.runner.pid;
        seen = 0;
        target = rng.int(kills.gap[0], kills.gap[1]);
      }
      if (phase === 'before-forward') {
        seen++;
        if (seen !== target) return 'continue';
        phaseOf.set(entry.id, rng.chance(0.5) ? 'before-forward' : 'after-response');
      }
      if (phaseOf.get(entry.id) !== phase || slot.runner.pid !== pid) return 'continue';
      phaseOf.delete(entry.id);
      budget--;
      await slot.runner.kill();
      return 'drop';
    };
  };
}

function topReasons(reasons: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(reasons)
      .sort((a, b) => b[1] - a[1])
      .slice(0, n),
  );
}
