import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalSetupError } from '../../local/errors.js';
import type { LocalRunner } from '../../local/runner/LocalRunner.js';
import { locateLambdaRuntimeTools } from '../../local/runner/lambdaRuntimeTools.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { onRecordOutcome } from '../../src/worker/outcomes.js';
import { publishDevSession } from '../common/devSessionFile.js';
import type { DevReady, DevSummary } from './devResults.js';
import { type DevSession, openDevSession, uploadDemo } from './devSession.js';
import {
  createStageRunners,
  createWindowStageRunners,
  loadStageFunctions,
  runStages,
  type StageFunctions,
} from './devStages.js';
import { DevView, lookAtOutputs, whileRunningHints } from './devView.js';
import {
  type DevWindowStage,
  loadDevPipeline,
  loadWindowHandlers,
  provisionWindowStages,
  type StageHandlerSource,
  windowStagesOf,
} from './devWindowStages.js';
import { localTopology } from './localTopology.js';
import type { StackWorkerSynthesizer } from './StackWorkerSynthesizer.js';

export type { DevReady, DevSummary } from './devResults.js';

/**
 * The project root (app/dev/ is two folders down): the repository, where scripts/install-lambda-runtime.sh
 * puts .tools/, or the installed package's dist/. The default examples are found from it.
 */
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The samples `--demo` uploads. */
const DEFAULT_EXAMPLES = join(PROJECT_ROOT, 'examples');

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
   * The user's pipeline (`--pipeline FILE`): a module exporting its `definePipeline(...)` value as
   * `pipeline`, or its description as JSON. Each window stage gets its FIFO queue and DLQ, runs the
   * handler `stageHandlers` names for it, and has its schedule fired locally; the session file records
   * the description and the queues for the other commands.
   * @default undefined: rerun's own pipeline (the worker and the built-in daily summary)
   */
  pipelinePath?: string;
  /** The handler module of each window stage of `pipelinePath`, by stage name. @default {} */
  stageHandlers?: Readonly<Record<string, StageHandlerSource>>;
  /**
   * Where the workers run. `lambda` runs the stack's own bundles (no `handlerPath`) and needs the
   * tools of scripts/install-lambda-runtime.sh.
   * @default 'in-process'
   */
  runtime?: DevRuntime;
  /**
   * The stack's bundles, which `runtime: 'lambda'` runs: the CLI passes the reference stack's
   * (infra/workerBundles.ts) in a checkout, found by app/cli/locateStackWorkers.ts.
   * @default undefined: `lambda` then fails, saying it needs a checkout of the repository
   */
  synthesizeStackWorkers?: StackWorkerSynthesizer | undefined;
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
  const topology = localTopology(options);
  const examplesDir = options.examplesDir ?? DEFAULT_EXAMPLES;
  // Fail before starting anything when the runtime tools are missing (the error names the install script).
  const lambdaTools = refuseUnrunnable(options, examplesDir) ? locateLambdaRuntimeTools(PROJECT_ROOT) : undefined;
  // The user's pipeline is read (and refused by field) before anything starts.
  const description = options.pipelinePath !== undefined ? await loadDevPipeline(options.pipelinePath) : undefined;
  const windowDefs = description ? windowStagesOf(description, topology, options) : [];

  const session = await openDevSession({
    endpoint: options.endpoint,
    region: options.region ?? 'us-east-1',
    topology,
    env,
    logger,
    human,
  });
  let functions: StageFunctions | undefined;
  let unsubscribe: (() => void) | undefined;
  let published: { close(): void } | undefined;
  try {
    functions = await loadStageFunctions({ ...options, session, lambdaTools, env, human, logger });
    const windowStages: DevWindowStage[] = await provisionWindowStages({
      clients: session.clients,
      topology,
      stages: windowDefs,
      provisioned: (actions) => {
        for (const { resource, action } of actions) human(`  ${action.padEnd(9)} ${resource}\n`);
      },
    });
    // After the session set the worker's environment (OUTPUT_BUCKET...), which the modules read at import.
    const windowHandlers = await loadWindowHandlers(windowStages, options.stageHandlers ?? {});
    const ready = readyOf(session);
    // For every command of the user on this machine: where this session is, and its outcomes as they
    // happen (app/common/devSessionFile.ts). Before READY, so a script that waits for READY finds it.
    published = publishDevSession({
      ...ready,
      appName: topology.appName,
      summaryQueueUrl: session.summaryStage.queueUrl,
      summaryDlqUrl: session.summaryStage.dlqUrl,
      ...(description
        ? {
            pipeline: description,
            windowStages: Object.fromEntries(
              windowStages.map((s) => [s.name, { queueUrl: s.queueUrl, dlqUrl: s.dlqUrl }]),
            ),
          }
        : {}),
    });
    options.writeResult(`READY ${JSON.stringify(ready)}`);
    const outputs = {
      outputBucket: session.stack.outputBucket,
      topology,
      ownHandler: options.handlerPath !== undefined,
      windowStages: windowStages.map((s) => s.name),
    };
    // Now, while they work: at exit, the embedded emulator is about to stop.
    human(whileRunningHints(outputs));
    const view = new DevView({ human, tty: options.tty, columns: options.columns });
    // The live view: each object's outcome on its own line as it happens, named by its object.
    unsubscribe = onRecordOutcome((o) => view.outcome(o));

    const demo = options.demo ? await uploadDemo(session, examplesDir) : { uploaded: 0, alreadyUploaded: 0 };
    if (options.demo) {
      const { uploaded, alreadyUploaded } = demo;
      view.note(
        `Demo: uploaded ${uploaded} file(s) from ${examplesDir}/ to s3://${session.stack.inputBucket}/${topology.inputPrefix}` +
          (alreadyUploaded > 0 ? ` (${alreadyUploaded} already there from an earlier run: not re-sent)` : ''),
      );
    }
    const runners = createStageRunners({
      session,
      functions,
      logger,
      onReceive: (maxReceiveCount) => view.onReceive(maxReceiveCount),
      onInvocation: (report) => view.invocation(report),
    });
    const windowRunners = createWindowStageRunners({
      session,
      stages: windowStages,
      handlers: windowHandlers,
      logger,
      onReceive: (maxReceiveCount) => view.onReceive(maxReceiveCount),
      onInvocation: (report) => view.invocation(report),
    });
    const ended = await runStages({
      ...options,
      once: options.once ?? false,
      session,
      runners,
      windowStages: windowStages.map((stage, i) => ({ stage, runner: windowRunners[i] as LocalRunner })),
      logger,
      note: (t) => view.note(t),
    });

    const closed = await view.close(session, windowStages);
    const summary: DevSummary = { ...closed, ...demo, ended, durationMs: Date.now() - started };
    human(lookAtOutputs(outputs, session.endpoint, session.embedded));
    options.writeResult(`SUMMARY ${JSON.stringify(summary)}`);
    return summary;
  } finally {
    unsubscribe?.();
    published?.close();
    await functions?.close();
    await session.close();
  }
}

/**
 * Refuses what cannot run before anything starts: a missing demo directory, the handler flags with
 * `--runtime lambda`, and `lambda` without the stack's bundles. True when the session runs `lambda`.
 */
function refuseUnrunnable(options: RunDevOptions, examplesDir: string): boolean {
  if (options.demo && !existsSync(examplesDir)) {
    throw new LocalSetupError(`The demo directory ${examplesDir} does not exist: pass --examples DIR, or --no-demo.`);
  }
  if (options.pipelinePath === undefined && Object.keys(options.stageHandlers ?? {}).length > 0) {
    throw new LocalSetupError(
      '--stage-handler names a window stage of a pipeline: pass the pipeline with --pipeline FILE.',
    );
  }
  if ((options.runtime ?? DevRuntime.IN_PROCESS) !== DevRuntime.LAMBDA) return false;
  if (options.pipelinePath !== undefined) {
    throw new LocalSetupError(
      "--runtime lambda runs the reference stack's bundles; a pipeline of your own (--pipeline) runs in this process " +
        '(--runtime in-process, the default).',
    );
  }
  if (options.handlerPath !== undefined || options.handlerExport !== undefined) {
    throw new LocalSetupError(
      '--runtime lambda runs the bundles the stack synthesizes; --handler and --handler-export apply to --runtime in-process only.',
    );
  }
  if (options.synthesizeStackWorkers === undefined) {
    throw new LocalSetupError(
      '--runtime lambda runs the bundles the reference stack (infra/) synthesizes, which only a checkout of the ' +
        'rerun repository has: the npm package runs the workers in this process (--runtime in-process, the default).',
    );
  }
  return true;
}

/** The `READY` line's payload: where the session's resources are. */
function readyOf(session: DevSession): DevReady {
  return {
    endpoint: session.endpoint,
    region: session.region,
    emulator: session.embedded ? 'embedded' : 'external',
    inputBucket: session.stack.inputBucket,
    inputPrefix: session.topology.inputPrefix,
    outputBucket: session.stack.outputBucket,
    queueUrl: session.stack.queueUrl,
    dlqUrl: session.stack.dlqUrl,
    ledgerTable: session.ledgerTable,
    sinkUrl: session.sink.url,
  };
}
