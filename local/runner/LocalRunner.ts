import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from '@aws-sdk/client-sqs';
import { queueCounts } from '../../src/aws/queueCounts.js';
import { type Logger, silentLogger } from '../../src/logging/logger.js';
import { checkOptions, type OptionNames } from '../../src/options/checkOptions.js';
import { BatchInvoker } from './BatchInvoker.js';
import { BatchPoller } from './BatchPoller.js';
import { deleteMessages } from './deleteMessages.js';
import { RunnerConfigurationError, RunnerDrainTimeoutError } from './errors.js';
import type { InvocationReport } from './invocationReport.js';
import { lambdaLogStreamName } from './lambdaContext.js';
import { LOCAL_RUNNER_OPTION_NAMES, type LocalRunnerOptions, validateRunnerOptions } from './localRunnerOptions.js';
import { type QueueIdentity, resolveQueueIdentity } from './queueIdentity.js';

export type { SqsLambdaHandler } from './BatchInvoker.js';

/** Options of {@link LocalRunner.runUntilDrained}. */
export interface RunUntilDrainedOptions {
  /**
   * Give up (stop and reject with `RunnerDrainTimeoutError`) after this long.
   * @default no limit
   */
  timeoutMs?: number;
  /**
   * Interval between the queue-attribute checks.
   * @default 250
   */
  checkIntervalMs?: number;
  /**
   * Consecutive empty observations required. SQS's counts are approximate, so one zero is not proof.
   * @default 2
   */
  confirmations?: number;
  /** Stop early when this aborts (for Ctrl+C): the promise then resolves once the runner has stopped. */
  signal?: AbortSignal;
}

/** The names of {@link RunUntilDrainedOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const RUN_UNTIL_DRAINED_OPTION_NAMES = {
  checkIntervalMs: true,
  confirmations: true,
  signal: true,
  timeoutMs: true,
} as const satisfies OptionNames<RunUntilDrainedOptions>;

/**
 * Reproduces Lambda's SQS event source mapping in-process: polls a queue, invokes a handler module
 * with faithful `SQSEvent` records and a Lambda `Context`, and deletes messages by the
 * `ReportBatchItemFailures` rules.
 *
 * What it reproduces (see docs: https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html):
 * - batches of up to `batchSize` records, gathered over several `ReceiveMessage` calls (10 messages
 *   each at most) for at most `maxBatchingWindowSeconds` once the first record arrived;
 * - at most `maxConcurrency` invocations at once; the poller receives only when a slot is free, so
 *   messages are never held invisible while waiting for a slot;
 * - partial batch responses; a thrown error, an invalid response or a timeout fails the whole batch;
 * - failed messages are neither deleted nor made visible again: they return after the queue's
 *   visibility timeout, and the queue's own redrive policy moves them to the DLQ after maxReceiveCount;
 * - Lambda's refusal of a function timeout longer than the queue's visibility timeout.
 *
 * Limit of the in-process `handler`: on a function timeout the handler's promise keeps running in
 * this process (a real Lambda sandbox is frozen and then discarded); its late result is ignored and
 * logged, and its slot is released as Lambda releases the concurrency of a timed-out invocation.
 * With an `invoker` such as `LambdaRuntimePool` (the deployed bundle under the Lambda Runtime
 * Interface Emulator) the timed-out runtime is killed, as in Lambda.
 *
 * @example
 * const runner = new LocalRunner({ sqs, queueUrl, handler, timeoutSeconds: 60, batchSize: 10,
 *   maxBatchingWindowSeconds: 1, maxConcurrency: 4, onInvocation: (r) => console.error(r.outcome) });
 * await runner.runUntilDrained({ timeoutMs: 60_000 });
 */
export class LocalRunner {
  private readonly options: LocalRunnerOptions;
  private readonly logger: Logger;
  private readonly now: () => number;
  /** Gathers batches within the batching window. */
  private readonly batches: BatchPoller;
  /** Runs the function on a batch, with its timeout. */
  private readonly invoker: BatchInvoker;
  private poller: Promise<void> | undefined;
  /** The last poller started: settles when it has ended, whether by stop() or by a fatal error. */
  private lastPoller: Promise<void> = Promise.resolve();
  private stopping = false;
  private fatal: unknown;
  /** Batches held (being gathered with at least one message, invoked, or deleted): the used slots. */
  private holding = 0;
  /** Called when a slot frees up. */
  private slotFreed: (() => void) | undefined;
  /** Log stream names of idle execution environments, reused like warm Lambda sandboxes. */
  private readonly idleEnvironments: string[] = [];

  constructor(options: LocalRunnerOptions) {
    checkOptions('LocalRunner', options, LOCAL_RUNNER_OPTION_NAMES, (m) => new RunnerConfigurationError(m));
    validateRunnerOptions(options);
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.batches = new BatchPoller({
      sqs: options.sqs,
      queueUrl: options.queueUrl,
      batchSize: options.batchSize,
      maxBatchingWindowSeconds: options.maxBatchingWindowSeconds,
      pollWaitSeconds: options.pollWaitSeconds ?? 1,
      now: this.now,
      logger: this.logger,
      onReceive: (messageIds) => options.onReceive?.(messageIds),
    });
    this.invoker = new BatchInvoker({
      handler: options.handler,
      invoker: options.invoker,
      functionName: options.functionName,
      timeoutSeconds: options.timeoutSeconds,
      memoryLimitInMB: options.memoryLimitInMB,
      now: this.now,
      createRequestId: options.createRequestId ?? randomUUID,
      logger: this.logger,
    });
  }

  /** Invocations running now. */
  get inFlight(): number {
    return this.invoker.running;
  }

  /** Starts polling until {@link stop}, with at most `maxConcurrency` invocations at once. Idempotent. */
  start(): void {
    if (this.poller) return;
    this.stopping = false;
    this.fatal = undefined;
    this.poller = this.poll();
    this.lastPoller = this.poller;
  }

  /**
   * Settles when polling has ended: after {@link stop}, or by itself when the runner cannot run
   * (then it rejects with the reason, e.g. a configuration Lambda refuses). For long-running callers
   * that would otherwise wait for a stop signal forever.
   */
  async whenStopped(): Promise<void> {
    await this.lastPoller;
    if (this.fatal !== undefined) throw this.fatal;
  }

  /**
   * Stops polling and waits for in-flight invocations (and their deletes) to settle. A receive in
   * progress finishes first (at most `pollWaitSeconds`); what it returns is still invoked.
   * Rejects with the error that stopped the runner, if one did (e.g. a configuration Lambda refuses).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.slotFreed?.();
    const poller = this.poller;
    this.poller = undefined;
    await poller;
    if (this.invoker.abandoned > 0) {
      this.logger.warn('timed-out invocations are still running in this process', { count: this.invoker.abandoned });
    }
    if (this.fatal !== undefined) throw this.fatal;
  }

  /**
   * Starts, waits until the queue has no visible, in-flight or delayed message and nothing is being
   * processed (confirmed by consecutive checks), then stops. Messages that keep failing end in the
   * DLQ through the queue's redrive policy, so this terminates once every message is either deleted
   * or dead-lettered.
   */
  async runUntilDrained(options: RunUntilDrainedOptions = {}): Promise<void> {
    checkOptions(
      'LocalRunner.runUntilDrained',
      options,
      RUN_UNTIL_DRAINED_OPTION_NAMES,
      (m) => new RunnerConfigurationError(m),
    );
    const interval = options.checkIntervalMs ?? 250;
    const confirmations = options.confirmations ?? 2;
    const deadline = options.timeoutMs === undefined ? undefined : this.now() + options.timeoutMs;
    this.start();
    let empty = 0;
    let last = '';
    try {
      while (this.fatal === undefined && !options.signal?.aborted) {
        if (deadline !== undefined && this.now() >= deadline) {
          throw new RunnerDrainTimeoutError(
            `The queue ${this.options.queueUrl} was not drained within ${options.timeoutMs} ms (${last}). ` +
              'Failing messages come back after the visibility timeout until maxReceiveCount: lower them locally, or wait longer.',
          );
        }
        await sleep(interval);
        if (this.holding > 0) {
          empty = 0;
          last = `${this.holding} batch(es) being processed`;
          continue;
        }
        const counts = await queueCounts(this.options.sqs, this.options.queueUrl);
        last = `visible ${counts.visible}, in flight ${counts.inFlight}, delayed ${counts.delayed}`;
        const isEmpty = counts.visible + counts.inFlight + counts.delayed === 0 && this.holding === 0;
        empty = isEmpty ? empty + 1 : 0;
        if (empty >= confirmations) break;
      }
    } catch (error) {
      await this.stop().catch(() => {});
      throw error;
    }
    await this.stop();
  }

  /**
   * The poller: waits for a free slot, gathers a batch, hands it to an invocation, repeats. It
   * receives only when a slot is free, so no message is held invisible while waiting for one; its
   * receives run one at a time, and invocations run concurrently up to `maxConcurrency`.
   */
  private async poll(): Promise<void> {
    let identity: QueueIdentity;
    try {
      identity = await resolveQueueIdentity(this.options, this.logger);
    } catch (error) {
      this.fatal = error;
      this.stopping = true;
      this.logger.error('the local runner cannot start', { error });
      return;
    }
    const invocations = new Set<Promise<void>>();
    const hooks = { stopping: () => this.stopping, onHeld: () => this.holding++ };
    let backoffMs = 500;
    while (!this.stopping) {
      if (this.holding >= this.options.maxConcurrency) {
        await new Promise<void>((resolve) => {
          this.slotFreed = resolve;
        });
        this.slotFreed = undefined;
        continue;
      }
      let batch: Message[];
      try {
        batch = await this.batches.gatherBatch(hooks);
        backoffMs = 500;
      } catch (error) {
        this.logger.warn('ReceiveMessage failed; retrying', { error, backoffMs });
        await sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 10_000);
        continue;
      }
      if (batch.length === 0) continue;
      const environment =
        this.idleEnvironments.pop() ?? lambdaLogStreamName(new Date(this.now()), randomBytes(16).toString('hex'));
      const invocation = this.invoke(batch, identity, environment).finally(() => {
        invocations.delete(invocation);
        this.idleEnvironments.push(environment);
        this.holding--;
        this.slotFreed?.();
      });
      invocations.add(invocation);
    }
    await Promise.all(invocations);
  }

  /** One batch: the invoker runs the function, the deleter deletes what it did not fail, the listener hears of it. */
  private async invoke(batch: Message[], identity: QueueIdentity, logStreamName: string): Promise<void> {
    const settled = await this.invoker.invoke(batch, identity, logStreamName);
    const byId = new Map(batch.map((m) => [m.MessageId as string, m]));
    const { deleted, failures } = await deleteMessages(
      { sqs: this.options.sqs, queueUrl: this.options.queueUrl, logger: this.logger },
      settled.toDelete.map((id) => byId.get(id) as Message),
    );
    const deletedSet = new Set(deleted);
    const report: InvocationReport = {
      requestId: settled.requestId,
      messageIds: settled.messageIds,
      deleted,
      retained: settled.messageIds.filter((id) => !deletedSet.has(id)),
      outcome: settled.outcome,
      durationMs: settled.durationMs,
    };
    if (settled.error !== undefined) report.error = settled.error;
    if (failures.length > 0) report.deleteFailures = failures;
    try {
      this.options.onInvocation?.(report);
    } catch (listenerError) {
      this.logger.warn('onInvocation listener threw', { error: listenerError });
    }
  }
}
