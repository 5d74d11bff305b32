import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { type MotoServer, startMotoServer } from '../../local/emulator/motoServer.js';
import { LocalSetupError } from '../../local/errors.js';
import { ProvisionAction } from '../../local/provision.js';
import { RunnerDrainTimeoutError } from '../../local/runner/errors.js';
import type { FunctionInvoker } from '../../local/runner/FunctionInvoker.js';
import { LambdaRuntimePool } from '../../local/runner/LambdaRuntimePool.js';
import { LocalRunner, type SqsLambdaHandler } from '../../local/runner/LocalRunner.js';
import { type LambdaRuntimeTools, locateLambdaRuntimeTools } from '../../local/runner/lambdaRuntimeTools.js';
import { loadHandler } from '../../local/runner/loadHandler.js';
import { startWebhookSink, type WebhookSink } from '../../local/sink/WebhookSink.js';
import { checkEndpoint } from '../../src/aws/endpointPreflight.js';
import {
  type PipelineClients as AwsClients,
  createPipelineClients as createAwsClients,
} from '../../src/aws/pipelineClients.js';
import { parseRecordOutcomeLogLine } from '../../src/batch/recordOutcomeLog.js';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { emitRecordOutcome, onRecordOutcome } from '../../src/worker/outcomes.js';
import { createSummarizeHandler } from '../partition/createSummarizeHandler.js';
import { startLocalSchedule } from '../partition/localSchedule.js';
import { provisionSummaryStage } from '../partition/provisionSummaryStage.js';
import { referenceInputRules } from '../partition/referenceInputRules.js';
import { topology as defaultTopology, localResourceNames, type Topology, workerQueueNames } from '../topology.js';
import { formatOutcomeLine, formatOutcomeTable } from './formatOutcomeTable.js';
import { type DeliveryCounts, ObjectState, OutcomeTracker } from './OutcomeTracker.js';
import { ProgressReporter } from './ProgressReporter.js';
import { provisionLocalStack } from './provisionLocalStack.js';
import { uploadDirectory } from './uploadDirectory.js';

/**
 * The project root (app/dev/ is two folders down): the repository, where scripts/install-lambda-runtime.sh
 * puts .tools/, or the installed package's dist/. The default handler and examples are found from it.
 */
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** `.ts` when this runs from the sources (a checkout, under tsx), `.js` when compiled (the package). */
const MODULE_EXTENSION = extname(fileURLToPath(import.meta.url));
/** The deployed normalize worker, the handler `rerun dev` runs unless told otherwise. */
const DEFAULT_HANDLER = join(PROJECT_ROOT, 'functions', 'normalize', `handler${MODULE_EXTENSION}`);
/** The samples `--demo` uploads. */
const DEFAULT_EXAMPLES = join(PROJECT_ROOT, 'examples');
/** The stack's bundle synthesis, which `--runtime lambda` runs: in a checkout only (npm does not ship infra/). */
const WORKER_BUNDLES = join(PROJECT_ROOT, 'infra', `workerBundles${MODULE_EXTENSION}`);

/** Where `rerun dev` runs the workers. */
export const DevRuntime = {
  /** The handler modules (TypeScript sources) in this process: fast to start, and the default. */
  IN_PROCESS: 'in-process',
  /**
   * The stack's synthesized bundles, each invocation in a Lambda runtime slot (aws-lambda-rie, the
   * runtime's Node, aws-lambda-ric): what `cdk deploy` uploads, loaded and timed out as Lambda does.
   */
  LAMBDA: 'lambda',
} as const;
export type DevRuntime = (typeof DevRuntime)[keyof typeof DevRuntime];

/** Options of {@link runDev}; the `rerun dev` command fills them from its flags and the environment. */
export interface RunDevOptions {
  /**
   * An emulator (or AWS) endpoint to use; its existing resources are reused.
   * @default undefined: start the embedded moto server, and stop it at the end
   */
  endpoint?: string;
  /** @default 'us-east-1' */
  region?: string;
  /**
   * Prefix of every local resource name (`<appName>-input`, `<appName>-normalize-queue`...).
   * @default topology.appName ('rerun')
   */
  appName?: string;
  /**
   * Upload every file of `examplesDir` under the input prefix before running.
   * @default false
   */
  demo?: boolean;
  /** @default rerun's own samples (examples/ of the repository, also shipped in the package) */
  examplesDir?: string;
  /**
   * The terminal's width (`process.stderr.columns`): the live lines and the table fit in it.
   * @default unlimited (a log or a file)
   */
  columns?: number;
  /**
   * Run until the queue is drained, then return; otherwise run until `signal` aborts.
   * @default false
   */
  once?: boolean;
  /** @default functions/normalize/handler.ts of rerun itself (the deployed normalize worker; compiled in the package) */
  handlerPath?: string;
  /** @default 'handler' */
  handlerExport?: string;
  /**
   * Where the workers run. `lambda` runs the stack's own bundles (no `handlerPath`) and needs the
   * tools of scripts/install-lambda-runtime.sh.
   * @default 'in-process'
   */
  runtime?: DevRuntime;
  /** Override of the work queue's visibility timeout (seconds). @default the topology's */
  visibilityTimeoutSeconds?: number;
  /** Override of the redrive policy's maxReceiveCount. @default the topology's */
  maxReceiveCount?: number;
  /** Override of the function timeout (seconds). @default the topology's */
  functionTimeoutSeconds?: number;
  /**
   * With `once`: give up after this long.
   * @default long enough for a failing message to reach the DLQ: (maxReceiveCount + 1) x visibility timeout + 60 s
   */
  drainTimeoutMs?: number;
  /** Ends a continuous run (and cuts a `once` run short). */
  signal?: AbortSignal;
  /**
   * The process environment: the handler reads OUTPUT_BUCKET, AWS_ENDPOINT_URL, AWS_REGION,
   * LEDGER_TABLE and NOTIFY_URL (set here: the local sink) and LOG_LEVEL (defaulted to 'warn' when
   * unset) from it.
   */
  env?: NodeJS.ProcessEnv;
  /** Receives the READY and SUMMARY lines (machine-readable, one line each). */
  writeResult: (line: string) => void;
  /** Receives everything meant for a person (progress, table, notes). */
  writeHuman: (text: string) => void;
  /** @default false */
  tty?: boolean;
  /** Runner and provisioning logs. @default JSON lines to writeHuman at 'warn' */
  logger?: Logger;
}

/** The `READY` line's payload. */
export interface DevReady {
  endpoint: string;
  region: string;
  emulator: 'embedded' | 'external';
  inputBucket: string;
  inputPrefix: string;
  outputBucket: string;
  queueUrl: string;
  dlqUrl: string;
  /** The dedupe ledger table of the webhook side effect. */
  ledgerTable: string;
  /** The local webhook sink the worker notifies; `GET {sinkUrl}/deliveries` lists what it received. */
  sinkUrl: string;
}

/** The `SUMMARY` line's payload. */
export interface DevSummary {
  /**
   * Objects by their state at the end of the session, one each, ranked over their deliveries
   * (app/dev/OutcomeTracker.ts): `processed` when an output was written for it in this session
   * (a later duplicate skipped as done does not undo that), `failed` when its last delivery failed
   * on the queue's last receive, `retrying` when its last delivery seen here failed with receives
   * left (another consumer took the retry), `skipped` otherwise.
   */
  processed: number;
  skipped: number;
  failed: number;
  retrying: number;
  /** Deliveries (record outcomes) by their own status: a duplicate counts here, not as an object. */
  deliveries: DeliveryCounts;
  /** Messages in both DLQs (normalize, summarize) at the end (includes earlier sessions' messages). */
  deadLettered: number;
  /** Webhook notifications sent in this session (replays of already-sent ones are not counted). */
  notified: number;
  /** Distinct Idempotency-Keys the local sink applied in this session, and repeats it discarded. */
  sinkApplied: number;
  sinkRepeats: number;
  invocations: number;
  records: number;
  /**
   * False when records reached the handler but it reported no outcome (a handler not built with
   * createSqsBatchHandler; every copy of rerun-pipeline in the process reports to rerun dev, see
   * src/worker/outcomes.ts): processed, skipped and failed then count nothing, and `invocations`
   * and `records` are what is known.
   */
  outcomesSeen: boolean;
  uploaded: number;
  alreadyUploaded: number;
  /**
   * How the session ended: the queue was drained (`--once`), it was interrupted (Ctrl+C; how a
   * continuous session always ends), or `--once` gave up at its drain timeout.
   */
  ended: 'drained' | 'interrupted' | 'drain-timeout';
  durationMs: number;
}

/**
 * Runs the pipeline locally: an emulator (embedded moto unless `endpoint` is given), the provisioned
 * buckets and queues, the handler module under the local runner, optional demo uploads, progress,
 * and a per-object table. Writes `READY {json}` once resources exist and the handler is loaded, and
 * `SUMMARY {json}` at the end.
 *
 * @example
 * const summary = await runDev({ once: true, demo: true, writeResult: (l) => out(l), writeHuman: (t) => err(t) });
 */
export async function runDev(options: RunDevOptions): Promise<DevSummary> {
  const started = Date.now();
  const env = options.env ?? process.env;
  const human = options.writeHuman;
  const logger = options.logger ?? createLogger({ level: 'warn', sink: (line) => human(`${line}\n`) });
  const t = localTopology(options);
  const names = localResourceNames(t);
  const region = options.region ?? 'us-east-1';
  const examplesDir = options.examplesDir ?? DEFAULT_EXAMPLES;
  if (options.demo && !existsSync(examplesDir)) {
    throw new LocalSetupError(`The demo directory ${examplesDir} does not exist: pass --examples DIR, or --no-demo.`);
  }
  const runtime = options.runtime ?? DevRuntime.IN_PROCESS;
  if (runtime === DevRuntime.LAMBDA && (options.handlerPath !== undefined || options.handlerExport !== undefined)) {
    throw new LocalSetupError(
      '--runtime lambda runs the bundles the stack synthesizes; --handler and --handler-export apply to --runtime in-process only.',
    );
  }
  if (runtime === DevRuntime.LAMBDA && !existsSync(WORKER_BUNDLES)) {
    throw new LocalSetupError(
      '--runtime lambda runs the bundles the reference stack (infra/) synthesizes, which only a checkout of the ' +
        'rerun repository has: the npm package runs the workers in this process (--runtime in-process, the default).',
    );
  }
  // Fail before starting anything when the runtime tools are missing (the error names the install script).
  const lambdaTools = runtime === DevRuntime.LAMBDA ? locateLambdaRuntimeTools(PROJECT_ROOT) : undefined;

  let moto: MotoServer | undefined;
  let sink: WebhookSink | undefined;
  let unsubscribe: (() => void) | undefined;
  const pools: LambdaRuntimePool[] = [];
  try {
    let endpoint = options.endpoint;
    if (endpoint === undefined) {
      human('Starting the embedded AWS emulator (moto server)...\n');
      moto = await startMotoServer();
      endpoint = moto.endpoint;
      // The emulator accepts any credentials; set some only for it, never for a real endpoint.
      env.AWS_ACCESS_KEY_ID ||= 'test';
      env.AWS_SECRET_ACCESS_KEY ||= 'test';
    }
    // An endpoint of the user's: a wrong one fails here, in seconds, with what to change.
    if (!moto) await checkEndpoint(endpoint);
    const clients = createAwsClients({ endpoint, region, logger });
    await requireCredentials(clients, endpoint);
    const stack = await provisionLocalStack({ clients, names, topology: t, logger }).catch((error: unknown) => {
      if (moto || !isConnectionError(error)) throw error;
      throw new LocalSetupError(
        `Nothing answers at AWS_ENDPOINT_URL=${endpoint}. Start that emulator, or unset AWS_ENDPOINT_URL ` +
          'to let rerun dev start its embedded one.',
        { cause: error },
      );
    });
    let sent = false;
    const provisioned = (actions: readonly { resource: string; action: ProvisionAction }[]) => {
      for (const { resource, action } of actions) {
        sent ||= action === ProvisionAction.SENT;
        human(`  ${action.padEnd(9)} ${resource}\n`);
      }
    };
    provisioned(stack.actions);
    const ledgerTable = `${t.appName}-${t.ledger.name}`;
    const ledger = await createLedgerTable({ client: clients.dynamodb, tableName: ledgerTable });
    human(`  ${(ledger.created ? 'created' : 'unchanged').padEnd(9)} table ${ledgerTable}\n`);
    // The summary stage: its FIFO queue and DLQ, as in the stack.
    const summaryNames = workerQueueNames(t.appName, t.summarize);
    const summaryStage = await provisionSummaryStage({ clients, names: summaryNames, topology: t });
    provisioned(summaryStage.actions);
    if (sent) human('  (sent: this endpoint does not report it back, so it is sent at every start)\n');
    sink = await startWebhookSink();

    // The handler builds its clients at module scope from these, as in Lambda: set them first.
    env.OUTPUT_BUCKET = stack.outputBucket;
    env.AWS_ENDPOINT_URL = endpoint;
    env.AWS_REGION = region;
    env.LEDGER_TABLE = ledgerTable;
    env.NOTIFY_URL = `${sink.url}/notify`;
    env.CODE_VERSION_PREFIX = t.codeVersionPrefix;
    // The table shows every record's outcome; the handler's own info logs would repeat it line by line.
    env.LOG_LEVEL ||= 'warn';
    const w = t.normalize;
    const s = t.summarize;
    let normalizeFunction: { handler: SqsLambdaHandler } | { invoker: FunctionInvoker };
    let summarizeFunction: { handler: SqsLambdaHandler } | { invoker: FunctionInvoker };
    if (lambdaTools) {
      human("Synthesizing the stack's worker bundles (cdk synth; cached until the sources change)...\n");
      const [normalizePool, summarizePool] = await lambdaPools({
        tools: lambdaTools,
        t,
        region,
        endpoint,
        env,
        human,
        environment: {
          normalize: {
            OUTPUT_BUCKET: stack.outputBucket,
            LEDGER_TABLE: ledgerTable,
            NOTIFY_URL: `${sink.url}/notify`,
          },
          summarize: { OUTPUT_BUCKET: stack.outputBucket, INPUT_BUCKET: stack.inputBucket },
        },
      });
      pools.push(normalizePool, summarizePool);
      normalizeFunction = { invoker: normalizePool };
      summarizeFunction = { invoker: summarizePool };
    } else {
      const handlerPath = options.handlerPath ?? DEFAULT_HANDLER;
      normalizeFunction = { handler: await loadHandler(handlerPath, options.handlerExport ?? 'handler') };
      // The built-in second stage: the same handler factory functions/summarize/handler.ts exports,
      // built here with this session's clients (a handler module reads process.env at import time).
      summarizeFunction = {
        handler: createSummarizeHandler({
          clients,
          outputBucket: stack.outputBucket,
          inputBucket: stack.inputBucket,
          topology: t,
          inputs: referenceInputRules({ inputBucket: stack.inputBucket, topology: t }),
          logger,
        }),
      };
    }

    const ready: DevReady = {
      endpoint,
      region,
      emulator: moto ? 'embedded' : 'external',
      inputBucket: stack.inputBucket,
      inputPrefix: t.inputPrefix,
      outputBucket: stack.outputBucket,
      queueUrl: stack.queueUrl,
      dlqUrl: stack.dlqUrl,
      ledgerTable,
      sinkUrl: sink.url,
    };
    options.writeResult(`READY ${JSON.stringify(ready)}`);

    // Which queue's maxReceiveCount applies to a message, noted by its runner as it receives it: a
    // failure on the last receive is final, one with receives left is retried.
    const receivesOf = new Map<string, number>();
    const tracker = new OutcomeTracker({ maxReceiveCountOf: (id) => receivesOf.get(id) });
    const progress = new ProgressReporter({ write: human, tty: options.tty ?? false });
    const onReceive = (maxReceiveCount: number) => (messageIds: readonly string[]) => {
      for (const id of messageIds) receivesOf.set(id, maxReceiveCount);
    };
    // The live view: each object's outcome on its own line as it happens, named by its object.
    unsubscribe = onRecordOutcome((o) => {
      tracker.add(o);
      const subject = o.source ? `s3://${o.source.bucket}/${o.source.key}` : `message ${o.messageId}`;
      // Named as the table names it: a failure with receives left is retried, not failed.
      progress.note(
        formatOutcomeLine({ status: tracker.deliveryState(o), subject, reason: o.reason }, options.columns),
      );
    });

    let uploaded = 0;
    let alreadyUploaded = 0;
    if (options.demo) {
      const dir = examplesDir;
      const result = await uploadDirectory({
        s3: clients.s3,
        bucket: stack.inputBucket,
        directory: dir,
        prefix: t.inputPrefix,
      });
      uploaded = result.uploaded.length;
      alreadyUploaded = result.alreadyPresent.length;
      progress.note(
        `Demo: uploaded ${uploaded} file(s) from ${dir}/ to s3://${stack.inputBucket}/${t.inputPrefix}` +
          (alreadyUploaded > 0 ? ` (${alreadyUploaded} already there from an earlier run: not re-sent)` : ''),
      );
    }

    const runner = new LocalRunner({
      sqs: clients.sqs,
      queueUrl: stack.queueUrl,
      ...normalizeFunction,
      functionName: `${t.appName}-${w.name}`,
      timeoutSeconds: w.functionTimeoutSeconds,
      batchSize: w.batchSize,
      maxBatchingWindowSeconds: w.maxBatchingWindowSeconds,
      maxConcurrency: w.maxConcurrency,
      memoryLimitInMB: w.memoryMiB,
      region,
      logger,
      onReceive: onReceive(w.maxReceiveCount),
      onInvocation: (report) => progress.invocation(report),
    });
    // The second stage runs beside the first, fed by `rerun backfill` and the local daily schedule.
    const summaryRunner = new LocalRunner({
      sqs: clients.sqs,
      queueUrl: summaryStage.queueUrl,
      ...summarizeFunction,
      functionName: `${t.appName}-${s.name}`,
      timeoutSeconds: s.functionTimeoutSeconds,
      batchSize: s.batchSize,
      maxBatchingWindowSeconds: s.maxBatchingWindowSeconds,
      maxConcurrency: s.maxConcurrency,
      memoryLimitInMB: s.memoryMiB,
      region,
      logger,
      onReceive: onReceive(s.maxReceiveCount),
      onInvocation: (report) => progress.invocation(report),
    });
    const runners = [runner, summaryRunner];

    let ended: DevSummary['ended'] = 'interrupted';
    if (options.once) {
      const timeoutMs = options.drainTimeoutMs ?? ((w.maxReceiveCount + 1) * w.visibilityTimeoutSeconds + 60) * 1000;
      progress.note(`Processing until ${names.queue} is drained (at most ${Math.round(timeoutMs / 1000)} s)...`);
      const drains = await Promise.allSettled(
        runners.map((r) => r.runUntilDrained({ timeoutMs, ...(options.signal ? { signal: options.signal } : {}) })),
      );
      ended = options.signal?.aborted ? 'interrupted' : 'drained';
      for (const drain of drains) {
        if (drain.status === 'fulfilled') continue;
        if (!(drain.reason instanceof RunnerDrainTimeoutError)) throw drain.reason;
        ended = 'drain-timeout';
        progress.note(drain.reason.message);
      }
    } else {
      progress.note(`Watching s3://${stack.inputBucket}/${t.inputPrefix} via ${names.queue}; press Ctrl+C to stop.`);
      for (const r of runners) r.start();
      const stopSchedule = startLocalSchedule({
        sqs: clients.sqs,
        queueUrl: summaryStage.queueUrl,
        time: t.summarySchedule,
        logger,
        onFire: (at) => progress.note(`Daily schedule: summarize the day before ${new Date(at).toISOString()}`),
      });
      // A runner that cannot run (e.g. a refused configuration) ends the session instead of idling.
      await Promise.race([waitForAbort(options.signal), ...runners.map((r) => r.whenStopped())]);
      stopSchedule();
      progress.note('Stopping: waiting for in-flight invocations...');
      await Promise.all(runners.map((r) => r.stop()));
    }
    progress.finish();

    const rows = tracker.rows();
    const outcomesSeen = rows.length > 0 || progress.totals.records === 0;
    human(
      `\n${formatOutcomeTable(rows, {
        recordsDelivered: progress.totals.records,
        ...(options.columns ? { width: options.columns } : {}),
      })}`,
    );
    if (rows.some((r) => r.status === ObjectState.RETRYING)) {
      human(
        'retrying: its last delivery here failed with receives left, so the message went back to the queue and ' +
          'this session did not see it again (another consumer took it, or it returns after the visibility timeout); ' +
          "or the function's time ran short and its remaining S3 records were requeued as a new message.\n",
      );
    }
    let deadLettered = 0;
    for (const [dlqUrl, dlqName] of [
      [stack.dlqUrl, names.dlq],
      [summaryStage.dlqUrl, summaryNames.dlq],
    ] as const) {
      const count = await approximateMessages(clients.sqs, dlqUrl);
      deadLettered += count;
      if (count > 0) {
        human(
          `${count} message(s) in the DLQ ${dlqName}: rerun redrive --dry-run shows why; fix the cause, then redrive.\n`,
        );
      }
    }
    const summary: DevSummary = {
      ...tracker.counts(),
      deliveries: tracker.deliveries(),
      deadLettered,
      notified: tracker.effectsExecuted,
      sinkApplied: sink.deliveries().filter((d) => d.applied).length,
      sinkRepeats: sink.deliveries().reduce((sum, d) => sum + d.repeats, 0),
      invocations: progress.totals.invocations,
      records: progress.totals.records,
      outcomesSeen,
      uploaded,
      alreadyUploaded,
      ended,
      durationMs: Date.now() - started,
    };
    human(lookAtOutputs(stack.outputBucket, t, ready.endpoint, moto !== undefined, options.handlerPath !== undefined));
    options.writeResult(`SUMMARY ${JSON.stringify(summary)}`);
    return summary;
  } finally {
    unsubscribe?.();
    // Every emulator and runtime process of the lambda runtime ends with the session.
    await Promise.all(pools.map((pool) => pool.close()));
    await sink?.stop();
    await moto?.stop();
  }
}

/**
 * One {@link LambdaRuntimePool} per worker, running the bundle the stack synthesizes with the
 * function settings of the session's topology. Record outcomes are read back from each function's
 * log lines (the handler logs every outcome at info level) and emitted to this process's listeners.
 */
async function lambdaPools(input: {
  tools: LambdaRuntimeTools;
  t: Topology;
  region: string;
  endpoint: string;
  env: NodeJS.ProcessEnv;
  human: (text: string) => void;
  environment: { normalize: Record<string, string>; summarize: Record<string, string> };
}): Promise<[LambdaRuntimePool, LambdaRuntimePool]> {
  // The application wing (the stack) is loaded only in this mode: synthesis needs aws-cdk-lib.
  const { lambdaFunctionSettings, synthesizeWorkerBundles } = await import('../../infra/workerBundles.js');
  const bundles = await synthesizeWorkerBundles();
  const showAll = ['debug', 'info'].includes(input.env.LOG_LEVEL ?? '');
  const onOutput = (line: string) => {
    const outcome = parseRecordOutcomeLogLine(line);
    if (outcome) emitRecordOutcome(outcome);
    // The function's JSON lines; the emulator's own lines (START/END/REPORT, rapid) only with LOG_LEVEL=info.
    else if (showAll || /"level":"(warn|error|WARN|ERROR)"/.test(line)) input.human(`${line}\n`);
  };
  const credentials = {
    accessKeyId: input.env.AWS_ACCESS_KEY_ID ?? '',
    secretAccessKey: input.env.AWS_SECRET_ACCESS_KEY ?? '',
    ...(input.env.AWS_SESSION_TOKEN ? { sessionToken: input.env.AWS_SESSION_TOKEN } : {}),
  };
  const pool = (worker: 'normalize' | 'summarize') =>
    new LambdaRuntimePool({
      tools: input.tools,
      function: lambdaFunctionSettings(bundles[worker], {
        functionName: `${input.t.appName}-${worker}`,
        timeoutSeconds: input.t[worker].functionTimeoutSeconds,
        memoryMiB: input.t[worker].memoryMiB,
        environment: {
          ...input.environment[worker],
          AWS_ENDPOINT_URL: input.endpoint,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        region: input.region,
        credentials,
      }),
      onOutput,
    });
  return [pool('normalize'), pool('summarize')];
}

/** The topology with the session's overrides applied; refuses names S3 or SQS would reject. */
function localTopology(options: RunDevOptions): Topology {
  const appName = options.appName ?? defaultTopology.appName;
  // `<appName>-output` must be a valid bucket name (3-63 chars, lower case, digits, hyphens).
  if (!/^[a-z0-9][a-z0-9-]{0,45}[a-z0-9]$/.test(appName)) {
    throw new LocalSetupError(
      `Invalid app name "${appName}": use 2-47 lower-case letters, digits or hyphens (it prefixes bucket names).`,
    );
  }
  const w = defaultTopology.normalize;
  const normalize = {
    ...w,
    ...(options.visibilityTimeoutSeconds !== undefined
      ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }
      : {}),
    ...(options.maxReceiveCount !== undefined ? { maxReceiveCount: options.maxReceiveCount } : {}),
    ...(options.functionTimeoutSeconds !== undefined ? { functionTimeoutSeconds: options.functionTimeoutSeconds } : {}),
  };
  if (normalize.functionTimeoutSeconds > normalize.visibilityTimeoutSeconds) {
    // Lambda refuses a mapping whose function timeout exceeds the queue's visibility timeout.
    throw new LocalSetupError(
      `The function timeout (${normalize.functionTimeoutSeconds} s) exceeds the visibility timeout ` +
        `(${normalize.visibilityTimeoutSeconds} s), which Lambda refuses: pass --function-timeout ` +
        `${normalize.visibilityTimeoutSeconds} or less, or a longer --visibility-timeout.`,
    );
  }
  return { ...defaultTopology, appName, normalize };
}

async function approximateMessages(sqs: ReturnType<typeof createAwsClients>['sqs'], queueUrl: string): Promise<number> {
  const response = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(response.Attributes?.ApproximateNumberOfMessages ?? 0);
}

function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: string }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET') return true;
  }
  return false;
}

async function waitForAbort(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) {
    // No way to stop: run until the process is killed.
    for (;;) await sleep(60_000);
  }
  if (signal.aborted) return;
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Resolves the client's credentials once, so that having none is said at once, with the fix. */
async function requireCredentials(clients: AwsClients, endpoint: string): Promise<void> {
  try {
    await clients.s3.config.credentials();
  } catch (error) {
    throw new LocalSetupError(
      `No AWS credentials to talk to ${endpoint}. An emulator accepts any: ` +
        'export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test (rerun dev sets them only for its embedded emulator).',
      { cause: error },
    );
  }
}

/**
 * The closing lines: how to look at the outputs and the quarantine, with `rerun ls` / `rerun cat`
 * for the endpoint in use. They are printed while the emulator is still up; an embedded one stops
 * when rerun dev exits, which the text says (keep rerun dev running, or use AWS_ENDPOINT_URL).
 * A worker of the user's (`ownHandler`) writes under prefixes of its own: the whole bucket is listed.
 *
 * @example
 * lookAtOutputs('rerun-output', topology, 'http://127.0.0.1:4000', true);
 */
export function lookAtOutputs(
  outputBucket: string,
  t: Pick<Topology, 'outputPrefix' | 'quarantinePrefix'>,
  endpoint: string,
  embedded: boolean,
  ownHandler = false,
): string {
  const env = `AWS_ENDPOINT_URL=${endpoint}`;
  const lines = ownHandler
    ? [`Outputs:    ${env} npx rerun ls s3://${outputBucket}/`]
    : [
        `Outputs:    ${env} npx rerun ls s3://${outputBucket}/${t.outputPrefix}`,
        `Quarantine: ${env} npx rerun ls s3://${outputBucket}/${t.quarantinePrefix}`,
      ];
  lines.push(`One object: ${env} npx rerun cat s3://${outputBucket}/<key from ls>`);
  if (embedded) {
    lines.push('(the embedded emulator stops when rerun dev exits: run these while it runs, without --once)');
  }
  return `${lines.join('\n')}\n`;
}
