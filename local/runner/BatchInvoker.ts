import type { Message } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Logger } from '../../src/logging/logger.js';
import { InvocationOutcome, interpretBatchResponse } from './batchResponse.js';
import { describeError } from './describeError.js';
import type { FunctionInvoker, InvocationResult } from './FunctionInvoker.js';
import { createLambdaContext } from './lambdaContext.js';
import type { QueueIdentity } from './queueIdentity.js';
import { toSqsRecord } from './sqsRecord.js';

/** An SQS-triggered Lambda handler, as the runner calls it. */
// biome-ignore lint/suspicious/noConfusingVoidType: matches aws-lambda's SQSHandler result (a handler may return nothing).
export type SqsLambdaHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/** Options of {@link BatchInvoker}: the function's half of the runner's settings. */
export interface BatchInvokerOptions {
  /** The function in this process; exactly one of `handler` and `invoker`. */
  readonly handler?: SqsLambdaHandler | undefined;
  /** The function elsewhere, which enforces its timeout itself. */
  readonly invoker?: FunctionInvoker | undefined;
  /** @default 'rerun-local' */
  readonly functionName?: string | undefined;
  readonly timeoutSeconds: number;
  /** @default 128 */
  readonly memoryLimitInMB?: number | undefined;
  readonly now: () => number;
  readonly createRequestId: () => string;
  readonly logger: Logger;
}

/** How an invocation of one batch settled, and which of its messages to delete. */
export interface SettledInvocation {
  readonly requestId: string;
  /** Ids of every message in the batch, in receive order. */
  readonly messageIds: string[];
  readonly outcome: InvocationOutcome;
  /** Ids of the messages the function did not report as failed. */
  readonly toDelete: readonly string[];
  /** From invoke to settled (on the `now` clock). */
  readonly durationMs: number;
  /** The handler's error, the invalid-response reason, or the timeout. */
  readonly error?: string;
}

/**
 * The invoker: runs the function on one batch as Lambda's event source mapping does (faithful
 * `SQSEvent` records, a Lambda `Context` counting down from the timeout), enforces the timeout of an
 * in-process handler, and reads the result with `ReportBatchItemFailures` semantics: a thrown error,
 * an invalid response or a timeout fails the whole batch.
 *
 * @example
 * const invoker = new BatchInvoker({ handler, timeoutSeconds: 60, now: Date.now, createRequestId: randomUUID, logger });
 * const verdict = await invoker.invoke(batch, identity, logStreamName);
 */
export class BatchInvoker {
  /** Invocations running now (timed-out ones excluded). */
  running = 0;
  /** Timed-out invocations whose promise has not settled yet. */
  abandoned = 0;

  constructor(private readonly options: BatchInvokerOptions) {}

  async invoke(batch: readonly Message[], identity: QueueIdentity, logStreamName: string): Promise<SettledInvocation> {
    const { options } = this;
    const requestId = options.createRequestId();
    const messageIds = batch.map((m) => m.MessageId as string);
    const event: SQSEvent = {
      Records: batch.map((m) => toSqsRecord(m, { queueArn: identity.queueArn, region: identity.region })),
    };
    const startedAt = options.now();
    const timeoutMs = options.timeoutSeconds * 1000;
    const context = createLambdaContext({
      functionName: options.functionName ?? 'rerun-local',
      region: identity.region,
      accountId: identity.accountId,
      memoryLimitInMB: options.memoryLimitInMB ?? 128,
      awsRequestId: requestId,
      logStreamName,
      deadline: startedAt + timeoutMs,
      now: options.now,
    });

    this.running++;
    const settled = options.invoker
      ? await options.invoker
          .invoke({ event, requestId })
          .catch((invokeError: unknown): InvocationResult => ({ kind: 'threw', error: describeError(invokeError) }))
      : await this.invokeInProcess(options.handler as SqsLambdaHandler, event, context, timeoutMs);
    const durationMs = options.now() - startedAt;
    this.running--;

    const verdict = verdictOf(settled, messageIds);
    if (verdict.error !== undefined) {
      options.logger.warn('invocation failed: the whole batch returns after the visibility timeout', {
        requestId,
        outcome: verdict.outcome,
        error: verdict.error,
        messages: messageIds.length,
      });
    }
    return { requestId, messageIds, durationMs, ...verdict };
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
        this.options.logger.warn('a timed-out invocation settled late; its result is ignored', {
          requestId: context.awsRequestId,
          result: late.kind === 'threw' ? late.error : 'returned',
        });
      });
    }
    return settled;
  }
}

/** The outcome of a settled invocation, which messages it deletes, and why it failed if it did. */
function verdictOf(
  settled: InvocationResult,
  messageIds: readonly string[],
): { outcome: InvocationOutcome; toDelete: readonly string[]; error?: string } {
  if (settled.kind === 'timeout') return { outcome: InvocationOutcome.TIMEOUT, toDelete: [], error: settled.error };
  if (settled.kind === 'threw') return { outcome: InvocationOutcome.ERROR, toDelete: [], error: settled.error };
  const response = asLambdaReceivesIt(settled.value);
  if (!response.ok) return { outcome: InvocationOutcome.INVALID_RESPONSE, toDelete: [], error: response.reason };
  const verdict = interpretBatchResponse(response.value, messageIds);
  if (verdict.outcome === InvocationOutcome.INVALID_RESPONSE) {
    return { outcome: verdict.outcome, toDelete: verdict.delete, error: verdict.reason };
  }
  return { outcome: verdict.outcome, toDelete: verdict.delete };
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
