import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { mapWithConcurrency } from '../src/batch/mapWithConcurrency.js';
import { defaultDeadlineMarginMs } from '../src/batch/runBatch.js';
import { createPipelineClients } from '../src/ledger/pipelineClients.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';
import { S3PartitionStore } from '../src/s3/S3PartitionStore.js';
import { WINDOW_STAGE_DEFAULT_SETTINGS } from '../src/topology/windowStageSettings.js';
import { defineWindowTask } from '../src/window/defineWindowTask.js';
import { DEFAULT_MAX_WINDOW_INPUTS } from '../src/window/runWindowTask.js';
import { FaultProxy } from '../test/chaos/support/FaultProxy.js';
import { MODELLED_LIST_LATENCY_MS } from './shardedPlanning.js';
import { MODELLED_AWS_LATENCY_MS } from './workerThroughput.js';

/**
 * The largest window each grain reaches at a window stage's sizing (issue 31): how many inputs one
 * window of an hourly, daily, weekly or monthly stage can hold and still be built, directly (one
 * invocation reads them all) or from its parts (a day from its hours, a week or a month from its days).
 *
 * Measured: a user's daily window task (counts per input, as test/integration/windowParts.test.ts)
 * over `inputs` small hourly inputs of one day, run against the emulator behind the modelled AWS
 * latency (25 ms per S3 request): the time per input of a direct build and of a build from its 24
 * hours (the emulator's own time included, so the figures are conservative). A listing page of
 * 1,000 keys is modelled at MODELLED_LIST_LATENCY_MS (60 ms): the emulator renders a page far slower
 * than S3 answers one, so its listing time (printed beside) would understate every window. Computed
 * from those at the stack's
 * sizing (RerunWindowStage's defaults: a 900 s timeout less its deadline margin, maxInputs 50,000), for inputs spread evenly over a window's parts:
 *
 * - directly, when `listing(N) + N x perInput <= budget` and `N <= maxInputs`;
 * - from k parts, when one part fits an invocation after the whole window's listing
 *   (`listing(N) + N/k x perInputParts <= budget`, `N/k <= maxInputs`). Each invocation lists the
 *   window again and builds parts until its deadline, then goes on in a new message (not a receive),
 *   so the window takes `N x perInputParts / (budget - listing(N))` invocations, one after another.
 *
 * A model over measured costs, not a run of a million inputs; the section says so in its output.
 */

/** The sizing a largest window is computed at. */
export interface WindowStageSizing {
  readonly timeoutSeconds: number;
  readonly marginSeconds: number;
  readonly maxInputs: number;
}

/** One grain's largest window, directly and from its parts. */
export interface GrainLimit {
  readonly grain: 'hourly' | 'daily' | 'weekly' | 'monthly';
  /** The parts' grain, or null for a grain with no finer one. */
  readonly parts: 'hourly' | 'daily' | null;
  readonly partsPerWindow: number;
  readonly largestDirect: number;
  /** With parts (equal to largestDirect where there are none). */
  readonly largestWithParts: number;
}

/** What the section measured and computed. */
export interface WindowGrainsResult {
  readonly inputs: number;
  /** One ListObjectsV2 page of the window's listing, ms, as the model takes it (MODELLED_LIST_LATENCY_MS). */
  readonly listPageMs: number;
  /** The same page as the emulator answered it behind the proxy, ms (not used by the model). */
  readonly emulatorListPageMs: number;
  /** One input of a direct build (its pinned GET and the build), ms, the publish shared out. */
  readonly perInputMs: number;
  /** One input of a build from the day's hours (parts' publishes and the combine shared out), ms. */
  readonly perInputPartsMs: number;
  readonly sizing: WindowStageSizing;
  readonly grains: readonly GrainLimit[];
  /** A day of a million inputs from its hours, at the stage's sizing and at a 300 s timeout with maxInputs 20,000. */
  readonly millionDay: readonly MillionDay[];
}

/** A day of a million inputs built from its 24 hours at one sizing. */
export interface MillionDay {
  readonly sizing: WindowStageSizing;
  readonly built: boolean;
  /** Why not, when it is not. */
  readonly why?: string;
  /** Invocations it takes, one after another. */
  readonly invocations: number;
  /** Seconds of each invocation spent listing the day. */
  readonly listingSeconds: number;
}

const HOURLY_TEMPLATE = 'year={yyyy}/month={MM}/day={dd}/hour={HH}';
const DAY = '2026-12-05';

/** The window stage's defaults, as RerunWindowStage deploys them. */
export function defaultWindowStageSizing(): WindowStageSizing {
  const timeoutMs = WINDOW_STAGE_DEFAULT_SETTINGS.functionTimeoutSeconds * 1000;
  return {
    timeoutSeconds: WINDOW_STAGE_DEFAULT_SETTINGS.functionTimeoutSeconds,
    marginSeconds: defaultDeadlineMarginMs(timeoutMs) / 1000,
    maxInputs: DEFAULT_MAX_WINDOW_INPUTS,
  };
}

/** The measured costs the model reads. */
export interface WindowCosts {
  readonly listPageMs: number;
  readonly perInputMs: number;
  readonly perInputPartsMs: number;
}

/** Whether a window of `n` inputs is built at `sizing`: directly (`parts` 1) or from `parts` parts. */
export function windowFits(n: number, parts: number, costs: WindowCosts, sizing: WindowStageSizing): boolean {
  const budgetMs = (sizing.timeoutSeconds - sizing.marginSeconds) * 1000;
  const listingMs = Math.ceil(n / 1000) * costs.listPageMs;
  if (parts === 1) return n <= sizing.maxInputs && listingMs + n * costs.perInputMs <= budgetMs;
  const perPart = Math.ceil(n / parts);
  return perPart <= sizing.maxInputs && listingMs + perPart * costs.perInputPartsMs <= budgetMs;
}

/**
 * A window of `n` inputs from `parts` parts at `sizing`: whether it is built, why not, and the
 * invocations it takes (each lists the window, then builds parts).
 */
export function windowFromParts(n: number, parts: number, costs: WindowCosts, sizing: WindowStageSizing): MillionDay {
  const budgetMs = (sizing.timeoutSeconds - sizing.marginSeconds) * 1000;
  const listingMs = Math.ceil(n / 1000) * costs.listPageMs;
  const perPart = Math.ceil(n / parts);
  const perInvocation = Math.floor((budgetMs - listingMs) / costs.perInputPartsMs);
  const why =
    perPart > sizing.maxInputs
      ? `a part holds ${perPart} inputs, above maxInputs ${sizing.maxInputs}`
      : perPart > perInvocation
        ? `a part holds ${perPart} inputs, above the ${Math.max(0, perInvocation)} an invocation reads after the listing`
        : undefined;
  return {
    sizing,
    built: why === undefined,
    ...(why ? { why } : {}),
    invocations: perInvocation > 0 ? Math.ceil(n / perInvocation) : Number.POSITIVE_INFINITY,
    listingSeconds: round(listingMs / 1000),
  };
}

/** The largest `n` for which `fits(n)` holds (fits is monotonic: once false, false above). */
export function largestFitting(fits: (n: number) => boolean): number {
  if (!fits(1)) return 0;
  let low = 1;
  let high = 2;
  while (fits(high) && high < 1e12) {
    low = high;
    high *= 2;
  }
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid;
  }
  return low;
}

/** Each grain's largest window from the measured costs. */
export function grainLimits(costs: WindowCosts, sizing: WindowStageSizing): GrainLimit[] {
  const rows: { grain: GrainLimit['grain']; parts: GrainLimit['parts']; k: number }[] = [
    { grain: 'hourly', parts: null, k: 1 },
    { grain: 'daily', parts: 'hourly', k: 24 },
    { grain: 'weekly', parts: 'daily', k: 7 },
    // A 30-day month.
    { grain: 'monthly', parts: 'daily', k: 30 },
  ];
  return rows.map(({ grain, parts, k }) => {
    const largestDirect = largestFitting((n) => windowFits(n, 1, costs, sizing));
    const largestWithParts =
      k === 1
        ? largestDirect
        : Math.max(
            largestDirect,
            largestFitting((n) => windowFits(n, k, costs, sizing)),
          );
    return { grain, parts, partsPerWindow: k, largestDirect, largestWithParts };
  });
}

/**
 * Measures the costs and computes each grain's largest window.
 *
 * @example
 * const result = await measureWindowGrains({ endpoint, inputs: 600 });
 * result.grains.find((g) => g.grain === 'daily')?.largestWithParts;
 */
export async function measureWindowGrains(options: {
  readonly endpoint: string;
  readonly inputs: number;
  readonly log?: (line: string) => void;
}): Promise<WindowGrainsResult> {
  const log = options.log ?? (() => {});
  const direct = createPipelineClients({ endpoint: options.endpoint, region: 'us-east-1' });
  const bucket = `bench-grains-${randomBytes(3).toString('hex')}`;
  await direct.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  log(`window grains: writing ${options.inputs} hourly inputs of one day...`);
  await mapWithConcurrency(
    Array.from({ length: options.inputs }, (_, i) => i),
    16,
    async (i) => {
      const hour = String(i % 24).padStart(2, '0');
      const key = `events/year=2026/month=12/day=05/hour=${hour}/file-${String(i).padStart(6, '0')}.json`;
      await direct.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"n":1}\n{"n":2}\n' }));
    },
  );
  const proxy = await FaultProxy.start({
    upstream: options.endpoint,
    keepLog: false,
    plan: { serviceLatencyMs: MODELLED_AWS_LATENCY_MS },
  });
  try {
    const clients = createPipelineClients({ endpoint: proxy.url, region: 'us-east-1' });
    const reader = new S3PartitionStore(clients.s3);
    const store = new S3ObjectStore(clients.s3);
    const started = performance.now();
    const listed = await reader.listAll(bucket, { prefix: 'events/year=2026/month=12/day=05/hour=' });
    const listMs = performance.now() - started;
    const pages = Math.max(1, Math.ceil(listed.length / 1000));
    const timeRun = async (prefix: string, maxInputs: number) => {
      const t0 = performance.now();
      const outcome = await countsTask(bucket, prefix).run(DAY, { store, reader, maxInputs });
      if (outcome.status !== 'processed') throw new Error(`the ${prefix} build did not publish: ${outcome.reason}`);
      return performance.now() - t0;
    };
    log('window grains: a direct build of the day at the modelled latency...');
    const directMs = await timeRun('direct/', options.inputs);
    log('window grains: the day built from its 24 hours at the modelled latency...');
    const partsMs = await timeRun('parts/', Math.ceil(options.inputs / 24));
    const costs: WindowCosts = {
      listPageMs: MODELLED_LIST_LATENCY_MS,
      perInputMs: round(Math.max(0, directMs - listMs) / options.inputs),
      perInputPartsMs: round(Math.max(0, partsMs - listMs) / options.inputs),
    };
    const sizing = defaultWindowStageSizing();
    // The sizing before 2026-12-07 (a 300 s timeout, maxInputs 20,000), as a stage given a shorter
    // timeout has it: a million-input day's hours (41,667 inputs) are above its maxInputs.
    const shorter: WindowStageSizing = {
      timeoutSeconds: 300,
      marginSeconds: defaultDeadlineMarginMs(300_000) / 1000,
      maxInputs: 20_000,
    };
    return {
      inputs: options.inputs,
      ...costs,
      emulatorListPageMs: round(listMs / pages),
      sizing,
      grains: grainLimits(costs, sizing),
      millionDay: [sizing, shorter].map((z) => windowFromParts(1_000_000, 24, costs, z)),
    };
  } finally {
    await proxy.stop();
  }
}

const round = (x: number): number => Math.round(x * 100) / 100;

/** The measured task: a day's counts per input, built directly or from its hours. */
function countsTask(bucket: string, prefix: string) {
  const text = async (body: AsyncIterable<unknown>) => {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks).toString('utf8');
  };
  return defineWindowTask({
    name: 'bench-daily-counts',
    codeVersion: 'bench-daily-counts@1',
    partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
    inputs: [
      { name: 'hourly', prefix: 'events/', partitions: { kind: 'time', grain: 'hourly', template: HOURLY_TEMPLATE } },
    ],
    output: { bucket, prefix, fileName: 'counts.json' },
    async build(inputs, writer) {
      const perInput: Record<string, number> = {};
      for await (const input of inputs) perInput[input.path] = (await text(input.body)).split('\n').length - 1;
      writer.write(`${JSON.stringify(perInput)}\n`);
    },
    parts: {
      grain: 'hourly',
      async combine(hours, writer) {
        const perInput: Record<string, number> = {};
        for await (const hour of hours) Object.assign(perInput, JSON.parse(await text(hour.body)));
        writer.write(`${JSON.stringify(perInput)}\n`);
      },
    },
  });
}
