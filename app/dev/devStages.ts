import { extname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { RunnerDrainTimeoutError } from '../../local/runner/errors.js';
import type { FunctionInvoker } from '../../local/runner/FunctionInvoker.js';
import type { InvocationReport } from '../../local/runner/invocationReport.js';
import { LambdaRuntimePool } from '../../local/runner/LambdaRuntimePool.js';
import { LocalRunner, type SqsLambdaHandler } from '../../local/runner/LocalRunner.js';
import type { LambdaRuntimeTools } from '../../local/runner/lambdaRuntimeTools.js';
import { loadHandler } from '../../local/runner/loadHandler.js';
import { parseRecordOutcomeLogLine } from '../../src/batch/recordOutcomeLog.js';
import type { Logger } from '../../src/logging/logger.js';
import { emitRecordOutcome } from '../../src/worker/outcomes.js';
import { createSummarizeHandler } from '../partition/createSummarizeHandler.js';
import { startLocalSchedule } from '../partition/localSchedule.js';
import { referenceInputRules } from '../partition/referenceInputRules.js';
import type { DevSession } from './devSession.js';
import { type DevWindowStage, sendScheduledWindow, startWindowSchedules } from './devWindowStages.js';
import type { StackWorker, StackWorkerSynthesizer } from './StackWorkerSynthesizer.js';

/** `.ts` when this runs from the sources (a checkout, under tsx), `.js` when compiled (the package). */
const MODULE_EXTENSION = extname(fileURLToPath(import.meta.url));
/** The deployed normalize worker, the handler `rerun dev` runs unless told otherwise (app/dev/ is two folders down). */
const DEFAULT_HANDLER = fileURLToPath(new URL(`../../functions/normalize/handler${MODULE_EXTENSION}`, import.meta.url));

/** One stage's function: a handler in this process, or an invoker running it elsewhere. */
export type StageFunction = { handler: SqsLambdaHandler } | { invoker: FunctionInvoker };

/** The functions of the two stages (normalize, summarize), and what runs them. */
export interface StageFunctions {
  readonly normalize: StageFunction;
  readonly summarize: StageFunction;
  /** Ends every runtime process of the lambda runtime (nothing to end in process). */
  close(): Promise<void>;
}

/** Options of {@link loadStageFunctions}. */
export interface LoadStageFunctionsOptions {
  session: DevSession;
  /** The runtime tools when the stages run the stack's bundles (`--runtime lambda`). */
  lambdaTools?: LambdaRuntimeTools | undefined;
  /** The stack's bundles, with `lambdaTools`. */
  synthesizeStackWorkers?: StackWorkerSynthesizer | undefined;
  /** @default functions/normalize/handler.ts of rerun itself */
  handlerPath?: string | undefined;
  /** @default 'handler' */
  handlerExport?: string | undefined;
  env: NodeJS.ProcessEnv;
  human: (text: string) => void;
  logger: Logger;
}

/**
 * Loads the stages' functions: the handler module (or the user's) and the built-in summarize
 * handler in this process, or, with `lambdaTools`, the stack's synthesized bundles, each in a pool
 * of Lambda runtime slots.
 *
 * @example
 * const functions = await loadStageFunctions({ session, env: process.env, human, logger });
 * try { ... } finally { await functions.close(); }
 */
export async function loadStageFunctions(options: LoadStageFunctionsOptions): Promise<StageFunctions> {
  const { session, lambdaTools, synthesizeStackWorkers } = options;
  if (lambdaTools && synthesizeStackWorkers) {
    options.human("Synthesizing the stack's worker bundles (cdk synth; cached until the sources change)...\n");
    const pools = await lambdaPools({ ...options, tools: lambdaTools, synthesize: synthesizeStackWorkers });
    return {
      normalize: { invoker: pools.normalize },
      summarize: { invoker: pools.summarize },
      // Every emulator and runtime process of the lambda runtime ends with the session.
      close: async () => {
        await Promise.all([pools.normalize.close(), pools.summarize.close()]);
      },
    };
  }
  const t = session.topology;
  const handlerPath = options.handlerPath ?? DEFAULT_HANDLER;
  const normalize = { handler: await loadHandler(handlerPath, options.handlerExport ?? 'handler') };
  // The built-in second stage: the same handler factory functions/summarize/handler.ts exports,
  // built here with this session's clients (a handler module reads process.env at import time).
  const summarize = {
    handler: createSummarizeHandler({
      clients: session.clients,
      outputBucket: session.stack.outputBucket,
      inputBucket: session.stack.inputBucket,
      topology: t,
      inputs: referenceInputRules({ inputBucket: session.stack.inputBucket, topology: t }),
      logger: options.logger,
    }),
  };
  return { normalize, summarize, close: async () => {} };
}

/**
 * One {@link LambdaRuntimePool} per worker, running the bundle the stack synthesizes with the
 * function settings of the session's topology. Record outcomes are read back from each function's
 * log lines (the handler logs every outcome at info level) and emitted to this process's listeners.
 */
async function lambdaPools(input: {
  session: DevSession;
  tools: LambdaRuntimeTools;
  synthesize: StackWorkerSynthesizer;
  env: NodeJS.ProcessEnv;
  human: (text: string) => void;
}): Promise<Record<StackWorker, LambdaRuntimePool>> {
  const { session, env } = input;
  const t = session.topology;
  const settingsOf = await input.synthesize();
  const showAll = ['debug', 'info'].includes(env.LOG_LEVEL ?? '');
  const onOutput = (line: string) => {
    const outcome = parseRecordOutcomeLogLine(line);
    if (outcome) emitRecordOutcome(outcome);
    // The function's JSON lines; the emulator's own lines (START/END/REPORT, rapid) only with LOG_LEVEL=info.
    else if (showAll || /"level":"(warn|error|WARN|ERROR)"/.test(line)) input.human(`${line}\n`);
  };
  const credentials = {
    accessKeyId: env.AWS_ACCESS_KEY_ID ?? '',
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '',
    ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
  };
  const environment: Record<StackWorker, Record<string, string>> = {
    normalize: {
      OUTPUT_BUCKET: session.stack.outputBucket,
      INPUT_BUCKETS: session.stack.inputBucket,
      LEDGER_TABLE: session.ledgerTable,
      NOTIFY_URL: `${session.sink.url}/notify`,
    },
    summarize: { OUTPUT_BUCKET: session.stack.outputBucket, INPUT_BUCKET: session.stack.inputBucket },
  };
  const pool = (worker: StackWorker) =>
    new LambdaRuntimePool({
      tools: input.tools,
      function: settingsOf(worker, {
        functionName: `${t.appName}-${worker}`,
        timeoutSeconds: t[worker].functionTimeoutSeconds,
        memoryMiB: t[worker].memoryMiB,
        environment: {
          ...environment[worker],
          AWS_ENDPOINT_URL: session.endpoint,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        region: session.region,
        credentials,
      }),
      onOutput,
    });
  return { normalize: pool('normalize'), summarize: pool('summarize') };
}

/** Options of {@link createStageRunners}. */
export interface StageRunnersOptions {
  session: DevSession;
  functions: StageFunctions;
  logger: Logger;
  /** Called with a stage's maxReceiveCount: returns the listener of its runner's receives. */
  onReceive: (maxReceiveCount: number) => (messageIds: readonly string[]) => void;
  onInvocation: (report: InvocationReport) => void;
}

/**
 * A {@link LocalRunner} per stage, with the function and event source mapping settings of the
 * session's topology: normalize on the work queue, summarize beside it on the summary queue (fed by
 * `rerun backfill` and the local daily schedule).
 *
 * @example
 * const runners = createStageRunners({ session, functions, logger, onReceive, onInvocation });
 */
export function createStageRunners(options: StageRunnersOptions): LocalRunner[] {
  const { session, functions } = options;
  const t = session.topology;
  const runner = (worker: StackWorker, queueUrl: string) => {
    const w = t[worker];
    return new LocalRunner({
      sqs: session.clients.sqs,
      queueUrl,
      ...functions[worker],
      functionName: `${t.appName}-${w.name}`,
      timeoutSeconds: w.functionTimeoutSeconds,
      batchSize: w.batchSize,
      maxBatchingWindowSeconds: w.maxBatchingWindowSeconds,
      maxConcurrency: w.maxConcurrency,
      memoryLimitInMB: w.memoryMiB,
      region: session.region,
      logger: options.logger,
      onReceive: options.onReceive(w.maxReceiveCount),
      onInvocation: options.onInvocation,
    });
  };
  return [runner('normalize', session.stack.queueUrl), runner('summarize', session.summaryStage.queueUrl)];
}

/**
 * A {@link LocalRunner} per window stage of the user's pipeline, on its FIFO queue, with its handler
 * in this process and the stage's settings (RerunWindowStage's, with the session's overrides).
 *
 * @example
 * const windowRunners = createWindowStageRunners({ session, stages, handlers, logger, onReceive, onInvocation });
 */
export function createWindowStageRunners(
  options: Omit<StageRunnersOptions, 'functions'> & {
    stages: readonly DevWindowStage[];
    handlers: ReadonlyMap<string, SqsLambdaHandler>;
  },
): LocalRunner[] {
  const { session } = options;
  return options.stages.map((s) => {
    const w = s.worker;
    return new LocalRunner({
      sqs: session.clients.sqs,
      queueUrl: s.queueUrl,
      handler: options.handlers.get(s.name) as SqsLambdaHandler,
      functionName: `${session.topology.appName}-${w.name}`,
      timeoutSeconds: w.functionTimeoutSeconds,
      batchSize: w.batchSize,
      maxBatchingWindowSeconds: w.maxBatchingWindowSeconds,
      maxConcurrency: w.maxConcurrency,
      memoryLimitInMB: w.memoryMiB,
      region: session.region,
      logger: options.logger,
      onReceive: options.onReceive(w.maxReceiveCount),
      onInvocation: options.onInvocation,
    });
  });
}

/** Options of {@link runStages}. */
export interface RunStagesOptions {
  session: DevSession;
  runners: readonly LocalRunner[];
  /**
   * The window stages of the user's pipeline, in the order they run, each with its runner.
   * @default none (rerun's own pipeline)
   */
  windowStages?: readonly { readonly stage: DevWindowStage; readonly runner: LocalRunner }[];
  /** Run until the queues are drained; otherwise until `signal` aborts. */
  once: boolean;
  /** @default (maxReceiveCount + 1) x visibility timeout + 60 s of the normalize stage */
  drainTimeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  logger: Logger;
  /** Says what the session does now (a line of the live view). */
  note: (text: string) => void;
}

/**
 * Runs the stages: until both queues are drained (`once`), or, watching, with the local daily
 * schedule, until `signal` aborts or a runner cannot run; then waits for in-flight invocations.
 * Returns how the session ended.
 *
 * @example
 * const ended = await runStages({ session, runners, once: true, logger, note: (t) => progress.note(t) });
 */
export async function runStages(options: RunStagesOptions): Promise<'drained' | 'interrupted' | 'drain-timeout'> {
  const { session, runners, signal, note } = options;
  const t = session.topology;
  const w = t.normalize;
  const windowStages = options.windowStages ?? [];
  const timeoutMs = options.drainTimeoutMs ?? ((w.maxReceiveCount + 1) * w.visibilityTimeoutSeconds + 60) * 1000;
  // Set by settle(), also from inside catchUp: an object, so the type checker does not pin it.
  const drainState = { timedOut: false };
  const settle = (drains: PromiseSettledResult<void>[]) => {
    for (const drain of drains) {
      if (drain.status === 'fulfilled') continue;
      if (!(drain.reason instanceof RunnerDrainTimeoutError)) throw drain.reason;
      drainState.timedOut = true;
      note(drain.reason.message);
    }
  };
  const drain = (r: LocalRunner) => r.runUntilDrained({ timeoutMs, ...(signal ? { signal } : {}) });
  // The window stages of a user's pipeline build what is there at start, in order: the object stage
  // first (its outputs are their inputs), then each stage's last closed window, as its schedule
  // would have sent it (docs/DEV.md, "Your own pipeline").
  const catchUp = async () => {
    if (windowStages.length === 0) return;
    const [objectRunner] = runners;
    if (objectRunner) settle(await Promise.allSettled([drain(objectRunner)]));
    for (const { stage, runner } of windowStages) {
      if (signal?.aborted) return;
      await sendScheduledWindow(session.clients.sqs, stage, Date.now(), note);
      settle(await Promise.allSettled([drain(runner)]));
    }
  };
  if (options.once) {
    note(`Processing until ${session.names.queue} is drained (at most ${Math.round(timeoutMs / 1000)} s)...`);
    const rest = windowStages.length === 0 ? runners : runners.slice(1);
    settle(await Promise.allSettled([catchUp(), ...rest.map(drain)]));
    return drainState.timedOut ? 'drain-timeout' : signal?.aborted ? 'interrupted' : 'drained';
  }
  if (windowStages.length > 0) {
    note(`Building what is there: ${session.names.queue}, then ${windowStages.map((s) => s.stage.name).join(', ')}...`);
    // The built-in summary stage keeps running meanwhile, as it does without a pipeline.
    runners[1]?.start();
    await catchUp();
  }
  note(`Watching s3://${session.stack.inputBucket}/${t.inputPrefix} via ${session.names.queue}; press Ctrl+C to stop.`);
  const all = [...runners, ...windowStages.map((s) => s.runner)];
  for (const r of all) r.start();
  const stopSchedule = startLocalSchedule({
    sqs: session.clients.sqs,
    queueUrl: session.summaryStage.queueUrl,
    time: t.summarySchedule,
    logger: options.logger,
    onFire: (at) => note(`Daily schedule: summarize the day before ${new Date(at).toISOString()}`),
  });
  const stopWindowSchedules = startWindowSchedules({
    sqs: session.clients.sqs,
    stages: windowStages.map((s) => s.stage),
    logger: options.logger,
    note,
  });
  // A runner that cannot run (e.g. a refused configuration) ends the session instead of idling.
  await Promise.race([waitForAbort(signal), ...all.map((r) => r.whenStopped())]);
  stopSchedule();
  stopWindowSchedules();
  note('Stopping: waiting for in-flight invocations...');
  await Promise.all(all.map((r) => r.stop()));
  return 'interrupted';
}

async function waitForAbort(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) {
    // No way to stop: run until the process is killed.
    for (;;) await sleep(60_000);
  }
  if (signal.aborted) return;
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
