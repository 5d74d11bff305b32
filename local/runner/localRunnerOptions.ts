import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '../../src/logging/logger.js';
import type { OptionNames } from '../../src/options/checkOptions.js';
import type { SqsLambdaHandler } from './BatchInvoker.js';
import { RunnerConfigurationError } from './errors.js';
import type { FunctionInvoker } from './FunctionInvoker.js';
import type { InvocationReport } from './invocationReport.js';

/** Options of {@link LocalRunner}: the settings of the Lambda SQS event source mapping it reproduces. */
export interface LocalRunnerOptions {
  /** Client for the queue. */
  sqs: SQSClient;
  /** The queue to poll. */
  queueUrl: string;
  /**
   * The function to invoke in this process; its response is read with `ReportBatchItemFailures`
   * semantics. Give exactly one of `handler` and `invoker`.
   */
  handler?: SqsLambdaHandler;
  /**
   * Runs the function elsewhere instead (e.g. `LambdaRuntimePool`: the deployed bundle under the
   * Lambda Runtime Interface Emulator). The invoker enforces the function's timeout and builds its
   * context; `timeoutSeconds` must equal the timeout it enforces (the runner checks it against the
   * queue's visibility timeout, as Lambda does).
   */
  invoker?: FunctionInvoker;
  /**
   * Function name, used in the context (`functionName`, `invokedFunctionArn`, `logGroupName`).
   * @default 'rerun-local'
   */
  functionName?: string;
  /** Function timeout (Lambda: 1-900 s). `context.getRemainingTimeInMillis()` counts down from it. */
  timeoutSeconds: number;
  /** Records per invocation (`BatchSize`, 1-10000; above 10 requires `maxBatchingWindowSeconds` > 0). */
  batchSize: number;
  /** How long to gather records before invoking (`MaximumBatchingWindowInSeconds`, 0-300). */
  maxBatchingWindowSeconds: number;
  /** Concurrent invocations (`ScalingConfig.MaximumConcurrency`; AWS accepts 2-1000, 1 is allowed locally). */
  maxConcurrency: number;
  /**
   * Region reported in records and the context.
   * @default the region in the queue's ARN
   */
  region?: string;
  /**
   * Account id used in `invokedFunctionArn`.
   * @default the account in the queue's ARN
   */
  accountId?: string;
  /**
   * Function memory, reported as `context.memoryLimitInMB` (the runner enforces no limit).
   * @default 128
   */
  memoryLimitInMB?: number;
  /** @default silentLogger */
  logger?: Logger;
  /** Called after every invocation has settled (including its deletes), e.g. for progress display. */
  onInvocation?: (report: InvocationReport) => void;
  /**
   * Called as soon as ReceiveMessage returns messages, before any invocation: from then on their
   * receive counts (ApproximateReceiveCount) have gone up, whatever happens to this process.
   * @default none
   */
  onReceive?: (messageIds: readonly string[]) => void;
  /**
   * The clock (epoch ms) for the remaining-time countdown, the batching window and durations. It must advance.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Creates each invocation's `awsRequestId`.
   * @default crypto.randomUUID
   */
  createRequestId?: () => string;
  /**
   * Long-poll wait of each `ReceiveMessage` (0-20 s). Short, so that `stop()` is prompt. With 0 the
   * runner short-polls and pauses 100 ms after an empty answer.
   * @default 1
   */
  pollWaitSeconds?: number;
}

/** The names of {@link LocalRunnerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const LOCAL_RUNNER_OPTION_NAMES = {
  accountId: true,
  batchSize: true,
  createRequestId: true,
  functionName: true,
  handler: true,
  invoker: true,
  logger: true,
  maxBatchingWindowSeconds: true,
  maxConcurrency: true,
  memoryLimitInMB: true,
  now: true,
  onInvocation: true,
  onReceive: true,
  pollWaitSeconds: true,
  queueUrl: true,
  region: true,
  sqs: true,
  timeoutSeconds: true,
} as const satisfies OptionNames<LocalRunnerOptions>;

/**
 * Checks the settings the way Lambda's CreateEventSourceMapping does, so a configuration that
 * works locally cannot be refused at deploy time.
 */
export function validateRunnerOptions(o: LocalRunnerOptions): void {
  const problems: string[] = [];
  if ((o.handler === undefined) === (o.invoker === undefined)) {
    problems.push('give exactly one of handler (in this process) and invoker (elsewhere, e.g. LambdaRuntimePool)');
  }
  const isInt = (n: number) => Number.isInteger(n);
  if (!isInt(o.batchSize) || o.batchSize < 1 || o.batchSize > 10_000) {
    problems.push(`batchSize must be an integer from 1 to 10000 (got ${o.batchSize})`);
  }
  if (!isInt(o.maxBatchingWindowSeconds) || o.maxBatchingWindowSeconds < 0 || o.maxBatchingWindowSeconds > 300) {
    problems.push(`maxBatchingWindowSeconds must be an integer from 0 to 300 (got ${o.maxBatchingWindowSeconds})`);
  }
  if (o.batchSize > 10 && !(o.maxBatchingWindowSeconds > 0)) {
    problems.push(
      `batchSize ${o.batchSize} is above 10, which Lambda accepts only with maxBatchingWindowSeconds of at least 1`,
    );
  }
  if (!isInt(o.timeoutSeconds) || o.timeoutSeconds < 1 || o.timeoutSeconds > 900) {
    problems.push(`timeoutSeconds must be an integer from 1 to 900 (got ${o.timeoutSeconds})`);
  }
  if (!isInt(o.maxConcurrency) || o.maxConcurrency < 1 || o.maxConcurrency > 1000) {
    problems.push(`maxConcurrency must be an integer from 1 to 1000 (got ${o.maxConcurrency})`);
  }
  const wait = o.pollWaitSeconds ?? 1;
  if (!isInt(wait) || wait < 0 || wait > 20)
    problems.push(`pollWaitSeconds must be an integer from 0 to 20 (got ${wait})`);
  if (problems.length > 0) throw new RunnerConfigurationError(`Invalid local runner settings: ${problems.join('; ')}.`);
}
