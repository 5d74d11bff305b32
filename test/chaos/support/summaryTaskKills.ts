import { randomBytes } from 'node:crypto';
import { SUMMARIZE_CODE_VERSION } from '../../../app/partition/codeVersion.js';
import { summaryKey } from '../../../app/partition/summaryLayout.js';
import { mapWithConcurrency } from '../../../src/batch/mapWithConcurrency.js';
import type { Day } from '../../../src/keys/partition.js';
import { ChaosPipeline, ChaosStage, type RunnerSlot } from './ChaosPipeline.js';
import type { Interceptor, ProxyLogEntry } from './FaultProxy.js';
import type { ChaosInput } from './inputs.js';
import {
  boundaryKiller,
  describeKillPoint,
  type ItemRequest,
  type KillPoint,
  type KillPointResult,
  numberRequests,
  workRecorder,
} from './itemBoundaryKills.js';
import type { ChaosEnvironment } from './runChaosScenario.js';
import { type CleanSummary, finalSummaryInputs, lineageIds, verifySummaries } from './verifySummaries.js';

/** The requests of one partition task in a clean run, and the summary it published. */
export interface SummaryTaskDiscovery {
  readonly sequence: readonly ItemRequest[];
  readonly clean: ReadonlyMap<Day, CleanSummary>;
}

/**
 * Normalizes `inputs` (all of one day), then runs that day's partition task through a clean
 * summarize runner and records its requests, from the receive that brings the task to the delete:
 * lineage listings, HEAD summary, GETs of the inputs, PUT staging, GET staging, PUT summary, marker
 * listing, PUT marker, DELETE staging...
 *
 * @example
 * const { sequence } = await discoverSummaryTaskRequests(env, inputs, '2026-01-05');
 */
export async function discoverSummaryTaskRequests(
  env: ChaosEnvironment,
  inputs: readonly ChaosInput[],
  day: Day,
): Promise<SummaryTaskDiscovery> {
  const entries: ProxyLogEntry[] = [];
  const recorder = workRecorder(entries);
  const { pipeline } = await runDay(env, inputs, day, (slot) =>
    slot.stage === ChaosStage.SUMMARIZE ? recorder : undefined,
  );
  try {
    const snapshot = await pipeline.snapshot();
    const summary = snapshot.objects.find((o) => o.key === summaryKey(pipeline.summaryLayout, day));
    if (!summary) throw new Error(`the clean run published no summary for ${day}`);
    const { lineage, hash } = finalSummaryInputs(snapshot, pipeline.summaryLayout, day, SUMMARIZE_CODE_VERSION);
    const clean = new Map([
      [
        day,
        {
          bytes: summary.bytes,
          lineageHash: hash,
          lineage: lineageIds(lineage),
        },
      ],
    ]);
    return { sequence: numberRequests(entries), clean };
  } finally {
    await pipeline.dispose();
  }
}

/**
 * For each kill point: a fresh pipeline normalizes the same inputs undisturbed, a backfill sends the
 * day's task, and the summarize runner is SIGKILLed at that request boundary of the task; a fresh
 * runner takes over (after the visibility timeout) and the final state must equal the clean run's:
 * the summary of the day's lineage, byte for byte, one marker, nothing else, an empty DLQ.
 *
 * @example
 * const results = await runSummaryTaskKills(env, inputs, day, discovery, killPointsOf(discovery.sequence));
 */
export async function runSummaryTaskKills(
  env: ChaosEnvironment,
  inputs: readonly ChaosInput[],
  day: Day,
  discovery: SummaryTaskDiscovery,
  points: readonly KillPoint[],
  parallel = 3,
): Promise<KillPointResult[]> {
  return mapWithConcurrency(points, parallel, async (point) => {
    const started = Date.now();
    let killed = false;
    const { pipeline } = await runDay(env, inputs, day, (slot) =>
      slot.stage === ChaosStage.SUMMARIZE
        ? boundaryKiller(point, slot, () => {
            killed = true;
          })
        : undefined,
    );
    try {
      const snapshot = await pipeline.snapshot();
      const verdict = await verifySummaries({
        snapshot,
        layout: pipeline.summaryLayout,
        window: { from: day, to: day },
        codeVersion: SUMMARIZE_CODE_VERSION,
        clean: discovery.clean,
        deleted: new Set(),
        poison: [],
      });
      if (!killed) verdict.problems.push(`${describeKillPoint(point)}: the boundary was never reached`);
      // One task ran alone: its retry must have removed the staging copy the kill left.
      if (verdict.stagingLeftovers > 0) verdict.problems.push(`${verdict.stagingLeftovers} staging copy(ies) left`);
      return {
        label: describeKillPoint(point),
        itemsVerified: verdict.summariesVerified,
        lost: verdict.lost,
        duplicated: verdict.duplicated,
        keptForDeleted: 0,
        notificationsApplied: 0,
        sinkRepeats: 0,
        dlqNonPoison: verdict.dlqNonPoison + snapshot.dlq.length,
        dlqMissingPoison: verdict.dlqMissingPoison,
        failureRecords: 0,
        dlqWithoutFailureRecord: 0,
        problems: verdict.problems,
        killed,
        runnerStarts: pipeline.stats().byStage.summarize.starts,
        durationMs: Date.now() - started,
      };
    } finally {
      await pipeline.dispose();
    }
  });
}

/** A pipeline with one runner per stage: normalize `inputs`, then backfill `day` and drain. */
async function runDay(
  env: ChaosEnvironment,
  inputs: readonly ChaosInput[],
  day: Day,
  intercept: (slot: RunnerSlot) => Interceptor | undefined,
): Promise<{ pipeline: ChaosPipeline }> {
  const pipeline = await ChaosPipeline.create({
    endpoint: env.endpoint,
    clients: env.clients,
    id: `kill-sum-${randomBytes(3).toString('hex')}`,
    topology: env.topology,
    runner: env.runner,
    runners: 1,
    summaryRunners: 1,
  });
  try {
    for (const input of inputs) await pipeline.upload(input.key, input.body);
    pipeline.startRunners(intercept);
    await pipeline.waitDrained();
    await pipeline.backfill({ from: day, to: day });
    await pipeline.waitDrained();
    await pipeline.stopRunners();
    return { pipeline };
  } catch (error) {
    await pipeline.dispose();
    throw error;
  }
}
