import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { type AwsClients, createAwsClients } from '../../src/aws/clients.js';
import { daysInWindow, PartitionWindowInvalidError } from '../../src/keys/partition.js';
import { topology as defaultTopology, type Topology, type WorkerTopology, workerQueueNames } from '../topology.js';
import { checkedEndpoint } from './checkedEndpoint.js';
import { type CliIo, type CliOption, CliUsageError, type OptionValues } from './command.js';
import type { DevSessionInfo } from './devSessionFile.js';
import { devSessionTarget, envCredentials } from './devSessionTarget.js';
import { loadCloudFormation } from './loadCloudFormation.js';
import { requireBucket, requireQueueUrl } from './pipelineResources.js';
import { reportFailure } from './reportFailure.js';
import { resolveStackResources, type StackResources } from './stackTarget.js';

/**
 * Where the `status`, `backfill` and `redrive` commands act: the local stack of `rerun dev` or a
 * deployed one, through `AWS_ENDPOINT_URL` (an emulator) or the default AWS credential chain.
 *
 * Each resource comes from, in order: its option, the outputs of the stack named by `--stack`
 * (app/common/stackTarget.ts), its `RERUN_*` variable (docs/DEPLOY.md shows how to set them from the stack
 * outputs), the name the topology gives it under the app name (`--app-name`, `RERUN_APP_NAME`,
 * default `rerun`). Queue names are the same locally and in a stack of that name, so only the
 * buckets (named by CloudFormation) need `--stack` or variables for a deployed stack.
 */
export interface PipelineTarget {
  readonly clients: AwsClients;
  /** `AWS_ENDPOINT_URL`, when set. */
  readonly endpoint?: string;
  readonly region: string;
  /** For messages: the endpoint, or `AWS (<region>)`. */
  readonly where: string;
  readonly appName: string;
  readonly topology: Topology;
  readonly inputBucket: string;
  readonly outputBucket: string;
  /** The stack named by `--stack`, whose outputs gave the buckets and queues. */
  readonly stack?: StackResources;
  /**
   * The running `rerun dev` this target is, when it runs a pipeline of the user's (`--pipeline`): its
   * description and its window stages' queues, read as a stack's outputs are.
   */
  readonly devPipeline?: DevPipeline;
}

/** What a running `rerun dev` of a user's pipeline tells the tools (app/common/devSessionFile.ts). */
export interface DevPipeline {
  /** For messages: `the running rerun dev of app X`. */
  readonly from: string;
  /** The description as the session file holds it (parsed by the tool that reads it). */
  readonly pipeline: unknown;
  readonly windowStages: Readonly<Record<string, { readonly queueUrl: string; readonly dlqUrl: string }>>;
}

/** The options every pipeline command accepts. */
export const targetOptions: Record<string, CliOption> = {
  stack: {
    type: 'string',
    valueName: 'NAME',
    description:
      'A deployed stack: buckets and queues from its CloudFormation outputs (DescribeStacks); also the app name',
  },
  'app-name': {
    type: 'string',
    valueName: 'NAME',
    description: 'App (or stack) name that prefixes resource names (default: $RERUN_APP_NAME or rerun)',
  },
  'input-bucket': {
    type: 'string',
    valueName: 'BUCKET',
    description: 'Input bucket (default: $RERUN_INPUT_BUCKET or <app>-input)',
  },
  'output-bucket': {
    type: 'string',
    valueName: 'BUCKET',
    description: 'Output bucket (default: $RERUN_OUTPUT_BUCKET or <app>-output)',
  },
  json: { type: 'boolean', description: 'Print one JSON document on stdout (for scripts) instead of text' },
};

/** The `RERUN_*` variables of each worker's queues. */
const QUEUE_VARIABLES: Record<string, { queue: string; dlq: string }> = {
  normalize: { queue: 'RERUN_QUEUE_URL', dlq: 'RERUN_DLQ_URL' },
  summarize: { queue: 'RERUN_SUMMARY_QUEUE_URL', dlq: 'RERUN_SUMMARY_DLQ_URL' },
};

/**
 * Resolves the target from the options and the environment (read only here, at the edge). With
 * `--stack NAME` it also reads that stack's outputs (one DescribeStacks), which then give the
 * buckets and queues unless an option names them; the stack name is the app name too.
 *
 * @example
 * const target = await resolvePipelineTarget(values, io.env);
 */
export async function resolvePipelineTarget(
  values: OptionValues,
  env: NodeJS.ProcessEnv,
  options: { cloudformation?: Pick<CloudFormationClient, 'send'>; session?: DevSessionInfo } = {},
): Promise<PipelineTarget> {
  const endpoint = env.AWS_ENDPOINT_URL || undefined;
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
  const where = endpoint ?? `AWS (${region})`;
  const stackName = stringOption(values, 'stack');
  const stack = stackName
    ? await resolveStackResources(
        options.cloudformation ??
          new (await loadCloudFormation()).CloudFormationClient({ region, ...(endpoint ? { endpoint } : {}) }),
        stackName,
        where,
      )
    : undefined;
  // The stack's queues are named after it (<stack>-<worker>-queue), like the local ones after the app.
  const appName = stringOption(values, 'app-name') ?? stackName ?? (env.RERUN_APP_NAME || defaultTopology.appName);
  return {
    clients: createAwsClients({ ...(endpoint ? { endpoint } : {}), region, credentials: envCredentials(env) }),
    ...(endpoint ? { endpoint } : {}),
    region,
    where,
    appName,
    topology: { ...defaultTopology, appName },
    inputBucket:
      stringOption(values, 'input-bucket') ?? stack?.inputBucket ?? (env.RERUN_INPUT_BUCKET || `${appName}-input`),
    outputBucket:
      stringOption(values, 'output-bucket') ?? stack?.outputBucket ?? (env.RERUN_OUTPUT_BUCKET || `${appName}-output`),
    ...(stack ? { stack } : {}),
    ...(options.session?.pipeline !== undefined
      ? {
          devPipeline: {
            from: `the running rerun dev of app ${options.session.appName}`,
            pipeline: options.session.pipeline,
            windowStages: options.session.windowStages ?? {},
          },
        }
      : {}),
  };
}

/**
 * {@link resolvePipelineTarget} for a command: a target, or the exit code 1 after reporting why there
 * is none (e.g. the `--stack` does not exist) the way every command reports its errors.
 *
 * @example
 * const target = await targetOrExit(values, io, 'status');
 * if (typeof target === 'number') return target;
 */
export async function targetOrExit(values: OptionValues, io: CliIo, command: string): Promise<PipelineTarget | 1> {
  let env = io.env;
  try {
    // Nothing explicit: the running rerun dev of the user is the target (app/common/devSessionTarget.ts).
    const chosen = devSessionTarget(values, io.env, command);
    env = chosen.env;
    if (chosen.note) io.stderr(chosen.note);
    // A wrong AWS_ENDPOINT_URL fails here, in seconds, naming the cause (see checkedEndpoint).
    await checkedEndpoint(env);
    return await resolvePipelineTarget(chosen.values, env, chosen.session ? { session: chosen.session } : {});
  } catch (error) {
    return reportCommandError(error, { ...io, env }, command, values.json === true);
  }
}

/**
 * How every pipeline command ends on an error (app/common/reportFailure.ts): the message on stderr, a
 * JSON `error` document on stdout with --json, exit code 1.
 *
 * @example
 * } catch (error) { return reportCommandError(error, io, 'status', json); }
 */
export function reportCommandError(error: unknown, io: CliIo, command: string, json: boolean): 1 {
  // A usage error found while the command runs (a --queue no stage or DLQ has) is the dispatcher's to
  // report: exit 2 with the pointer to --help, never "a bug of rerun".
  if (error instanceof CliUsageError) throw error;
  return reportFailure(error, io, command, json);
}

/** A worker's queue or DLQ URL from the stack's outputs, when the target came from `--stack`. */
function stackQueueUrl(target: PipelineTarget, worker: WorkerTopology, kind: 'queue' | 'dlq'): string | undefined {
  const stack = target.stack;
  if (!stack) return undefined;
  if (worker.name === target.topology.normalize.name) return kind === 'queue' ? stack.queueUrl : stack.dlqUrl;
  if (worker.name === target.topology.summarize.name) {
    return kind === 'queue' ? stack.summaryQueueUrl : stack.summaryDlqUrl;
  }
  return undefined;
}

/**
 * Checks that the output bucket exists and is reachable.
 *
 * @example
 * await requireOutputBucket(target);
 */
export async function requireOutputBucket(target: PipelineTarget): Promise<void> {
  await requireBucket(target.clients.s3, {
    role: 'output bucket',
    name: target.outputBucket,
    where: target.where,
    hint:
      'Pass --output-bucket or set RERUN_OUTPUT_BUCKET (the stack output OutputBucketName; see docs/DEPLOY.md), ' +
      'pass --stack NAME for a deployed stack, ' +
      `or start the local stack with rerun dev --app-name ${target.appName}.`,
  });
}

/**
 * The URL of a worker's work queue or DLQ: `override` (an option), its `RERUN_*` variable, or the
 * topology's name under the app name; fails with a clear message when it does not exist.
 *
 * @example
 * const queueUrl = await workerQueueUrl(target, target.topology.summarize, 'queue', values['queue-url'], io.env);
 */
export async function workerQueueUrl(
  target: PipelineTarget,
  worker: WorkerTopology,
  kind: 'queue' | 'dlq',
  override: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const variable = QUEUE_VARIABLES[worker.name]?.[kind];
  const name =
    override ??
    stackQueueUrl(target, worker, kind) ??
    ((variable && env[variable]) || workerQueueNames(target.appName, worker)[kind]);
  return requireQueueUrl(target.clients.sqs, {
    role: `${worker.name} ${kind === 'dlq' ? 'dead-letter queue' : 'queue'}`,
    name,
    where: target.where,
    hint:
      `For a deployed stack pass --stack NAME (its queue names are generated)${variable ? ` or set ${variable}` : ''}; ` +
      `locally, start rerun dev --app-name ${target.appName}.`,
  });
}

/** A string option's value, if given. */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A hint when a window has no input and no summary at all: most often the input bucket is not the one
 * whose outputs are there (summaries are keyed by it), e.g. RERUN_INPUT_BUCKET is unset for a deployed stack.
 *
 * @example
 * const hint = emptyWindowHint(target, report.partitions);
 */
export function emptyWindowHint(
  target: PipelineTarget,
  partitions: readonly { readonly inputs: number; readonly quarantineInputs: number; readonly status: string }[],
): string | undefined {
  const empty = partitions.every((p) => p.inputs === 0 && p.quarantineInputs === 0 && p.status === 'missing');
  if (!empty || partitions.length === 0) return undefined;
  return (
    `note: no normalized output and no summary in this window under normalized/${target.inputBucket}/ of ` +
    `${target.outputBucket}. If that is unexpected, check the input bucket (--input-bucket or RERUN_INPUT_BUCKET).\n`
  );
}

/**
 * The `--from` / `--to` window of status and backfill, checked: both given, valid days, in order.
 *
 * @example
 * const { from, to } = requireWindow(values); // throws CliUsageError with what to fix
 */
export function requireWindow(values: OptionValues): { from: string; to: string } {
  const from = stringOption(values, 'from');
  const to = stringOption(values, 'to');
  if (!from || !to) throw new CliUsageError('--from and --to are required (YYYY-MM-DD).');
  try {
    daysInWindow(from, to);
  } catch (error) {
    if (error instanceof PartitionWindowInvalidError) throw new CliUsageError(error.message);
    throw error;
  }
  return { from, to };
}
