import { randomBytes } from 'node:crypto';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../../../functions/normalize/normalizeWorker.js';
import type { AwsClients } from '../../../src/aws/clients.js';
import type { Topology } from '../../../src/topology.js';
import { Service } from './awsRequest.js';
import { ChaosPipeline, type ChaosRunnerSettings, type RunnerSlot } from './ChaosPipeline.js';
import { runCleanReference } from './cleanReference.js';
import type { FaultPlan, Interceptor, ProxyLogEntry } from './FaultProxy.js';
import { type ChaosInput, generateInputs, rewriteInput } from './inputs.js';
import { createPrng, type Prng } from './prng.js';
import { type ChaosVerdict, type InputHistory, verifyAgainstClean } from './verifyAgainstClean.js';

/** Where scenarios run: the emulator and the settings shared by every scenario. */
export interface ChaosEnvironment {
  /** The emulator (moto with atomic conditional writes). */
  readonly endpoint: string;
  /** Clients on the emulator, without faults. */
  readonly clients: AwsClients;
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
  /** Runner processes on the same queue. @default 1 */
  readonly runners?: number;
  /** Overrides of the environment's runner settings (batch size, concurrency). @default none */
  readonly runner?: Partial<ChaosRunnerSettings>;
  /** Faults between the runners and AWS. @default none */
  readonly awsFaults?: FaultPlan;
  /** Faults between the runners and the webhook. @default none */
  readonly webhookFaults?: FaultPlan;
  /** Deliver every input's event a second time. @default false */
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
  /** SIGKILL runner processes at random request boundaries (each followed by a fresh process). */
  readonly kills?: { readonly count: number; readonly gap: readonly [number, number] };
  /** Give up after this long. @default 300_000 */
  readonly timeoutMs?: number;
}

/** One row of the chaos table. */
export interface ScenarioResult extends ChaosVerdict {
  readonly name: string;
  readonly seed: number;
  readonly faultsInjected: number;
  readonly faultsByKind: Record<string, number>;
  readonly kills: number;
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
 * Runs one scenario and compares its final state with a clean run of the same inputs (which runs
 * alongside, on its own resources). Inputs, fault decisions, kill points and mutations all derive
 * from `scenario.seed`; the interleaving of concurrent requests does not, so a rerun with the same
 * seed injects the same kinds of faults at the same rates, not necessarily at the same requests.
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
  const id = `chaos-${randomBytes(3).toString('hex')}`;
  const timeoutMs = scenario.timeoutMs ?? 300_000;
  const runner: ChaosRunnerSettings = { ...env.runner, ...scenario.runner };

  const clean = runCleanReference({
    endpoint: env.endpoint,
    clients: env.clients,
    id: `${id}-clean`,
    topology: env.topology,
    runner,
    contents: [...inputs, ...plan.overwrites.map((o) => o.next)],
    poison,
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
    topology: env.topology,
    runner,
    runners: scenario.runners ?? 1,
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
    for (const input of inputs) {
      const etag = await pipeline.upload(input.key, input.body);
      history.set(input.key, { etags: [etag], finalEtag: etag });
    }
    if (scenario.duplicateDeliveries) {
      for (const input of inputs) await pipeline.sendEvent(input.key, history.get(input.key)?.finalEtag);
    }

    const killer = scenario.kills ? randomKiller(rng.fork('kills'), scenario.kills) : undefined;
    pipeline.startRunners(killer);

    if (scenario.mutations) {
      // Mutate once a quarter of the uploads have been handled: the runners are mid-way. (If the
      // runners make no progress for a minute, mutate anyway; the drain then times out and says so.)
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

    await pipeline.waitDrained(timeoutMs);
    await pipeline.stopRunners();
    const snapshot = await pipeline.snapshot();
    const reference = await clean;
    const verdict = verifyAgainstClean({
      snapshot,
      history: [...history].map(([key, h]): InputHistory => ({ key, etags: h.etags, finalEtag: h.finalEtag })),
      clean: reference,
      worker: createNormalizeWorker({ outputBucket: snapshot.outputBucket, topology: env.topology }),
      codeVersion: NORMALIZE_CODE_VERSION,
      poison,
      failurePrefix: env.topology.failurePrefix,
    });
    const stats = pipeline.stats();
    const faultsByKind: Record<string, number> = {};
    for (const source of [stats.proxies.faults, stats.webhook.faults]) {
      for (const [kind, n] of Object.entries(source)) faultsByKind[kind] = (faultsByKind[kind] ?? 0) + n;
    }
    return {
      name: scenario.name,
      seed: scenario.seed,
      ...verdict,
      faultsInjected: Object.values(faultsByKind).reduce((a, b) => a + b, 0),
      faultsByKind,
      kills: stats.runners.kills,
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
function randomKiller(
  rng: Prng,
  kills: { count: number; gap: readonly [number, number] },
): (slot: RunnerSlot) => Interceptor {
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
