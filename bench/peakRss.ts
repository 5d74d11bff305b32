import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { PurgeQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { provisionLocalStack } from '../app/dev/provisionLocalStack.js';
import { topology } from '../app/topology.js';
import type { AwsClients } from '../src/aws/clients.js';
import { judgeOutput, OutputState } from '../src/done/judgeOutput.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';
import { bundleEntry, stackWorkerBundles } from './bundleSize.js';
import { newestCpuProfile, type ProfileSummary, summarizeCpuProfile } from './cpuProfile.js';
import { type BenchRows, extensionOf, generatedRows } from './generatedRows.js';

/** The peak memory of the worker over one large input. */
export interface PeakRssResult {
  /** The input's rows (generatedRows.ts; every 50th row bad). */
  readonly format: BenchRows;
  readonly inputBytes: number;
  /** Rows of the input (header included). */
  readonly rows: number;
  readonly outputBytes: number;
  /** The quarantine side output's size (every 50th row is bad), bytes. */
  readonly quarantineBytes: number;
  /** VmHWM of the worker process (LocalRunner + the bundled normalize handler), MiB. */
  readonly peakRssMiB: number;
  /** The highest VmRSS sampled every 100 ms from outside, MiB (a cross-check of the above). */
  readonly sampledPeakRssMiB: number;
  /** Peak RSS of the same worker process run over an empty queue (node, runtime, SDK, handler), MiB. */
  readonly idleRssMiB: number;
  /** From the item's receive to its delete, seconds. */
  readonly seconds: number;
  /**
   * MiB of input per CPU second of the worker process through the bundled handler (its CPU time over
   * the input less the same process's CPU time over an empty queue): the per-core throughput,
   * independent of the emulator's own CPU on this shared machine.
   */
  readonly mibPerCpuSecond: number;
  /** The function memory size the worker ran with (its memory budget derives from it), MiB. */
  readonly memoryMiB: number;
  /**
   * With `cpuProfileDir`: the worker process's CPU profile over the input (`node --cpu-prof`), by
   * self time, mapped through the bundle's source map. Its figures are not the run's: a profiled
   * process is slower (and its RSS higher) than an unprofiled one.
   */
  readonly cpuProfile?: ProfileSummary;
}

const _OUT_DIR = resolve('node_modules/.cache/rerun-bench');
const PART_BYTES = 64 * 1024 * 1024;
/** Lambda's smallest memory size, which the peak-rss-1gib target aims at. */
const RSS_MEMORY_MIB = 128;

/**
 * Processes one `bytes`-long input of `format` (generatedRows.ts, generated on the fly and uploaded as a
 * multipart upload, never stored in the repository; its bad rows make the worker write a quarantine
 * side output next to the main one) through the worker process as Lambda would run it: the normalize handler
 * and the runner bundled with esbuild (no TypeScript loader in the process), the AWS SDK from
 * node_modules. The worker process's peak resident set (VmHWM) is read from /proc.
 *
 * @example
 * const result = await measurePeakRss({ endpoint, clients, format: 'csv', bytes: 1024 ** 3 });
 */
export async function measurePeakRss(options: {
  readonly endpoint: string;
  readonly clients: AwsClients;
  readonly format: BenchRows;
  readonly bytes: number;
  /**
   * Also run the worker once more over the same input under `node --cpu-prof`, writing the profile
   * here (the measured figures come from the unprofiled run).
   * @default no profile
   */
  readonly cpuProfileDir?: string;
  readonly log?: (line: string) => void;
}): Promise<PeakRssResult> {
  const { clients } = options;
  const log = options.log ?? (() => {});
  const { format } = options;
  const id = `bench-rss-${format}-${randomBytes(3).toString('hex')}`;
  const t = {
    ...topology,
    normalize: { ...topology.normalize, functionTimeoutSeconds: 900, visibilityTimeoutSeconds: 5400 },
  };
  const stack = await provisionLocalStack({
    clients,
    names: { inputBucket: `${id}-in`, outputBucket: `${id}-out`, queue: `${id}-q`, dlq: `${id}-dlq` },
    topology: t,
  });
  await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: stack.queueUrl }));

  // The normalize worker as deployed (the stack's asset), run by the bench's runner process.
  const runnerFile = await bundleEntry('test/chaos/fixtures/lambdaRunner.ts', 'rss-runner');
  const handlerFile = (await stackWorkerBundles()).normalize;
  if (!handlerFile) throw new Error('the synthesized stack has no normalize worker');

  log('peak RSS: the worker process with nothing to do (its baseline)...');
  const env = {
    ...process.env,
    AWS_ENDPOINT_URL: options.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    OUTPUT_BUCKET: stack.outputBucket,
    LOG_LEVEL: 'error',
    RUNNER_HANDLER: handlerFile,
    RUNNER_QUEUE_URL: stack.queueUrl,
    RUNNER_MODE: 'drain',
    RUNNER_FUNCTION_TIMEOUT: '900',
    RUNNER_BATCH_SIZE: '1',
    RUNNER_MAX_CONCURRENCY: '1',
    // Lambda's smallest memory size: the worker's memory budget derives from it (MemoryBudget.ts).
    RUNNER_MEMORY_MB: String(RSS_MEMORY_MIB),
  };
  const idle = await runWorker(runnerFile, env);

  const key = `incoming/large/one-gibibyte-${format}.${extensionOf(format)}`;
  log(`peak RSS: uploading a ${(options.bytes / 1024 ** 2).toFixed(0)} MiB ${format} input (generated on the fly)...`);
  const { bytes: inputBytes, rows } = await uploadGeneratedInput(
    clients,
    stack.inputBucket,
    key,
    format,
    options.bytes,
  );

  log(`peak RSS: processing the ${format} input in the worker process...`);
  const { code, exit, stdout, sampledKiB } = await runWorker(runnerFile, env);
  const worker = createNormalizeWorker({ outputBucket: stack.outputBucket });
  const outputKey = worker.outputKey({ bucket: stack.inputBucket, key });
  const quarantineKey = worker.sideOutputs?.quarantine?.({ bucket: stack.inputBucket, key });
  if (!quarantineKey) throw new Error('the normalize worker has no quarantine side output');
  // The bundled runner and handler each hold their own copy of the outcome emitter, so the runner
  // prints no record events here: the output's done-check says whether the item was processed.
  const store = new S3ObjectStore(clients.s3);
  const head = await store.head(stack.outputBucket, outputKey);
  const verdict = judgeOutput(head, {
    source: { bucket: stack.inputBucket, key },
    codeVersion: NORMALIZE_CODE_VERSION,
  });
  if (code !== 0 || !exit || verdict.state !== OutputState.BUILT) {
    throw new Error(`the worker did not process the large input (${verdict.state}): ${stdout.slice(-2000)}`);
  }
  // Every 50th row is bad: the quarantine side output must be there, and not empty.
  const quarantine = await store.head(stack.outputBucket, quarantineKey);
  if (!quarantine || quarantine.contentLength === 0) {
    throw new Error(`the worker wrote no quarantine side output for the large ${format} input`);
  }
  let cpuProfile: ProfileSummary | undefined;
  if (options.cpuProfileDir) {
    log(`peak RSS: the same input again under node --cpu-prof (profile in ${options.cpuProfileDir})...`);
    mkdirSync(options.cpuProfileDir, { recursive: true });
    await store.delete(stack.outputBucket, outputKey);
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.queueUrl, MessageBody: eventBody(stack.inputBucket, key) }),
    );
    const profiled = await runWorker(runnerFile, env, ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`]);
    const file = newestCpuProfile(options.cpuProfileDir);
    if (profiled.code !== 0 || !file) throw new Error(`the profiled worker failed: ${profiled.stdout.slice(-2000)}`);
    cpuProfile = summarizeCpuProfile(file, { bundle: handlerFile });
  }
  // Free the emulator's memory.
  await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.inputBucket, Key: key }));
  await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: outputKey }));
  await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: quarantineKey }));
  return {
    format,
    inputBytes,
    rows,
    outputBytes: head?.contentLength ?? 0,
    quarantineBytes: quarantine.contentLength,
    peakRssMiB: round(Number(exit.vmHwmKiB ?? 0) / 1024),
    sampledPeakRssMiB: round(sampledKiB / 1024),
    idleRssMiB: round(Number(idle.exit?.vmHwmKiB ?? 0) / 1024),
    seconds: round(Number(exit.busyMs ?? 0) / 1000),
    mibPerCpuSecond: round(
      inputBytes / 1024 ** 2 / Math.max(0.001, (Number(exit.cpuMs ?? 0) - Number(idle.exit?.cpuMs ?? 0)) / 1000),
    ),
    memoryMiB: RSS_MEMORY_MIB,
    ...(cpuProfile ? { cpuProfile } : {}),
  };
}

/** The S3 notification of one object, as the queue receives it (the bench's second run of the same input). */
function eventBody(bucket: string, key: string): string {
  return JSON.stringify({
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventName: 'ObjectCreated:Put',
        s3: { bucket: { name: bucket }, object: { key: encodeURIComponent(key).replace(/%2F/g, '/') } },
      },
    ],
  });
}

/** Uploads about `bytes` of generated `format` rows (generatedRows.ts) as a multipart upload of 64 MiB parts. */
async function uploadGeneratedInput(
  clients: AwsClients,
  bucket: string,
  key: string,
  format: BenchRows,
  bytes: number,
): Promise<{ bytes: number; rows: number }> {
  const { UploadId } = await clients.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
  const parts: { PartNumber: number; ETag: string }[] = [];
  let row = 0;
  let total = 0;
  while (total < bytes) {
    const rows = generatedRows(format, row, Math.min(PART_BYTES, bytes - total));
    row = rows.next;
    const body = Buffer.from(rows.text, 'utf8');
    const PartNumber = parts.length + 1;
    const out = await clients.s3.send(
      new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber, Body: body }),
    );
    parts.push({ PartNumber, ETag: out.ETag ?? '' });
    total += body.byteLength;
  }
  await clients.s3.send(
    new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
  );
  return { bytes: total, rows: row + (format === 'ndjson' ? 0 : 1) };
}

/** Runs the bundled worker process until the queue is drained, sampling its RSS every 100 ms. */
async function runWorker(
  runnerFile: string,
  env: NodeJS.ProcessEnv,
  nodeFlags: readonly string[] = [],
): Promise<{ code: number | null; exit: Record<string, unknown> | undefined; stdout: string; sampledKiB: number }> {
  const child = spawn(process.execPath, [...lambdaHeapFlags(RSS_MEMORY_MIB), ...nodeFlags, runnerFile], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  let sampledKiB = 0;
  const sampler = setInterval(() => {
    sampledKiB = Math.max(sampledKiB, readStatusKiB(child.pid, 'VmRSS') ?? 0);
  }, 100);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  clearInterval(sampler);
  const exit = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((e) => e.event === 'exit');
  return { code, exit, stdout, sampledKiB };
}

/**
 * The V8 heap limits Lambda's Node.js bootstrap passes for the function's memory size, as its
 * published bootstrap scripts show (semi-space 5 % and old space 90 % of it, e.g. 6 and 115 MB at
 * 128 MB; AWS does not document whether every current runtime passes the same). Without them V8
 * sizes its heap for the machine and collects lazily: the unconstrained process peaked at 202 MiB
 * over the 1 GiB CSV, the constrained one at 136 MiB (with 8 MiB parts copied per part; 104 MiB
 * since OutputWriter fills two reused 5 MiB part buffers).
 */
function lambdaHeapFlags(memoryMiB: number): string[] {
  return [
    `--max-semi-space-size=${Math.floor((memoryMiB * 5) / 100)}`,
    `--max-old-space-size=${Math.floor((memoryMiB * 90) / 100)}`,
  ];
}

function readStatusKiB(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
