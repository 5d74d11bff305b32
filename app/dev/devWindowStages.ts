import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { LocalSetupError } from '../../local/errors.js';
import type { ProvisionAction } from '../../local/provision.js';
import type { SqsLambdaHandler } from '../../local/runner/LocalRunner.js';
import { loadHandler } from '../../local/runner/loadHandler.js';
import type { AwsClients } from '../../src/aws/clients.js';
import { type Logger, silentLogger } from '../../src/logging/logger.js';
import { partitionScheme, type TimePartitionScheme } from '../../src/partitions/partitionScheme.js';
import { PipelineDescriptionError } from '../../src/pipeline/PipelineDescriptionError.js';
import { parsePipelineDescription } from '../../src/pipeline/parsePipelineDescription.js';
import {
  describePipeline,
  type PipelineDefinition,
  type PipelineDescription,
  type WindowStage,
} from '../../src/pipeline/pipelineDescription.js';
import type { WorkerTopology } from '../../src/topology/WorkerTopology.js';
import { WINDOW_STAGE_DEFAULT_SETTINGS } from '../../src/topology/windowStageSettings.js';
import { scheduledWindowTaskBody } from '../../src/window/windowTaskMessage.js';
import { provisionSummaryStage } from '../partition/provisionSummaryStage.js';
import { type Topology, workerQueueNames } from '../topology.js';

/** A window stage of the user's pipeline as `rerun dev` runs it: its worker settings, queues and handler. */
export interface DevWindowStage {
  readonly name: string;
  readonly stage: WindowStage;
  /** The settings its local runner and queues use (RerunWindowStage's defaults, with the session's overrides). */
  readonly worker: WorkerTopology;
  readonly names: { readonly queue: string; readonly dlq: string };
  readonly queueUrl: string;
  readonly dlqUrl: string;
}

/** Where a window stage's handler is: a module and its export (`--stage-handler STAGE=PATH[#EXPORT]`). */
export interface StageHandlerSource {
  readonly path: string;
  /** @default 'handler' */
  readonly export?: string;
}

/**
 * Reads the user's pipeline for `rerun dev --pipeline FILE`: a `.json` file holds the description
 * (as `rerun status --pipeline` reads it); any other file is a module (`.mjs`, `.js`, `.ts` under
 * tsx) whose `pipeline` export (or default export) is a `definePipeline` value, the same module the
 * worker and the CDK app import. Checked as every tool checks a description: a field that does not
 * parse is refused by name.
 *
 * @example
 * const description = await loadDevPipeline('./pipeline.mjs');
 * Object.keys(description.stages); // ['upper', 'daily']
 */
export async function loadDevPipeline(file: string): Promise<PipelineDescription> {
  const absolute = resolve(file);
  let raw: unknown;
  if (extname(absolute) === '.json') {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(absolute, 'utf8').catch((error: unknown) => {
      throw new LocalSetupError(`--pipeline ${file} cannot be read (${(error as Error).message}).`, { cause: error });
    });
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new LocalSetupError(`--pipeline ${file} is not JSON (${(error as Error).message}).`, { cause: error });
    }
  } else {
    let module: Record<string, unknown>;
    try {
      module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
    } catch (error) {
      throw new LocalSetupError(`--pipeline ${file} cannot be imported (${(error as Error).message}).`, {
        cause: error,
      });
    }
    raw = module.pipeline ?? module.default;
    if (raw === null || typeof raw !== 'object' || !('stages' in raw)) {
      throw new LocalSetupError(
        `--pipeline ${file} exports no pipeline: export the definePipeline(...) value as "pipeline" (or default).`,
      );
    }
    raw = describePipeline(raw as PipelineDefinition);
  }
  try {
    return parsePipelineDescription(raw);
  } catch (error) {
    if (error instanceof PipelineDescriptionError) {
      throw new LocalSetupError(`--pipeline ${file}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/**
 * The pipeline's window stages in the order they run (a stage after the stage it reads), each with
 * the settings RerunWindowStage deploys it with, and the session's `--visibility-timeout`,
 * `--max-receive-count` and `--function-timeout` when given (the same overrides as the object stage).
 * Refuses a pipeline whose object stage reads another prefix than the session's input prefix (the
 * bucket notification rerun dev sets). Pure.
 *
 * @example
 * windowStagesOf(description, topology, {}).map((s) => s.name); // ['daily']
 */
export function windowStagesOf(
  description: PipelineDescription,
  topology: Topology,
  overrides: { visibilityTimeoutSeconds?: number; maxReceiveCount?: number; functionTimeoutSeconds?: number },
): { name: string; stage: WindowStage; worker: WorkerTopology }[] {
  for (const [name, stage] of Object.entries(description.stages)) {
    if (stage.kind === 'object' && 'prefix' in stage.input && stage.input.prefix !== topology.inputPrefix) {
      throw new LocalSetupError(
        `Stage "${name}" of the pipeline reads the input prefix "${stage.input.prefix}", but rerun dev sends the ` +
          `events of "${topology.inputPrefix}" to the worker: describe the stage over "${topology.inputPrefix}".`,
      );
    }
  }
  const ordered: string[] = [];
  const visit = (name: string, seen: Set<string>) => {
    const stage = description.stages[name];
    if (!stage || ordered.includes(name) || seen.has(name)) return;
    seen.add(name);
    if ('stage' in stage.input) visit(stage.input.stage, seen);
    ordered.push(name);
  };
  for (const name of Object.keys(description.stages)) visit(name, new Set());
  return ordered.flatMap((name) => {
    const stage = description.stages[name];
    if (stage?.kind !== 'window') return [];
    const worker: WorkerTopology = {
      name,
      ...WINDOW_STAGE_DEFAULT_SETTINGS,
      ...(overrides.visibilityTimeoutSeconds !== undefined
        ? { visibilityTimeoutSeconds: overrides.visibilityTimeoutSeconds }
        : {}),
      ...(overrides.maxReceiveCount !== undefined ? { maxReceiveCount: overrides.maxReceiveCount } : {}),
      ...(overrides.functionTimeoutSeconds !== undefined
        ? { functionTimeoutSeconds: overrides.functionTimeoutSeconds }
        : {}),
    };
    if (worker.functionTimeoutSeconds > worker.visibilityTimeoutSeconds) {
      // Lambda refuses a mapping whose function timeout exceeds the queue's visibility timeout.
      throw new LocalSetupError(
        `Window stage "${name}": the function timeout (${worker.functionTimeoutSeconds} s) exceeds the visibility ` +
          `timeout (${worker.visibilityTimeoutSeconds} s), which Lambda refuses: pass --function-timeout ` +
          `${worker.visibilityTimeoutSeconds} or less.`,
      );
    }
    return [{ name, stage, worker }];
  });
}

/**
 * Idempotently creates each window stage's FIFO queue and FIFO DLQ, as RerunWindowStage deploys them
 * (redrive after maxReceiveCount receives; the DLQ accepts only its own queue), named
 * `<app>-<stage>-queue.fifo` and `<app>-<stage>-dlq.fifo`.
 *
 * @example
 * const stages = await provisionWindowStages({ clients, topology, stages: windowStagesOf(d, topology, {}) });
 */
export async function provisionWindowStages(options: {
  clients: Pick<AwsClients, 'sqs'>;
  topology: Topology;
  stages: readonly { name: string; stage: WindowStage; worker: WorkerTopology }[];
  provisioned: (actions: readonly { resource: string; action: ProvisionAction }[]) => void;
}): Promise<DevWindowStage[]> {
  const out: DevWindowStage[] = [];
  for (const s of options.stages) {
    const names = workerQueueNames(options.topology.appName, s.worker);
    // The same FIFO pair the built-in summary stage has, with this stage's settings.
    const resources = await provisionSummaryStage({
      clients: options.clients,
      names,
      topology: { ...options.topology, summarize: s.worker },
    });
    options.provisioned(resources.actions);
    out.push({ ...s, names, queueUrl: resources.queueUrl, dlqUrl: resources.dlqUrl });
  }
  return out;
}

/**
 * Loads each window stage's handler from `--stage-handler STAGE=PATH[#EXPORT]`, in this process
 * (the module reads OUTPUT_BUCKET, INPUT_BUCKETS and AWS_ENDPOINT_URL as the deployed one does; its
 * WINDOW_STAGE is its stage name). Refuses a window stage without a handler, and a handler named
 * for a stage the pipeline has not.
 *
 * @example
 * const handlers = await loadWindowHandlers(stages, { daily: { path: './daily.mjs' } });
 */
export async function loadWindowHandlers(
  stages: readonly { name: string }[],
  sources: Readonly<Record<string, StageHandlerSource>>,
): Promise<Map<string, SqsLambdaHandler>> {
  const names = stages.map((s) => s.name);
  for (const named of Object.keys(sources)) {
    if (!names.includes(named)) {
      throw new LocalSetupError(
        `--stage-handler ${named}=...: the pipeline has no window stage "${named}" (its window stages: ${names.join(', ') || 'none'}).`,
      );
    }
  }
  const handlers = new Map<string, SqsLambdaHandler>();
  for (const name of names) {
    const source = sources[name];
    if (!source) {
      throw new LocalSetupError(
        `The pipeline's window stage "${name}" has no handler: pass --stage-handler ${name}=PATH (the module ` +
          'its RerunWindowStage deploys, exporting createWindowTaskHandler(...) as handler).',
      );
    }
    handlers.set(name, await loadHandler(source.path, source.export ?? 'handler'));
  }
  return handlers;
}

/**
 * `--stage-handler` values (`STAGE=PATH` or `STAGE=PATH#EXPORT`) as a map. Pure.
 *
 * @example
 * parseStageHandlers(['daily=./daily.mjs#build']); // { daily: { path: './daily.mjs', export: 'build' } }
 */
export function parseStageHandlers(values: readonly string[]): Record<string, StageHandlerSource> {
  const out: Record<string, StageHandlerSource> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    const stage = eq > 0 ? value.slice(0, eq) : '';
    const rest = eq > 0 ? value.slice(eq + 1) : '';
    const hash = rest.lastIndexOf('#');
    const path = hash >= 0 ? rest.slice(0, hash) : rest;
    const exported = hash >= 0 ? rest.slice(hash + 1) : undefined;
    if (stage === '' || path === '' || exported === '') {
      throw new LocalSetupError(`--stage-handler ${value}: expected STAGE=PATH or STAGE=PATH#EXPORT.`);
    }
    if (out[stage]) throw new LocalSetupError(`--stage-handler names the stage "${stage}" twice.`);
    out[stage] = { path, ...(exported !== undefined ? { export: exported } : {}) };
  }
  return out;
}

/**
 * The message a window stage's schedule sends at `firedAtMs`, as RerunWindowStage's EventBridge
 * rule sends it: "the window that just closed" at the rule's own time, in the stage's schedule group.
 *
 * @example
 * scheduledWindowMessage('daily', Date.parse('2026-12-06T00:00:00Z')).MessageGroupId; // 'schedule-daily'
 */
export function scheduledWindowMessage(
  stage: string,
  firedAtMs: number,
): { MessageBody: string; MessageGroupId: string; MessageDeduplicationId: string } {
  const at = new Date(firedAtMs).toISOString();
  return {
    MessageBody: JSON.stringify(scheduledWindowTaskBody(stage, at)),
    MessageGroupId: `schedule-${stage}`,
    MessageDeduplicationId: `schedule-${stage}-${firedAtMs}`,
  };
}

/**
 * Sends a window stage the message its schedule sends at `firedAtMs` ("build the window that just
 * closed"), and says so. Used once at the start of a session and at every window's end.
 *
 * @example
 * await sendScheduledWindow(sqs, stage, Date.now(), (t) => view.note(t));
 */
export async function sendScheduledWindow(
  sqs: Pick<SQSClient, 'send'>,
  s: DevWindowStage,
  firedAtMs: number,
  note?: (text: string) => void,
): Promise<void> {
  if (s.stage.partitions.kind !== 'time') return;
  const scheme = partitionScheme(s.stage.partitions) as TimePartitionScheme;
  await sqs.send(new SendMessageCommand({ QueueUrl: s.queueUrl, ...scheduledWindowMessage(s.name, firedAtMs) }));
  const closed = scheme.windowAt(scheme.windowAt(firedAtMs).start - 1).name;
  note?.(`Schedule of ${s.name}: build the ${s.stage.partitions.grain} window ${closed} (the last closed)`);
}

/**
 * The local stand-in for each window stage's schedule while `rerun dev` watches: at the end of every
 * window of the stage's grain it sends the message RerunWindowStage's rule sends. A stage not
 * partitioned by time has no schedule (as deployed). Returns the stop function.
 *
 * @example
 * const stop = startWindowSchedules({ sqs, stages, note: (t) => view.note(t) });
 */
export function startWindowSchedules(options: {
  sqs: Pick<SQSClient, 'send'>;
  stages: readonly DevWindowStage[];
  /** @default Date.now */
  now?: () => number;
  logger?: Logger;
  note?: (text: string) => void;
}): () => void {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  for (const s of options.stages) {
    if (s.stage.partitions.kind !== 'time') continue;
    const scheme = partitionScheme(s.stage.partitions) as TimePartitionScheme;
    const arm = (at: number) => {
      if (stopped) return;
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          if (stopped) return;
          sendScheduledWindow(options.sqs, s, at, options.note).then(
            () => arm(scheme.windowAt(Math.max(now(), at)).end),
            (error: unknown) => {
              logger.warn(`the local schedule of window stage ${s.name} could not send its message`, { error });
              arm(scheme.windowAt(Math.max(now(), at)).end);
            },
          );
        },
        Math.max(0, at - now()),
      );
      timer.unref();
      timers.add(timer);
    };
    arm(scheme.windowAt(now()).end);
  }
  return () => {
    stopped = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
  };
}
