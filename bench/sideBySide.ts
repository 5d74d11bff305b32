import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PurgeQueueCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { type LocalStackResources, provisionLocalStack } from '../app/dev/provisionLocalStack.js';
import { encodeS3EventKey, reprocessMessageBody } from '../app/reprocess/reprocessMessage.js';
import { type Topology, topology } from '../app/topology.js';
import { mapWithConcurrency } from '../src/batch/mapWithConcurrency.js';
import { judgeOutput, OutputState } from '../src/done/judgeOutput.js';
import { createPipelineClients, type PipelineClients } from '../src/ledger/pipelineClients.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';
import { type FaultPlan, FaultProxy, type FaultProxyStats } from '../test/chaos/support/FaultProxy.js';
import { type ChaosInput, generateInputs } from '../test/chaos/support/inputs.js';
import { createPrng } from '../test/chaos/support/prng.js';
import { type RunnerEvent, RunnerSupervisor } from '../test/chaos/support/RunnerSupervisor.js';
import { costPerMillionItems, type LambdaUsage, type PhaseCost } from './awsCost.js';
import { createIdempotencyTable } from './baseline/powertoolsWorker.js';
import { MODELLED_AWS_LATENCY_MS, measureWorkerThroughput, type WorkerThroughput } from './workerThroughput.js';

/** The two workers compared. */
export const System = { RERUN: 'rerun', POWERTOOLS: 'powertools' } as const;
export type System = (typeof System)[keyof typeof System];

/**
 * The phases of the side-by-side run, in order:
 * - `first`: every input new (S3's own ObjectCreated events, fresh);
 * - `duplicate`: every event delivered again at once, as S3's at-least-once delivery does (fresh
 *   duplicates of S3's own: first receive, within the function's timeout of the event);
 * - `rerun`: every object sent again as `rerun reprocess` sends it (its send time as the event's
 *   time, the listed ETag): a rerun of a slice that is done;
 * - `repair`: outputs deleted or corrupted behind the workers' backs, then every event re-sent
 *   without an event time (an operator's rerun, never fresh);
 * - `overwrite`: every input overwritten with new content (one more row), S3's events;
 * - `replay`: the first run's events (the old eTags) re-sent after the overwrite.
 */
export const PHASES = ['first', 'duplicate', 'rerun', 'repair', 'overwrite', 'replay'] as const;
export type Phase = (typeof PHASES)[number];

/** Figures of one phase of one system. */
export interface PhaseFigures {
  readonly items: number;
  /** Requests per item by service (SQS: the runner's receives and deletes; its drain checks are left out). */
  readonly requestsPerItem: { readonly S3: number; readonly DynamoDB: number; readonly SQS: number };
  /** Requests by operation, totals. */
  readonly operations: Readonly<Record<string, number>>;
  /**
   * The function's compute in the phase, measured under the modelled AWS latencies: invocations,
   * their durations added up (each rounded up to the ms, as billed) and the function's memory.
   */
  readonly lambda: LambdaUsage & { readonly msPerItem: number };
  /** USD per million items from the counted requests and the Lambda usage, at AWS list prices (awsCost.ts). */
  readonly costPerMillionItems: PhaseCost;
  /** Response body bytes read per item from S3, and from S3 + DynamoDB. */
  readonly s3BodyBytesPerItem: number;
  readonly bodyBytesPerItem: number;
  /** Items per second through the runner under the modelled latencies, first invocation's start to last one's end. */
  readonly itemsPerSecond: number;
  readonly busyMs: number;
  readonly invocations: number;
  /** Outputs correct after the phase: the bytes expected of the input's current content (see correctOutputs). */
  readonly correctOutputs: number;
  /** Set when messages came back in a run without faults (its time then includes a visibility timeout). */
  readonly anomaly?: string;
}

/** One system's figures. */
export type SystemFigures = { readonly [P in Exclude<Phase, 'repair'>]: PhaseFigures } & {
  readonly repair: PhaseFigures & RepairFigures;
  /** The worker invoked directly with the same batches (no SQS in the loop). */
  readonly worker: WorkerThroughput;
  /** The same, through a proxy adding modelled AWS latencies (MODELLED_AWS_LATENCY_MS) to each request. */
  readonly workerWithLatency: WorkerThroughput;
  /**
   * End-to-end first runs through the runner and a counting proxy without added latency (fresh
   * resources each, the systems alternating): each run's items/s and their median.
   */
  readonly endToEnd: { readonly itemsPerSecond: number; readonly runs: readonly number[] };
};

/** The side-by-side result. */
export interface SideBySideResult {
  readonly items: number;
  /** Worker-only and end-to-end first runs per system (the median is kept). */
  readonly repeats: number;
  /** The memory both functions are billed at: the reference stack's (topology.normalize.memoryMiB). */
  readonly memoryMiB: number;
  readonly systems: Record<System, SystemFigures>;
  /** Items per second of a handler that does nothing, through the same runner: the end-to-end ceiling here. */
  readonly runnerCeilingItemsPerSecond: number;
  /** The two systems' outputs were byte-identical after the first run. */
  readonly outputsIdentical: boolean;
}

/** What a repair run fixed. */
export interface RepairFigures {
  readonly deleted: number;
  readonly corrupted: number;
  /** Damaged outputs that are valid and equal to the first run's bytes after the repair run. */
  readonly repaired: number;
}

/**
 * The benchmark's Lambda settings: the deployed topology's batch, concurrency and timeout; the
 * visibility timeout is cut to 60 s (still the function timeout) so that a message that comes back
 * costs a minute, not six.
 */
const BENCH_TOPOLOGY: Topology = { ...topology, normalize: { ...topology.normalize, visibilityTimeoutSeconds: 60 } };

/** The modelled latencies the phases run under: S3 and DynamoDB (the runner's SQS calls are not the function's). */
const PHASE_LATENCY_MS = { S3: MODELLED_AWS_LATENCY_MS.S3, DynamoDB: MODELLED_AWS_LATENCY_MS.DynamoDB };

interface SystemUnderTest {
  readonly system: System | 'noop';
  /** Clients straight to the emulator (not through the counting proxy): the bench's own checks. */
  readonly clients: PipelineClients;
  readonly stack: LocalStackResources;
  readonly proxy: FaultProxy;
  readonly env: Record<string, string>;
  readonly inputs: UploadedInput[];
}

interface SideBySideOptions {
  readonly endpoint: string;
  readonly clients: PipelineClients;
  readonly items: number;
  /** Worker-only and end-to-end first runs, each on fresh resources; the median is kept. @default 3 */
  readonly repeats?: number;
  readonly seed?: number;
  readonly log?: (line: string) => void;
}

/**
 * rerun and the Powertools baseline side by side on the same emulator, through the same local
 * runner and a counting proxy that adds the modelled AWS latencies: the same inputs (uploaded to
 * each system's input bucket), then the {@link PHASES}, each counted, timed and checked for correct
 * outputs. Then each worker alone (invoked directly with the same batches), end-to-end first runs
 * without added latency, and a do-nothing handler through the runner: the ceiling the runner and
 * the emulator put on any worker.
 *
 * @example
 * const result = await runSideBySide({ endpoint, clients, items: 300 });
 */
export async function runSideBySide(options: SideBySideOptions): Promise<SideBySideResult> {
  const log = options.log ?? (() => {});
  // Valid CSV and NDJSON only: one output per item, no quarantine side output (a file with bad rows
  // costs one more PUT in both workers), so the per-item figures read as the protocol's cost.
  const inputs = generateInputs(createPrng(options.seed ?? 1).fork('bench'), options.items, { onlyValid: true });
  const repeats = options.repeats ?? 3;
  const partial: Partial<Record<System, Omit<SystemFigures, 'endToEnd'>>> = {};
  const outputs = new Map<System, Map<string, Buffer>>();
  for (const system of [System.RERUN, System.POWERTOOLS]) {
    partial[system] = await runPhases(options, system, inputs, outputs, log);
  }
  const endToEnd = await endToEndFirstRuns(options, inputs, repeats, log);
  log('ceiling: a handler that does nothing, through the same runner...');
  const ceiling = await setUp(options.endpoint, options.clients, 'noop', inputs);
  let runnerCeilingItemsPerSecond: number;
  try {
    runnerCeilingItemsPerSecond = (await runPhase(ceiling, inputs.length, new Map())).itemsPerSecond;
  } finally {
    await ceiling.proxy.stop();
  }
  const systems = Object.fromEntries(
    [System.RERUN, System.POWERTOOLS].map((system) => [
      system,
      { ...(partial[system] as Omit<SystemFigures, 'endToEnd'>), endToEnd: endToEnd[system] },
    ]),
  ) as Record<System, SystemFigures>;
  return {
    items: inputs.length,
    repeats,
    memoryMiB: BENCH_TOPOLOGY.normalize.memoryMiB,
    systems,
    runnerCeilingItemsPerSecond,
    outputsIdentical: sameOutputs(outputs),
  };
}

/**
 * One system through the phases. `outputs` collects each system's first-run outputs; the first
 * system's are the reference every later check compares with (the report says whether the two
 * systems' were byte-identical).
 */
async function runPhases(
  options: SideBySideOptions,
  system: System,
  inputs: readonly ChaosInput[],
  outputs: Map<System, Map<string, Buffer>>,
  log: (line: string) => void,
): Promise<Omit<SystemFigures, 'endToEnd'>> {
  const { clients } = options;
  const sut = await setUp(options.endpoint, clients, system, inputs, PHASE_LATENCY_MS);
  try {
    log(`${system}: first run of ${inputs.length} items through the local runner (modelled latency)...`);
    const noReference = new Map<string, Buffer>();
    const firstRaw = await runPhase(sut, inputs.length, noReference);
    const own = await readOutputs(clients, sut);
    outputs.set(system, own);
    const reference = outputs.get(System.RERUN) ?? own;
    const first = { ...firstRaw, correctOutputs: await countCorrect(clients, sut, reference) };

    log(`${system}: every event delivered again (S3's fresh duplicates)...`);
    await redeliver(clients, sut, sut.inputs, Resend.S3_DUPLICATE);
    const duplicate = await runPhase(sut, inputs.length, reference);

    log(`${system}: every object sent again as rerun reprocess sends it...`);
    await redeliver(clients, sut, sut.inputs, Resend.REPROCESS);
    const rerun = await runPhase(sut, inputs.length, reference);

    log(`${system}: repair run after deleting and corrupting outputs (events re-sent, not fresh)...`);
    const damage = await damageOutputs(clients, sut, reference);
    await redeliver(clients, sut, sut.inputs, Resend.STALE);
    const repairPhase = await runPhase(sut, inputs.length, reference);
    const repaired = await countCorrect(clients, sut, reference, damage.keys);

    // The worker alone reads the inputs the events name: measured before the overwrite changes them.
    const alone = await measureAlone(options, system, sut);

    log(`${system}: every input overwritten with one more row...`);
    const oldInputs = [...sut.inputs];
    await overwriteInputs(clients, sut, inputs);
    const expected = expectedAfterOverwrite(reference);
    const overwrite = await runPhase(sut, inputs.length, expected);

    log(`${system}: the first run's events (old eTags) re-sent after the overwrite...`);
    await redeliver(clients, sut, oldInputs, Resend.STALE);
    const replay = await runPhase(sut, inputs.length, expected);
    return {
      first,
      duplicate,
      rerun,
      repair: { ...repairPhase, deleted: damage.deleted, corrupted: damage.corrupted, repaired },
      overwrite,
      replay,
      ...alone,
    };
  } finally {
    await sut.proxy.stop();
  }
}

/** The worker invoked directly with the phases' batches, without and with the modelled latencies. */
async function measureAlone(
  options: SideBySideOptions,
  system: System,
  sut: SystemUnderTest,
): Promise<Pick<SystemFigures, 'worker' | 'workerWithLatency'>> {
  const repeats = options.repeats ?? 3;
  const log = options.log ?? (() => {});
  log(`${system}: the worker alone, invoked with the same batches (${repeats} first runs, then a rerun)...`);
  const measure = (clients: PipelineClients) =>
    measureWorkerThroughput({ clients, system, inputBucket: sut.stack.inputBucket, inputs: sut.inputs, repeats });
  const worker = await measure(options.clients);
  log(`${system}: the worker alone again, with modelled AWS latencies on every request...`);
  const latency = await FaultProxy.start({
    upstream: options.endpoint,
    keepLog: false,
    plan: { serviceLatencyMs: MODELLED_AWS_LATENCY_MS },
  });
  try {
    return {
      worker,
      workerWithLatency: await measure(createPipelineClients({ endpoint: latency.url, region: 'us-east-1' })),
    };
  } finally {
    await latency.stop();
  }
}

/**
 * End to end is one runner process over one queue: a single run moves with whatever else shares the
 * machine. First runs on fresh resources, without added latency, the two systems alternating, and
 * the median is kept.
 */
async function endToEndFirstRuns(
  options: SideBySideOptions,
  inputs: readonly ChaosInput[],
  repeats: number,
  log: (line: string) => void,
): Promise<Record<System, SystemFigures['endToEnd']>> {
  const runs: Record<System, number[]> = { [System.RERUN]: [], [System.POWERTOOLS]: [] };
  for (let i = 0; i < repeats; i++) {
    const order = i % 2 === 1 ? [System.POWERTOOLS, System.RERUN] : [System.RERUN, System.POWERTOOLS];
    for (const system of order) {
      log(`${system}: end-to-end first run ${i + 1} of ${repeats} on fresh resources...`);
      const sut = await setUp(options.endpoint, options.clients, system, inputs);
      try {
        runs[system].push((await runPhase(sut, inputs.length, new Map())).itemsPerSecond);
      } finally {
        await sut.proxy.stop();
      }
    }
  }
  const result = (system: System) => ({ itemsPerSecond: median(runs[system]), runs: runs[system] });
  return { [System.RERUN]: result(System.RERUN), [System.POWERTOOLS]: result(System.POWERTOOLS) };
}

async function setUp(
  endpoint: string,
  clients: PipelineClients,
  system: System | 'noop',
  inputs: readonly ChaosInput[],
  serviceLatencyMs?: FaultPlan['serviceLatencyMs'],
): Promise<SystemUnderTest> {
  const id = `bench-${system.slice(0, 1)}-${randomBytes(3).toString('hex')}`;
  const stack = await provisionLocalStack({
    clients,
    names: { inputBucket: `${id}-in`, outputBucket: `${id}-out`, queue: `${id}-q`, dlq: `${id}-dlq` },
    topology: BENCH_TOPOLOGY,
    // As deployed: the events the bench re-sends name each upload's version (moto's own do not).
    versionedInput: true,
  });
  await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: stack.queueUrl }));
  const proxy = await FaultProxy.start({
    upstream: endpoint,
    keepLog: false,
    ...(serviceLatencyMs ? { plan: { serviceLatencyMs } } : {}),
  });
  const env: Record<string, string> = {
    AWS_ENDPOINT_URL: proxy.url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    OUTPUT_BUCKET: stack.outputBucket,
    LOG_LEVEL: 'error',
    RUNNER_QUEUE_URL: stack.queueUrl,
    RUNNER_MODE: 'drain',
    RUNNER_FUNCTION_TIMEOUT: String(BENCH_TOPOLOGY.normalize.functionTimeoutSeconds),
    RUNNER_BATCH_SIZE: String(BENCH_TOPOLOGY.normalize.batchSize),
    RUNNER_MAX_CONCURRENCY: String(BENCH_TOPOLOGY.normalize.maxConcurrency),
    RUNNER_MEMORY_MB: String(BENCH_TOPOLOGY.normalize.memoryMiB),
  };
  if (system === System.POWERTOOLS) {
    const table = `${id}-idempotency`;
    await createIdempotencyTable(clients.dynamodb, table);
    env.IDEMPOTENCY_TABLE = table;
    env.RUNNER_HANDLER = 'bench/baseline/handler.ts';
  }
  if (system === 'noop') env.RUNNER_HANDLER = 'bench/fixtures/noopHandler.ts';
  // Upload before the runner starts: each upload's S3 notification enqueues its event.
  const uploaded = await mapWithConcurrency(inputs, 8, async (input) => {
    const out = await clients.s3.send(
      new PutObjectCommand({ Bucket: stack.inputBucket, Key: input.key, Body: Buffer.from(input.body) }),
    );
    return {
      key: input.key,
      etag: (out.ETag ?? '').replace(/"/g, ''),
      size: Buffer.byteLength(input.body),
      ...versionOf(out),
    };
  });
  return { system, clients, stack, proxy, env, inputs: uploaded };
}

/**
 * Runs the queue to empty through the runner process; the counting proxy sees every request, the
 * runner reports each invocation's duration. `expected` (output bytes per input key) is what the
 * outputs are checked against afterwards; empty: not checked.
 */
async function runPhase(
  sut: SystemUnderTest,
  items: number,
  expected: ReadonlyMap<string, Buffer>,
): Promise<PhaseFigures> {
  sut.proxy.resetStats();
  let exit: RunnerEvent | undefined;
  let durationMs = 0;
  const runner = new RunnerSupervisor({
    env: sut.env,
    restart: false,
    onEvent: (event) => {
      if (event.event === 'exit') exit = event;
      if (event.event === 'invocation') durationMs += Math.ceil(Number(event.durationMs ?? 0));
    },
  });
  runner.start();
  await runner.waitForExit();
  if (exit?.code !== 0) throw new Error(`${sut.system} runner failed: ${JSON.stringify(exit)}\n${runner.stderr}`);
  const failed = runner.totals.records.failed ?? 0;
  if (failed > 0)
    throw new Error(`${sut.system}: ${failed} record(s) failed: ${JSON.stringify(runner.totals.failureReasons)}`);
  const usage = { invocations: runner.totals.invocations, durationMs, memoryMiB: BENCH_TOPOLOGY.normalize.memoryMiB };
  const correctOutputs =
    expected.size > 0 && sut.system !== 'noop' ? await countCorrect(sut.clients, sut, expected) : 0;
  const measured = figures(sut.proxy.stats(), items, Number(exit.busyMs ?? 0), usage, correctOutputs);
  // Nothing should come back in a run without faults; if something does (a lost receive, a refused
  // delete), the phase includes a visibility timeout of waiting: say so next to its figures.
  const { retained, deleteFailures, invocationErrors } = runner.totals;
  if (retained === 0 && deleteFailures === 0) return measured;
  return {
    ...measured,
    anomaly: `${retained} message(s) retained, ${deleteFailures} delete failure(s) ${JSON.stringify(invocationErrors)}`,
  };
}

function figures(
  stats: FaultProxyStats,
  items: number,
  busyMs: number,
  usage: LambdaUsage,
  correctOutputs: number,
): PhaseFigures {
  const drainChecks = stats.byOperation['SQS:GetQueueAttributes'] ?? 0;
  const perItem = (n: number) => round(n / items, 3);
  const operations = Object.fromEntries(
    Object.entries(stats.byOperation).filter(([op]) => op !== 'SQS:GetQueueAttributes'),
  );
  return {
    items,
    requestsPerItem: {
      S3: perItem(stats.byService.S3 ?? 0),
      DynamoDB: perItem(stats.byService.DynamoDB ?? 0),
      SQS: perItem((stats.byService.SQS ?? 0) - drainChecks),
    },
    operations,
    lambda: { ...usage, msPerItem: round(usage.durationMs / Math.max(items, 1), 2) },
    costPerMillionItems: costPerMillionItems(operations, items, usage),
    s3BodyBytesPerItem: perItem(stats.responseBodyBytes.S3 ?? 0),
    bodyBytesPerItem: perItem((stats.responseBodyBytes.S3 ?? 0) + (stats.responseBodyBytes.DynamoDB ?? 0)),
    itemsPerSecond: busyMs > 0 ? round((items * 1000) / busyMs, 1) : 0,
    busyMs,
    invocations: usage.invocations,
    correctOutputs,
  };
}

/**
 * Sends the inputs' ObjectCreated events again. `fresh`: with an event time of now, as S3 delivers
 * a duplicate of a recent event (first receive, within the function's timeout); otherwise without
 * one, as an operator's rerun or a backfill of the window sends them (never fresh).
 */
async function redeliver(
  clients: PipelineClients,
  sut: SystemUnderTest,
  inputs: readonly UploadedInput[],
  how: Resend,
) {
  const sentAt = Date.now();
  const bodies = inputs.map(({ key, etag, size, versionId }) =>
    how === Resend.REPROCESS
      ? reprocessMessageBody({ bucket: sut.stack.inputBucket, key, etag, size, sentAt })
      : JSON.stringify({
          Records: [
            {
              eventVersion: '2.1',
              eventSource: 'aws:s3',
              awsRegion: 'us-east-1',
              ...(how === Resend.S3_DUPLICATE ? { eventTime: new Date(sentAt).toISOString() } : {}),
              eventName: 'ObjectCreated:Put',
              s3: {
                bucket: { name: sut.stack.inputBucket },
                // S3's own event names the write's version; a stale re-send is as a hand-made message.
                object: {
                  key: encodeS3EventKey(key),
                  eTag: etag,
                  size,
                  ...(how === Resend.S3_DUPLICATE && versionId ? { versionId } : {}),
                },
              },
            },
          ],
        }),
  );
  for (let start = 0; start < bodies.length; start += 10) {
    await clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: sut.stack.queueUrl,
        Entries: bodies.slice(start, start + 10).map((body, i) => ({ Id: String(i), MessageBody: body })),
      }),
    );
  }
}

/**
 * An input as uploaded: what S3's event names (key, ETag, size, and the version it made: the input
 * bucket is versioned, as RerunPipeline creates it).
 */
export interface UploadedInput {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
  readonly versionId?: string;
}

/** The version an upload made, as its event names it (none from a bucket that is not versioned). */
function versionOf(out: { VersionId?: string | undefined }): { versionId?: string } {
  return out.VersionId && out.VersionId !== 'null' ? { versionId: out.VersionId } : {};
}

/** How the phases send every object again. */
const Resend = {
  /** As S3 delivering the event a second time: its time and first receive (a fresh delivery of S3's own). */
  S3_DUPLICATE: 's3-duplicate',
  /** As `rerun reprocess` sends it (reprocessMessageBody, with its send time). */
  REPROCESS: 'reprocess',
  /** Without an event time: never fresh (an operator's hand-made rerun, or an event replayed late). */
  STALE: 'stale',
} as const;
type Resend = (typeof Resend)[keyof typeof Resend];

function outputKeyOf(sut: SystemUnderTest, key: string): string {
  return createNormalizeWorker({ outputBucket: sut.stack.outputBucket }).outputKey({
    bucket: sut.stack.inputBucket,
    key,
  });
}

async function readOutputs(clients: PipelineClients, sut: SystemUnderTest): Promise<Map<string, Buffer>> {
  const outputs = new Map<string, Buffer>();
  await mapWithConcurrency(sut.inputs, 8, async ({ key }) => {
    const got = await clients.s3.send(
      new GetObjectCommand({ Bucket: sut.stack.outputBucket, Key: outputKeyOf(sut, key) }),
    );
    outputs.set(key, Buffer.from((await got.Body?.transformToByteArray()) ?? new Uint8Array()));
  });
  return outputs;
}

/** Deletes 10 % of the outputs and overwrites another 10 % with other bytes, behind the worker's back. */
async function damageOutputs(clients: PipelineClients, sut: SystemUnderTest, reference: Map<string, Buffer>) {
  const step = 10;
  const keys: string[] = [];
  let deleted = 0;
  let corrupted = 0;
  for (let i = 0; i < sut.inputs.length; i++) {
    const input = sut.inputs[i];
    if (!input || !reference.has(input.key)) continue;
    const Key = outputKeyOf(sut, input.key);
    if (i % step === 0) {
      await new S3ObjectStore(clients.s3).delete(sut.stack.outputBucket, Key);
      deleted++;
      keys.push(input.key);
    } else if (i % step === 5) {
      await clients.s3.send(
        new PutObjectCommand({ Bucket: sut.stack.outputBucket, Key, Body: '{"corrupted":true}\n' }),
      );
      corrupted++;
      keys.push(input.key);
    }
  }
  return { deleted, corrupted, keys };
}

/**
 * Outputs (of `keys`, default every input) whose bytes are the expected ones and, for rerun, that
 * also pass its done-check (a valid output of the current code version).
 */
async function countCorrect(
  clients: PipelineClients,
  sut: SystemUnderTest,
  expected: ReadonlyMap<string, Buffer>,
  keys: readonly string[] = sut.inputs.map((input) => input.key),
): Promise<number> {
  const store = new S3ObjectStore(clients.s3);
  const correct = await mapWithConcurrency(keys, 8, async (key) => {
    const outKey = outputKeyOf(sut, key);
    const head = await store.head(sut.stack.outputBucket, outKey);
    if (!head) return false;
    const got = await clients.s3.send(new GetObjectCommand({ Bucket: sut.stack.outputBucket, Key: outKey }));
    const bytes = Buffer.from((await got.Body?.transformToByteArray()) ?? new Uint8Array());
    if (!bytes.equals(expected.get(key) ?? Buffer.alloc(1))) return false;
    if (sut.system !== System.RERUN) return true;
    const verdict = judgeOutput(head, {
      source: { bucket: sut.stack.inputBucket, key },
      codeVersion: NORMALIZE_CODE_VERSION,
    });
    return verdict.state === OutputState.BUILT;
  });
  return correct.filter(Boolean).length;
}

/**
 * Overwrites every input with its content plus a copy of its last row (valid in both formats), so
 * the expected output is the old one plus a copy of its last line ({@link expectedAfterOverwrite}).
 * S3's notifications enqueue the events; the inputs' new ETags replace the old ones.
 */
async function overwriteInputs(clients: PipelineClients, sut: SystemUnderTest, inputs: readonly ChaosInput[]) {
  const bodies = new Map(inputs.map((input) => [input.key, input.body]));
  const updated = await mapWithConcurrency(sut.inputs, 8, async ({ key }) => {
    const body = bodies.get(key) ?? '';
    const bytes = Buffer.from(body + lastLine(body));
    const out = await clients.s3.send(new PutObjectCommand({ Bucket: sut.stack.inputBucket, Key: key, Body: bytes }));
    return { key, etag: (out.ETag ?? '').replace(/"/g, ''), size: bytes.length, ...versionOf(out) };
  });
  sut.inputs.splice(0, sut.inputs.length, ...updated);
}

/** The outputs expected after {@link overwriteInputs}: each reference output plus a copy of its last line. */
function expectedAfterOverwrite(reference: ReadonlyMap<string, Buffer>): Map<string, Buffer> {
  return new Map(
    [...reference].map(([key, bytes]) => {
      const text = bytes.toString('utf8');
      return [key, Buffer.from(text + lastLine(text))];
    }),
  );
}

/** The last line of a text that ends with a newline, with its newline. */
function lastLine(text: string): string {
  const end = text.endsWith('\n') ? text.length - 1 : text.length;
  return `${text.slice(text.lastIndexOf('\n', end - 1) + 1, end)}\n`;
}

function sameOutputs(outputs: Map<System, Map<string, Buffer>>): boolean {
  const a = outputs.get(System.RERUN);
  const b = outputs.get(System.POWERTOOLS);
  if (!a || !b || a.size !== b.size) return false;
  for (const [key, bytes] of a) if (!b.get(key)?.equals(bytes)) return false;
  return true;
}

function median(runs: readonly number[]): number {
  const sorted = [...runs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
