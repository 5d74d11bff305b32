import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { runCli } from '../../app/cli/dispatch.js';
import type { CliIo } from '../../app/common/command.js';
import { type LocalStackResources, provisionLocalStack } from '../../app/dev/provisionLocalStack.js';
import { createSummarizeHandler } from '../../app/partition/createSummarizeHandler.js';
import { provisionSummaryStage, type SummaryStageResources } from '../../app/partition/provisionSummaryStage.js';
import { referenceInputRules } from '../../app/partition/referenceInputRules.js';
import { StackOutput } from '../../app/stackOutputs.js';
import { localResourceNames, type Topology, topology, workerQueueNames } from '../../app/topology.js';
import { LocalRunner } from '../../local/runner/LocalRunner.js';
import type { AwsClients } from '../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import type { Logger } from '../../src/logging/logger.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import type { OutcomeHook } from '../../src/worker/outcomes.js';
import { awsEndpoint, uniqueName } from './aws.js';

/** Both stages with short timings, so failures reach a DLQ in seconds (2 receives x 2 s). */
export const twoStageTopology: Topology = {
  ...topology,
  normalize: { ...topology.normalize, functionTimeoutSeconds: 2, visibilityTimeoutSeconds: 2, maxReceiveCount: 2 },
  summarize: { ...topology.summarize, functionTimeoutSeconds: 4, visibilityTimeoutSeconds: 4, maxReceiveCount: 2 },
};

/** A provisioned two-stage pipeline, named after an app name the CLI resolves with `--app-name`. */
export interface TwoStagePipeline {
  readonly appName: string;
  readonly t: Topology;
  readonly stack: LocalStackResources;
  readonly summary: SummaryStageResources;
}

/** Provisions both stages under a unique app name (`<app>-input`, `<app>-summarize-queue.fifo`, ...). */
export async function provisionTwoStagePipeline(
  clients: AwsClients,
  base: Topology = twoStageTopology,
): Promise<TwoStagePipeline> {
  const appName = uniqueName('e5');
  const t = { ...base, appName };
  const stack = await provisionLocalStack({ clients, names: localResourceNames(t), topology: t });
  const summary = await provisionSummaryStage({ clients, names: workerQueueNames(appName, t.summarize), topology: t });
  return { appName, t, stack, summary };
}

/**
 * Creates a CloudFormation stack (at the test endpoint) whose outputs name the pipeline's resources,
 * as the rerun stack's outputs do, for `--stack NAME`; `extra` adds outputs (a log group...). The
 * stack's name starts with `prefix`, never the app name, so a command finds the pipeline through
 * the outputs alone. Returns the stack's name.
 *
 * @example
 * const stackName = await createOutputsStack(p, 'console-stack', { [StackOutput.LOG_GROUP]: logGroup });
 */
export async function createOutputsStack(
  p: TwoStagePipeline,
  prefix: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<string> {
  const stackName = uniqueName(prefix);
  const outputs: Record<string, string> = {
    [StackOutput.INPUT_BUCKET]: p.stack.inputBucket,
    [StackOutput.OUTPUT_BUCKET]: p.stack.outputBucket,
    [StackOutput.QUEUE_URL]: p.stack.queueUrl,
    [StackOutput.DLQ_URL]: p.stack.dlqUrl,
    [StackOutput.SUMMARY_QUEUE_URL]: p.summary.queueUrl,
    [StackOutput.SUMMARY_DLQ_URL]: p.summary.dlqUrl,
    ...extra,
  };
  await new CloudFormationClient({ endpoint: awsEndpoint(), region: 'us-east-1' }).send(
    new CreateStackCommand({
      StackName: stackName,
      TemplateBody: JSON.stringify({
        Resources: { Placeholder: { Type: 'AWS::SQS::Queue' } },
        Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
      }),
    }),
  );
  return stackName;
}

/**
 * The normalize worker under the local runner, recording give-ups like the deployed handler;
 * `codeVersionMarker` also records when its code version first ran, as the deployed one does.
 */
export function normalizeStageRunner(
  clients: AwsClients,
  p: TwoStagePipeline,
  worker: WorkerDefinition = createNormalizeWorker({ outputBucket: p.stack.outputBucket, prefixes: p.t }),
  options: { codeVersionMarker?: boolean; logger?: Logger; onOutcome?: OutcomeHook } = {},
): LocalRunner {
  const store = new S3ObjectStore(clients.s3);
  const handler = createSqsBatchHandler({
    worker,
    store,
    sqs: clients.sqs,
    deadlineMarginMs: 500,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
    failureRecorder: new S3FailureRecorder({ store, sqs: clients.sqs, bucket: p.stack.outputBucket }),
    ...(options.codeVersionMarker
      ? { codeVersionMarker: { bucket: p.stack.outputBucket, prefix: p.t.codeVersionPrefix } }
      : {}),
  });
  const w = p.t.normalize;
  return new LocalRunner({
    sqs: clients.sqs,
    queueUrl: p.stack.queueUrl,
    handler,
    timeoutSeconds: w.functionTimeoutSeconds,
    batchSize: w.batchSize,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: w.maxConcurrency,
    pollWaitSeconds: 0,
  });
}

/** The summarize worker (the real handler factory) under the local runner. */
export function summarizeStageRunner(clients: AwsClients, p: TwoStagePipeline): LocalRunner {
  const handler = createSummarizeHandler({
    clients,
    outputBucket: p.stack.outputBucket,
    inputBucket: p.stack.inputBucket,
    topology: p.t,
    inputs: referenceInputRules({ inputBucket: p.stack.inputBucket, topology: p.t }),
    deadlineMarginMs: 500,
  });
  const w = p.t.summarize;
  return new LocalRunner({
    sqs: clients.sqs,
    queueUrl: p.summary.queueUrl,
    handler,
    timeoutSeconds: w.functionTimeoutSeconds,
    batchSize: w.batchSize,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: w.maxConcurrency,
    pollWaitSeconds: 0,
  });
}

/** The result of an in-process `rerun` command. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string[];
  readonly stderr: string;
  /** stdout as text: the command's result (its table, plan or help, then SUMMARY), one line per line. */
  readonly text: string;
  /** stdout parsed as one JSON document (with --json). */
  json<T = Record<string, unknown>>(): T;
}

/** Runs `rerun <args>` in process against the test emulator, as a user with AWS_ENDPOINT_URL would. */
export async function rerunCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<CliResult> {
  const stdout: string[] = [];
  let stderr = '';
  const io: CliIo = {
    stdout: (line) => void stdout.push(line),
    stderr: (text) => {
      stderr += text;
    },
    env: {
      AWS_ENDPOINT_URL: awsEndpoint(),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      ...options.env,
    },
    isTTY: false,
    signal: options.signal ?? new AbortController().signal,
  };
  const code = await runCli(args, io);
  return {
    code,
    stdout,
    stderr,
    text: stdout.join('\n'),
    json: <T>() => JSON.parse(stdout.join('\n')) as T,
  };
}

/** A small CSV order file; `bad` adds a row with a missing field (quarantined). */
export function ordersCsv(day: string, n: number, options: { bad?: boolean; amount?: number } = {}): string {
  const rows = Array.from(
    { length: n },
    (_, i) => `${day}-${i},customer ${i},${((options.amount ?? 10) + i).toFixed(2)}`,
  );
  return `id,customer,amount\n${rows.join('\n')}\n${options.bad ? `${day}-bad,missing amount\n` : ''}`;
}
