import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { queueCounts } from '../../src/aws/queueCounts.js';
import { type Logger, silentLogger } from '../../src/logging/logger.js';
import { InvocationOutcome, interpretBatchResponse } from './batchResponse.js';
import { RunnerConfigurationError, RunnerDrainTimeoutError } from './errors.js';
import type { FunctionInvoker, InvocationResult } from './FunctionInvoker.js';
import { createLambdaContext, lambdaLogStreamName } from './lambdaContext.js';
import { toSqsRecord } from './sqsRecord.js';

/** An SQS-triggered Lambda handler, as the runner calls it. */
// biome-ignore lint/suspicious/noConfusingVoidType: matches aws-lambda's SQSHandler result (a handler may return nothing).
export type SqsLambdaHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

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

/** What happened in one invocation. */
export interface InvocationReport {
  requestId: string;
  /** Ids of every message in the batch, in receive order. */
  messageIds: string[];
  /** Ids of the messages deleted from the queue. */
  deleted: string[];
  /** Ids of the messages left in the queue: they return after the visibility timeout. */
  retained: string[];
  outcome: InvocationOutcome;
  /** From invoke to settled (on the `now` clock), excluding the deletes. */
  durationMs: number;
  /** The handler's error, the invalid-response reason, or the timeout. */
  error?: string;
  /** Deletes that SQS refused (for example an expired receipt handle): those messages come back. */
  deleteFailures?: { messageId: string; code: string; message: string }[];
}

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

interface QueueIdentity {
  readonly queueArn: string;
  readonly region: string;
  readonly accountId: string;
}

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
  private readonly createRequestId: () => string;
  private readonly pollWaitSeconds: number;
  private poller: Promise<void> | undefined;
  /** The last poller started: settles when it has ended, whether by stop() or by a fatal error. */
  private lastPoller: Promise<void> = Promise.resolve();
  private stopping = false;
  private fatal: unknown;
  /** Batches held (being gathered with at least one message, invoked, or deleted): the used slots. */
  private holding = 0;
  /** Invocations running now (timed-out ones excluded). */
  private running = 0;
  /** Timed-out invocations whose promise has not settled yet. */
  private abandoned = 0;
  /** Called when a slot frees up. */
  private slotFreed: (() => void) | undefined;
  /** Log stream names of idle execution environments, reused like warm Lambda sandboxes. */
  private readonly idleEnvironments: string[] = [];

  constructor(options: LocalRunnerOptions) {
    validateRunnerOptions(options);
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.createRequestId = options.createRequestId ?? randomUUID;
    this.pollWaitSeconds = options.pollWaitSeconds ?? 1;
  }

  /** Invocations running now. */
  get inFlight(): number {
    return this.running;
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
    if (this.abandoned > 0) {
      this.logger.warn('timed-out invocations are still running in this process', { count: this.abandoned });
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

  private async resolveIdentity(): Promise<QueueIdentity> {
    const response = await this.options.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.options.queueUrl,
        AttributeNames: ['QueueArn', 'VisibilityTimeout'],
      }),
    );
    const queueArn = response.Attributes?.QueueArn;
    if (!queueArn)
      throw new RunnerConfigurationError(`The queue ${this.options.queueUrl} did not report its QueueArn.`);
    const [, , , arnRegion = '', arnAccount = ''] = queueArn.split(':');
    const visibility = Number(response.Attributes?.VisibilityTimeout);
    // Lambda refuses a mapping whose function timeout exceeds the queue's visibility timeout
    // (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
    if (Number.isFinite(visibility) && this.options.timeoutSeconds > visibility) {
      throw new RunnerConfigurationError(
        `The function timeout (${this.options.timeoutSeconds} s) exceeds the visibility timeout of ${queueArn} ` +
          `(${visibility} s); Lambda refuses this mapping. Raise the queue's VisibilityTimeout (AWS advises 6 x the function timeout).`,
      );
    }
    const held = this.options.timeoutSeconds + this.options.maxBatchingWindowSeconds;
    if (Number.isFinite(visibility) && visibility < held) {
      // Allowed by Lambda, but a message can then become visible again while its batch is still
      // being gathered or processed, and be delivered twice (AWS advises 6 x the function timeout).
      this.logger.warn('the visibility timeout is shorter than batching window + function timeout: expect duplicates', {
        queueArn,
        visibilityTimeoutSeconds: visibility,
        batchingWindowPlusTimeoutSeconds: held,
      });
    }
    return {
      queueArn,
      region: this.options.region ?? arnRegion,
      accountId: this.options.accountId ?? arnAccount,
    };
  }

  /**
   * The poller: waits for a free slot, gathers a batch, hands it to an invocation, repeats. It
   * receives only when a slot is free, so no message is held invisible while waiting for one; its
   * receives run one at a time, and invocations run concurrently up to `maxConcurrency`.
   */
  private async poll(): Promise<void> {
    let identity: QueueIdentity;
    try {
      identity = await this.resolveIdentity();
    } catch (error) {
      this.fatal = error;
      this.stopping = true;
      this.logger.error('the local runner cannot start', { error });
      return;
    }
    const invocations = new Set<Promise<void>>();
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
        batch = await this.gatherBatch();
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

  /**
   * Gathers one batch. Without a batching window this is a single receive (Lambda invokes with what
   * one poll returned). With a window, receives (<= 10 each, the SQS maximum) until the batch is full
   * or the window, started by the first record, has passed. Increments `holding` once it holds messages.
   */
  private async gatherBatch(): Promise<Message[]> {
    const { batchSize, maxBatchingWindowSeconds } = this.options;
    const byId = new Map<string, Message>();
    let windowEnd: number | undefined;
    try {
      while (byId.size < batchSize) {
        let waitSeconds = this.pollWaitSeconds;
        if (windowEnd !== undefined) {
          const left = windowEnd - this.now();
          if (left <= 0) break;
          // WaitTimeSeconds is whole seconds: short-poll when less than one is left, to not overshoot.
          waitSeconds = Math.min(this.pollWaitSeconds, Math.floor(left / 1000));
        }
        const received = await this.receive(Math.min(10, batchSize - byId.size), waitSeconds);
        const before = byId.size;
        // A message whose visibility expired during a long window can be received twice: keep the
        // newest receipt handle (the only one that can still delete it).
        for (const message of received) if (message.MessageId) byId.set(message.MessageId, message);
        if (before === 0 && byId.size > 0) this.holding++;
        if (byId.size === 0) {
          if (this.stopping) break;
          // A short poll (pollWaitSeconds 0) returns at once: pause so an idle queue is not hammered.
          if (waitSeconds === 0) await sleep(100);
          continue;
        }
        if (maxBatchingWindowSeconds === 0 || this.stopping) break;
        windowEnd ??= this.now() + maxBatchingWindowSeconds * 1000;
        if (received.length === 0 && waitSeconds === 0) await sleep(Math.min(100, Math.max(0, windowEnd - this.now())));
      }
    } catch (error) {
      // Messages already received stay invisible until their visibility timeout: invoke them anyway.
      if (byId.size === 0) throw error;
      this.logger.warn('ReceiveMessage failed while gathering a batch; invoking what was received', { error });
    }
    return [...byId.values()];
  }

  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const response = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        // Lambda hands the function every system and message attribute.
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const messages = response.Messages ?? [];
    if (messages.length > 0) {
      try {
        this.options.onReceive?.(messages.map((m) => m.MessageId as string));
      } catch (listenerError) {
        this.logger.warn('onReceive listener threw', { error: listenerError });
      }
    }
    return messages;
  }

  private async invoke(batch: Message[], identity: QueueIdentity, logStreamName: string): Promise<void> {
    const requestId = this.createRequestId();
    const messageIds = batch.map((m) => m.MessageId as string);
    const event: SQSEvent = {
      Records: batch.map((m) => toSqsRecord(m, { queueArn: identity.queueArn, region: identity.region })),
    };
    const startedAt = this.now();
    const timeoutMs = this.options.timeoutSeconds * 1000;
    const context = createLambdaContext({
      functionName: this.options.functionName ?? 'rerun-local',
      region: identity.region,
      accountId: identity.accountId,
      memoryLimitInMB: this.options.memoryLimitInMB ?? 128,
      awsRequestId: requestId,
      logStreamName,
      deadline: startedAt + timeoutMs,
      now: this.now,
    });

    this.running++;
    const settled = this.options.invoker
      ? await this.options.invoker
          .invoke({ event, requestId })
          .catch((invokeError: unknown): InvocationResult => ({ kind: 'threw', error: describeError(invokeError) }))
      : await this.invokeInProcess(this.options.handler as SqsLambdaHandler, event, context, timeoutMs);
    const durationMs = this.now() - startedAt;
    this.running--;

    let outcome: InvocationOutcome;
    let toDelete: readonly string[] = [];
    let error: string | undefined;
    if (settled.kind === 'timeout') {
      outcome = InvocationOutcome.TIMEOUT;
      error = settled.error;
    } else if (settled.kind === 'threw') {
      outcome = InvocationOutcome.ERROR;
      error = settled.error;
    } else {
      const response = asLambdaReceivesIt(settled.value);
      if (!response.ok) {
        outcome = InvocationOutcome.INVALID_RESPONSE;
        error = response.reason;
      } else {
        const verdict = interpretBatchResponse(response.value, messageIds);
        outcome = verdict.outcome;
        toDelete = verdict.delete;
        if (verdict.outcome === InvocationOutcome.INVALID_RESPONSE) error = verdict.reason;
      }
    }
    if (error !== undefined) {
      this.logger.warn('invocation failed: the whole batch returns after the visibility timeout', {
        requestId,
        outcome,
        error,
        messages: messageIds.length,
      });
    }

    const byId = new Map(batch.map((m) => [m.MessageId as string, m]));
    const { deleted, failures } = await this.deleteMessages(toDelete.map((id) => byId.get(id) as Message));
    const deletedSet = new Set(deleted);
    const report: InvocationReport = {
      requestId,
      messageIds,
      deleted,
      retained: messageIds.filter((id) => !deletedSet.has(id)),
      outcome,
      durationMs,
    };
    if (error !== undefined) report.error = error;
    if (failures.length > 0) report.deleteFailures = failures;
    try {
      this.options.onInvocation?.(report);
    } catch (listenerError) {
      this.logger.warn('onInvocation listener threw', { error: listenerError });
    }
  }

  /**
   * Calls the handler in this process, racing its timeout. A timed-out handler keeps running here
   * (a real sandbox would be frozen and discarded): its late result is ignored and logged.
   */
  private async invokeInProcess(
    handler: SqsLambdaHandler,
    event: SQSEvent,
    context: Context,
    timeoutMs: number,
  ): Promise<InvocationResult> {
    const handlerPromise: Promise<InvocationResult> = (async () => handler(event, context))().then(
      (value) => ({ kind: 'returned', value }),
      (error: unknown) => ({ kind: 'threw', error: describeError(error) }),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<InvocationResult>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({ kind: 'timeout', error: `Task timed out after ${this.options.timeoutSeconds.toFixed(2)} seconds` }),
        timeoutMs,
      );
    });
    const settled = await Promise.race([handlerPromise, timeout]);
    clearTimeout(timer);
    if (settled.kind === 'timeout') {
      this.abandoned++;
      void handlerPromise.then((late) => {
        this.abandoned--;
        this.logger.warn('a timed-out invocation settled late; its result is ignored', {
          requestId: context.awsRequestId,
          result: late.kind === 'threw' ? late.error : 'returned',
        });
      });
    }
    return settled;
  }

  /** DeleteMessageBatch takes at most 10 entries; entries can fail one by one. */
  private async deleteMessages(
    messages: Message[],
  ): Promise<{ deleted: string[]; failures: { messageId: string; code: string; message: string }[] }> {
    const deleted: string[] = [];
    const failures: { messageId: string; code: string; message: string }[] = [];
    for (let start = 0; start < messages.length; start += 10) {
      let pending = messages.slice(start, start + 10);
      // Retry entries SQS reports as its own fault (SenderFault false) once; a sender fault (for
      // example an expired receipt handle) cannot succeed on retry: the message comes back instead.
      for (let attempt = 1; attempt <= 2 && pending.length > 0; attempt++) {
        const entries = pending.map((m, i) => ({ Id: `m${i}`, ReceiptHandle: m.ReceiptHandle as string }));
        const retry: Message[] = [];
        try {
          const response = await this.options.sqs.send(
            new DeleteMessageBatchCommand({ QueueUrl: this.options.queueUrl, Entries: entries }),
          );
          for (const ok of response.Successful ?? []) {
            const message = pending[Number(ok.Id?.slice(1))];
            if (message?.MessageId) deleted.push(message.MessageId);
          }
          for (const failed of response.Failed ?? []) {
            const message = pending[Number(failed.Id?.slice(1))];
            if (!message?.MessageId) continue;
            if (!failed.SenderFault && attempt < 2) retry.push(message);
            else
              failures.push({
                messageId: message.MessageId,
                code: failed.Code ?? 'Unknown',
                message: failed.Message ?? '',
              });
          }
        } catch (error) {
          if (attempt < 2) retry.push(...pending);
          else {
            for (const m of pending) {
              failures.push({ messageId: m.MessageId as string, code: 'RequestFailed', message: describeError(error) });
            }
          }
        }
        pending = retry;
      }
    }
    if (failures.length > 0) {
      this.logger.warn('some messages could not be deleted; they will be received again', { failures });
    }
    return { deleted, failures };
  }
}

/**
 * Checks the settings the way Lambda's CreateEventSourceMapping does, so a configuration that
 * works locally cannot be refused at deploy time.
 */
function validateRunnerOptions(o: LocalRunnerOptions): void {
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

/**
 * Lambda receives the function's result as JSON: what does not survive JSON.stringify (a circular
 * structure, a BigInt) fails the invocation, and class instances arrive as plain objects.
 */
function asLambdaReceivesIt(value: unknown): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    const json = JSON.stringify(value);
    return { ok: true, value: json === undefined ? null : JSON.parse(json) };
  } catch (error) {
    return { ok: false, reason: `the response cannot be serialised to JSON (${describeError(error)})` };
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
