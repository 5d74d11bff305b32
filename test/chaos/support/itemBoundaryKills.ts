import { randomBytes } from 'node:crypto';
import { mapWithConcurrency } from '../../../src/batch/mapWithConcurrency.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../../../src/normalize/normalizeWorker.js';
import { Service } from './awsRequest.js';
import { ChaosPipeline, type PipelineSnapshot, type RunnerSlot } from './ChaosPipeline.js';
import type { ChaosRow } from './chaosTable.js';
import type { Interceptor, InterceptPhase, ProxyLogEntry } from './FaultProxy.js';
import type { ChaosInput } from './inputs.js';
import type { ChaosEnvironment } from './runChaosScenario.js';
import { type ChaosVerdict, type CleanReference, contentSha256, verifyAgainstClean } from './verifyAgainstClean.js';

/** One request of an item's work, as the runner made it in a clean run. */
export interface ItemRequest {
  readonly service: string;
  readonly operation: string;
  /** 1 for the first request with this service and operation in the item's work, 2 for the second... */
  readonly occurrence: number;
}

/** Where to SIGKILL the runner: just before a request leaves, or just after the server applied it. */
export interface KillPoint extends ItemRequest {
  readonly phase: InterceptPhase;
}

/** The outcome of one kill point. */
export interface KillPointResult extends ChaosVerdict {
  readonly label: string;
  readonly killed: boolean;
  readonly runnerStarts: number;
  readonly durationMs: number;
}

/** The requests of one item in a clean run, and that run's final state as the reference. */
export interface ItemDiscovery {
  readonly sequence: readonly ItemRequest[];
  readonly clean: CleanReference;
  readonly etag: string;
}

/** The runner's own polling is not part of an item's work (a receive that brings the message is). */
function isIdlePoll(entry: ProxyLogEntry): boolean {
  if (entry.service !== Service.SQS) return false;
  if (entry.operation === 'GetQueueAttributes') return true;
  return entry.operation === 'ReceiveMessage' && !/"MessageId"/.test(entry.responseText ?? '');
}

/**
 * Runs one item through a clean pipeline (one runner, no faults) and records the requests of its
 * work, from the ReceiveMessage that brings its message to the DeleteMessageBatch that removes it:
 * HEAD output, GET input, PUT quarantine, PUT output, ledger claim, webhook POST, ledger completion...
 *
 * @example
 * const { sequence } = await discoverItemRequests(env, { key: 'incoming/a.csv', body });
 * sequence.map((r) => r.operation); // ['ReceiveMessage', 'HeadObject', 'GetObject', ...]
 */
export async function discoverItemRequests(env: ChaosEnvironment, item: ChaosInput): Promise<ItemDiscovery> {
  const pipeline = await ChaosPipeline.create({
    endpoint: env.endpoint,
    clients: env.clients,
    id: `kill-ref-${randomBytes(3).toString('hex')}`,
    topology: env.topology,
    runner: env.runner,
  });
  try {
    const etag = await pipeline.upload(item.key, item.body);
    const entries: ProxyLogEntry[] = [];
    const recorder = workRecorder(entries);
    pipeline.startRunners(() => recorder);
    await pipeline.waitDrained();
    await pipeline.stopRunners();
    const snapshot = await pipeline.snapshot();
    return { sequence: numberRequests(entries), clean: referenceOf(snapshot, env, item, etag), etag };
  } finally {
    await pipeline.dispose();
  }
}

/**
 * Every kill point of an item: before and after each request of its work (a kill before the
 * receive that brings the message is a kill of an idle runner, so only "after" is taken there).
 */
export function killPointsOf(sequence: readonly ItemRequest[]): KillPoint[] {
  return sequence.flatMap((request) =>
    request.operation === 'ReceiveMessage'
      ? [{ ...request, phase: 'after-response' as const }]
      : [
          { ...request, phase: 'before-forward' as const },
          { ...request, phase: 'after-response' as const },
        ],
  );
}

/** `kill after HTTP:POST#1` */
export function describeKillPoint(point: KillPoint): string {
  return `kill ${point.phase === 'before-forward' ? 'before' : 'after'} ${point.service}:${point.operation}#${point.occurrence}`;
}

/**
 * For each kill point: a fresh pipeline, the same item, a runner process SIGKILLed at that request
 * boundary, then a fresh runner process (the restart); once the queue is drained, the final state
 * must equal the clean run's: same output and quarantine bytes, the notification applied once, an
 * empty DLQ.
 *
 * @example
 * const results = await runItemBoundaryKills(env, item, discovery, killPointsOf(discovery.sequence), 3);
 */
export async function runItemBoundaryKills(
  env: ChaosEnvironment,
  item: ChaosInput,
  discovery: ItemDiscovery,
  points: readonly KillPoint[],
  parallel = 3,
): Promise<KillPointResult[]> {
  return mapWithConcurrency(points, parallel, async (point) => {
    const started = Date.now();
    const pipeline = await ChaosPipeline.create({
      endpoint: env.endpoint,
      clients: env.clients,
      id: `kill-${randomBytes(3).toString('hex')}`,
      topology: env.topology,
      runner: env.runner,
    });
    try {
      const etag = await pipeline.upload(item.key, item.body);
      if (etag !== discovery.etag) throw new Error('the item changed between discovery and kill runs');
      let killed = false;
      pipeline.startRunners((slot) =>
        boundaryKiller(point, slot, () => {
          killed = true;
        }),
      );
      await pipeline.waitDrained();
      await pipeline.stopRunners();
      const snapshot = await pipeline.snapshot();
      const verdict = verifyAgainstClean({
        snapshot,
        history: [{ key: item.key, etags: [etag], finalEtag: etag }],
        clean: discovery.clean,
        worker: createNormalizeWorker({ outputBucket: snapshot.outputBucket, prefixes: env.topology }),
        codeVersion: NORMALIZE_CODE_VERSION,
        poison: [],
        failurePrefix: env.topology.failurePrefix,
      });
      if (!killed) verdict.problems.push(`${describeKillPoint(point)}: the boundary was never reached`);
      return {
        label: describeKillPoint(point),
        ...verdict,
        killed,
        runnerStarts: pipeline.stats().runners.starts,
        durationMs: Date.now() - started,
      };
    } finally {
      await pipeline.dispose();
    }
  });
}

/**
 * SIGKILLs the slot's first runner process once, at `point` of the one item (or task) it handles;
 * requests are counted from that process's start. `onKill` is called just before the kill.
 *
 * @example
 * pipeline.startRunners((slot) => boundaryKiller(point, slot, () => { killed = true; }));
 */
export function boundaryKiller(point: KillPoint, slot: RunnerSlot, onKill: () => void): Interceptor {
  let pid: number | undefined;
  let done = false;
  const counts = new Map<string, number>();
  const occurrence = new Map<number, number>();
  return async (entry, phase) => {
    pid ??= slot.runner.pid;
    if (done || slot.runner.pid !== pid) return 'continue';
    if (entry.service !== point.service || entry.operation !== point.operation) return 'continue';
    if (entry.operation === 'ReceiveMessage') {
      // The receive that brings the message: only its answer tells it apart from an idle poll.
      if (phase !== 'after-response' || isIdlePoll(entry)) return 'continue';
      occurrence.set(entry.id, 1);
    } else if (phase === 'before-forward') {
      const n = (counts.get(entry.operation) ?? 0) + 1;
      counts.set(entry.operation, n);
      occurrence.set(entry.id, n);
    }
    if (occurrence.get(entry.id) !== point.occurrence || phase !== point.phase) return 'continue';
    done = true;
    onKill();
    await slot.runner.kill();
    return 'drop';
  };
}

/** The requests of a recorded piece of work, numbered per operation (HeadObject#1, #2...). */
export function numberRequests(entries: readonly ProxyLogEntry[]): ItemRequest[] {
  const counts = new Map<string, number>();
  return entries.map((e) => {
    const id = `${e.service}:${e.operation}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
    return { service: e.service, operation: e.operation, occurrence: counts.get(id) ?? 1 };
  });
}

/**
 * Records one piece of work's requests: from the ReceiveMessage that brings a message to the first
 * DeleteMessageBatch after it, idle polls left out.
 */
export function workRecorder(entries: ProxyLogEntry[]): Interceptor {
  let started = false;
  let done = false;
  return (entry, phase) => {
    if (phase !== 'after-response' || done || isIdlePoll(entry)) return 'continue';
    if (!started && entry.operation !== 'ReceiveMessage') return 'continue';
    started = true;
    entries.push(entry);
    if (entry.operation === 'DeleteMessageBatch') done = true;
    return 'continue';
  };
}

function referenceOf(
  snapshot: PipelineSnapshot,
  env: ChaosEnvironment,
  item: ChaosInput,
  etag: string,
): CleanReference {
  const worker = createNormalizeWorker({ outputBucket: snapshot.outputBucket, prefixes: env.topology });
  const source = { bucket: snapshot.inputBucket, key: item.key };
  const objects = new Map(snapshot.objects.map((o) => [o.key, o]));
  const output = objects.get(worker.outputKey(source));
  if (!output) throw new Error(`the clean run wrote no output for ${item.key}`);
  const quarantine = objects.get(worker.sideOutputs?.quarantine?.(source) ?? '');
  const reference = {
    output: output.bytes,
    checksum: contentSha256(output.bytes),
    ...(quarantine ? { quarantine: quarantine.bytes } : {}),
  };
  return { byEtag: new Map([[etag, reference]]), dlqBodies: snapshot.dlq.map((m) => m.body) };
}

/** The chaos-table row of one item's kill points: every point's verdict summed. */
export function killPointsRow(scenario: string, results: readonly KillPointResult[], durationMs: number): ChaosRow {
  const failed = results.filter((r) => !r.killed || r.lost > 0 || r.duplicated > 0 || r.problems.length > 0);
  const repeats = results.reduce((a, r) => a + r.sinkRepeats, 0);
  return {
    scenario,
    seed: '-',
    faultsInjected: 0,
    kills: results.filter((r) => r.killed).length,
    itemsVerified: results.reduce((a, r) => a + r.itemsVerified, 0),
    lost: results.reduce((a, r) => a + r.lost, 0),
    duplicated: results.reduce((a, r) => a + r.duplicated, 0),
    dlqOnlyPoison: results.every((r) => r.dlqNonPoison === 0 && r.dlqMissingPoison === 0),
    durationMs,
    notes:
      `${results.length} kill points, ${failed.length} failed; ` +
      `${repeats} webhook repeat(s) answered from the sink's record (same Idempotency-Key)`,
  };
}
