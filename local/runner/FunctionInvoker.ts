import type { SQSEvent } from 'aws-lambda';

/** How one invocation of a function ended, as Lambda's event source mapping sees it. */
export type InvocationResult =
  /** The function returned; `value` is its response as Lambda receives it (parsed JSON, or null). */
  | { readonly kind: 'returned'; readonly value: unknown }
  /** The function threw, its promise rejected, or its runtime died: the whole batch fails. */
  | { readonly kind: 'threw'; readonly error: string }
  /** The function ran past its timeout: the whole batch fails, and no partial response exists. */
  | { readonly kind: 'timeout'; readonly error: string };

/** One invocation, as {@link FunctionInvoker.invoke} receives it. */
export interface InvocationRequest {
  /** The event Lambda's SQS event source mapping would send. */
  readonly event: SQSEvent;
  /** Unique per invocation (`context.awsRequestId`). */
  readonly requestId: string;
}

/**
 * Runs a function somewhere other than the runner's own process, e.g. in a child process under the
 * AWS Lambda Runtime Interface Emulator (`LambdaRuntimePool`). The invoker owns the function's
 * settings (timeout, memory, environment) and enforces its timeout itself, as Lambda does; the
 * runner only interprets the result with `ReportBatchItemFailures` semantics.
 *
 * @example
 * const invoker: FunctionInvoker = { invoke: async ({ event }) => ({ kind: 'returned', value: null }) };
 * new LocalRunner({ sqs, queueUrl, invoker, timeoutSeconds: 60, batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 4 });
 */
export interface FunctionInvoker {
  invoke(request: InvocationRequest): Promise<InvocationResult>;
}
