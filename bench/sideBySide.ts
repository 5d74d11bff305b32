import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PurgeQueueCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { type LocalStackResources, provisionLocalStack } from '../app/dev/provisionLocalStack.js';
import { type Topology, topology } from '../app/topology.js';
import { createPipelineClients, type PipelineClients } from '../src/aws/pipelineClients.js';
import { mapWithConcurrency } from '../src/batch/mapWithConcurrency.js';
import { judgeOutput, OutputState } from '../src/done/judgeOutput.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';
import { FaultProxy, type FaultProxyStats } from '../test/chaos/support/FaultProxy.js';
import { type ChaosInput, generateInputs } from '../test/chaos/support/inputs.js';
import { createPrng } from '../test/chaos/support/prng.js';
import { type RunnerEvent, RunnerSupervisor } from '../test/chaos/support/RunnerSupervisor.js';
import { costPerMillionItems, type PhaseCost } from './awsCost.js';
import { createIdempotencyTable } from './baseline/powertoolsWorker.js';
import { MODELLED_AWS_LATENCY_MS, measureWorkerThroughput, type WorkerThroughput } from './workerThroughput.js';

/** The two workers compared. */
export const System = { RERUN: 'rerun', POWERTOOLS: 'powertools' } as const;
export type System = (typeof System)[keyof typeof System];

/** Figures of one phase (first run, rerun, repair run) of one system. */
export interface PhaseFigures {
  readonly items: number;
  /** Requests per item by service (SQS: the runner's receives and deletes; its drain checks are left out). */
  readonly requestsPerItem: { readonly S3: number; readonly DynamoDB: number; readonly SQS: number };
  /** Requests by operation, totals. */
  readonly operations: Readonly<Record<string, number>>;
  /** USD per million items from the counted requests at AWS list prices (awsCost.ts). */
  readonly costPerMillionItems: PhaseCost;
  /** Response body bytes read per item from S3, and from S3 + DynamoDB. */
  readonly s3BodyBytesPerItem: number;
  readonly bodyBytesPerItem: number;
  /**
   * Items per second, from the first invocation's start to the last invocation's end. For the
   * first run: the median of `itemsPerSecondRuns`.
   */
  readonly itemsPerSecond: number;
  /** First run only: each end-to-end first run's items/s (fresh resources each; the systems alternate). */
  readonly itemsPerSecondRuns?: readonly number[];
  readonly busyMs: number;
  readonly invocations: number;
  /** Set when messages came back in a run without faults (its time then includes a visibility timeout). */
  readonly anomaly?: string;
}

/** The side-by-side result. */
export interface SideBySideResult {
  readonly items: number;
  /** Worker-only first runs per system (the median is kept). */
  readonly repeats: number;
  readonly systems: Record<
    System,
    {
      /** End to end through the local runner and the counting proxy. */
      first: PhaseFigures;
      rerun: PhaseFigures;
      repair: PhaseFigures & RepairFigures;
      /** The worker invoked directly with the same batches (no SQS in the loop). */
      worker: WorkerThroughput;
      /** The same, through a proxy adding modelled AWS latencies (MODELLED_AWS_LATENCY_MS) to each request. */
      workerWithLatency: WorkerThroughput;
    }
  >;
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

interface SystemUnderTest {
  readonly system: System | 'noop';
  readonly stack: LocalStackResources;
  readonly proxy: FaultProxy;
  readonly env: Record<string, string>;
  readonly inputs: { key: string; etag: string }[];
}

/**
 * rerun and the Powertools baseline side by side on the same emulator, through the same local
 * runner and a counting proxy: the same inputs (uploaded to each system's input bucket), a first
 * run, a rerun where everything is done, then a repair run after outputs were deleted or corrupted
 * behind the workers' backs. Then each worker alone (invoked directly with the same batches), and a
 * do-nothing handler through the runner: the ceiling the runner and the emulator put on any worker.
 *
 * @example
 * const result = await runSideBySide({ endpoint, clients, items: 300 });
 */
export async function runSideBySide(options: {
  readonly endpoint: string;
  readonly clients: PipelineClients;
  readonly items: number;
  /** Worker-only first runs, each on a fresh output bucket; the median is kept. @default 3 */
  readonly repeats?: number;
  readonly seed?: number;
  readonly log?: (line: string) => void;
}): Promise<SideBySideResult> {
  const log = options.log ?? (() => {});
  // Valid CSV and NDJSON only: one output per item, no quarantine side output (a file with bad rows
  // costs one more PUT in both workers), so the per-item figures read as the protocol's cost.
  const inputs = generateInputs(createPrng(options.seed ?? 1).fork('bench'), options.items, { onlyValid: true });
  const repeats = options.repeats ?? 3;
  const systems = {} as SideBySideResult['systems'];
  const outputs = new Map<System, Map<string, Buffer>>();
  for (const system of [System.RERUN, System.POWERTOOLS]) {
    const sut = await setUp(options.endpoint, options.clients, system, inputs);
    try {
      log(`${system}: first run of ${inputs.length} items through the local runner...`);
      const first = await runPhase(sut, inputs.length);
      const reference = await readOutputs(options.clients, sut);
      outputs.set(system, reference);

      log(`${system}: rerun with every item done...`);
      await redeliver(options.clients, sut, sut.inputs);
      const rerun = await runPhase(sut, inputs.length);

      log(`${system}: repair run after deleting and corrupting outputs...`);
      const damage = await damageOutputs(options.clients, sut, reference);
      await redeliver(options.clients, sut, sut.inputs);
      const repairPhase = await runPhase(sut, inputs.length);
      const repaired = await countRepaired(options.clients, sut, reference, damage.keys);

      log(`${system}: the worker alone, invoked with the same batches (${repeats} first runs, then a rerun)...`);
      const worker = await measureWorkerThroughput({
        clients: options.clients,
        system,
        inputBucket: sut.stack.inputBucket,
        inputs: sut.inputs,
        repeats,
      });
      log(`${system}: the worker alone again, with modelled AWS latencies on every request...`);
      const latency = await FaultProxy.start({
        upstream: options.endpoint,
        keepLog: false,
        plan: { serviceLatencyMs: MODELLED_AWS_LATENCY_MS },
      });
      let workerWithLatency: WorkerThroughput;
      try {
        workerWithLatency = await measureWorkerThroughput({
          clients: createPipelineClients({ endpoint: latency.url, region: 'us-east-1' }),
          system,
          inputBucket: sut.stack.inputBucket,
          inputs: sut.inputs,
          repeats,
        });
      } finally {
        await latency.stop();
      }
      systems[system] = {
        first,
        rerun,
        repair: { ...repairPhase, deleted: damage.deleted, corrupted: damage.corrupted, repaired },
        worker,
        workerWithLatency,
      };
    } finally {
      await sut.proxy.stop();
    }
  }

  // End to end is one runner process over one queue: a single run moves with whatever else shares
  // the machine. More first runs on fresh resources, the two systems alternating (the other one
  // first this time), and the median is kept.
  const endToEnd: Record<System, number[]> = {
    [System.RERUN]: [systems[System.RERUN].first.itemsPerSecond],
    [System.POWERTOOLS]: [systems[System.POWERTOOLS].first.itemsPerSecond],
  };
  for (let i = 1; i < repeats; i++) {
    const order = i % 2 === 1 ? [System.POWERTOOLS, System.RERUN] : [System.RERUN, System.POWERTOOLS];
    for (const system of order) {
      log(`${system}: end-to-end first run ${i + 1} of ${repeats} on fresh resources...`);
      const sut = await setUp(options.endpoint, options.clients, system, inputs);
      try {
        endToEnd[system].push((await runPhase(sut, inputs.length)).itemsPerSecond);
      } finally {
        await sut.proxy.stop();
      }
    }
  }
  for (const system of [System.RERUN, System.POWERTOOLS]) {
    const runs = endToEnd[system];
    systems[system].first = { ...systems[system].first, itemsPerSecond: median(runs), itemsPerSecondRuns: runs };
  }

  log('ceiling: a handler that does nothing, through the same runner...');
  const ceiling = await setUp(options.endpoint, options.clients, 'noop', inputs);
  let runnerCeilingItemsPerSecond: number;
  try {
    runnerCeilingItemsPerSecond = (await runPhase(ceiling, inputs.length)).itemsPerSecond;
  } finally {
    await ceiling.proxy.stop();
  }
  return {
    items: inputs.length,
    repeats,
    systems,
    runnerCeilingItemsPerSecond,
    outputsIdentical: sameOutputs(outputs),
  };
}

async function setUp(
  endpoint: string,
  clients: PipelineClients,
  system: System | 'noop',
  inputs: readonly ChaosInput[],
): Promise<SystemUnderTest> {
  const id = `bench-${system.slice(0, 1)}-${randomBytes(3).toString('hex')}`;
  const stack = await provisionLocalStack({
    clients,
    names: { inputBucket: `${id}-in`, outputBucket: `${id}-out`, queue: `${id}-q`, dlq: `${id}-dlq` },
    topology: BENCH_TOPOLOGY,
  });
  await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: stack.queueUrl }));
  const proxy = await FaultProxy.start({ upstream: endpoint, keepLog: false });
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
    return { key: input.key, etag: (out.ETag ?? '').replace(/"/g, '') };
  });
  return { system, stack, proxy, env, inputs: uploaded };
}

/** Runs the queue to empty through the runner process; the counting proxy sees every request. */
async function runPhase(sut: SystemUnderTest, items: number): Promise<PhaseFigures> {
  sut.proxy.resetStats();
  let exit: RunnerEvent | undefined;
  const runner = new RunnerSupervisor({
    env: sut.env,
    restart: false,
    onEvent: (event) => {
      if (event.event === 'exit') exit = event;
    },
  });
  runner.start();
  await runner.waitForExit();
  if (exit?.code !== 0) throw new Error(`${sut.system} runner failed: ${JSON.stringify(exit)}\n${runner.stderr}`);
  const failed = runner.totals.records.failed ?? 0;
  if (failed > 0)
    throw new Error(`${sut.system}: ${failed} record(s) failed: ${JSON.stringify(runner.totals.failureReasons)}`);
  const measured = figures(sut.proxy.stats(), items, Number(exit.busyMs ?? 0), runner.totals.invocations);
  // Nothing should come back in a run without faults; if something does (a lost receive, a refused
  // delete), the phase includes a visibility timeout of waiting: say so next to its figures.
  const { retained, deleteFailures, invocationErrors } = runner.totals;
  if (retained === 0 && deleteFailures === 0) return measured;
  return {
    ...measured,
    anomaly: `${retained} message(s) retained, ${deleteFailures} delete failure(s) ${JSON.stringify(invocationErrors)}`,
  };
}

function figures(stats: FaultProxyStats, items: number, busyMs: number, invocations: number): PhaseFigures {
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
    costPerMillionItems: costPerMillionItems(operations, items),
    s3BodyBytesPerItem: perItem(stats.responseBodyBytes.S3 ?? 0),
    bodyBytesPerItem: perItem((stats.responseBodyBytes.S3 ?? 0) + (stats.responseBodyBytes.DynamoDB ?? 0)),
    itemsPerSecond: busyMs > 0 ? round((items * 1000) / busyMs, 1) : 0,
    busyMs,
    invocations,
  };
}

/** Sends every input's ObjectCreated event again (what a rerun or a backfill of the window does). */
async function redeliver(
  clients: PipelineClients,
  sut: SystemUnderTest,
  inputs: readonly { key: string; etag: string }[],
) {
  const bodies = inputs.map(({ key, etag }) =>
    JSON.stringify({
      Records: [
        {
          eventVersion: '2.1',
          eventSource: 'aws:s3',
          awsRegion: 'us-east-1',
          eventName: 'ObjectCreated:Put',
          s3: {
            bucket: { name: sut.stack.inputBucket },
            object: { key: encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/'), eTag: etag },
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

/** Damaged outputs now back to the first run's bytes (and, for rerun, passing its done-check). */
async function countRepaired(
  clients: PipelineClients,
  sut: SystemUnderTest,
  reference: Map<string, Buffer>,
  keys: readonly string[],
): Promise<number> {
  const store = new S3ObjectStore(clients.s3);
  let repaired = 0;
  for (const key of keys) {
    const outKey = outputKeyOf(sut, key);
    const head = await store.head(sut.stack.outputBucket, outKey);
    if (!head) continue;
    const got = await clients.s3.send(new GetObjectCommand({ Bucket: sut.stack.outputBucket, Key: outKey }));
    const bytes = Buffer.from((await got.Body?.transformToByteArray()) ?? new Uint8Array());
    if (!bytes.equals(reference.get(key) ?? Buffer.alloc(1))) continue;
    if (sut.system === System.RERUN) {
      const verdict = judgeOutput(head, {
        source: { bucket: sut.stack.inputBucket, key },
        codeVersion: NORMALIZE_CODE_VERSION,
      });
      if (verdict.state !== OutputState.BUILT) continue;
    }
    repaired++;
  }
  return repaired;
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
