import type { Context } from 'aws-lambda';

/** Inputs of {@link createLambdaContext}: everything is passed in, so tests can pin it. */
export interface LambdaContextInput {
  readonly functionName: string;
  readonly region: string;
  readonly accountId: string;
  /** Memory setting, reported as `memoryLimitInMB` (a string, as in Lambda). */
  readonly memoryLimitInMB: number;
  /** Unique per invocation. */
  readonly awsRequestId: string;
  /** Lambda's stream name for one execution environment, e.g. `2026/01/31/[$LATEST]0123...`. */
  readonly logStreamName: string;
  /** When the invocation's time budget ends, on the clock `now` reads. */
  readonly deadline: number;
  /** The clock `getRemainingTimeInMillis` reads (epoch milliseconds). */
  readonly now: () => number;
}

/**
 * Builds the `context` object Lambda's Node.js runtime passes to a handler.
 *
 * `getRemainingTimeInMillis()` counts down to the function timeout and never goes below 0. The
 * deprecated `done`/`fail`/`succeed` throw: rerun's handlers are async, and a local call that
 * silently did nothing would hide a bug that Lambda's Node.js 24 runtime (which removed callbacks)
 * would reveal.
 *
 * @example
 * const context = createLambdaContext({ functionName: 'rerun-local', region: 'us-east-1',
 *   accountId: '123456789012', memoryLimitInMB: 512, awsRequestId: randomUUID(),
 *   logStreamName: lambdaLogStreamName(new Date(), 'ab12...'), deadline: Date.now() + 60_000, now: Date.now });
 * context.getRemainingTimeInMillis(); // ~60000
 */
export function createLambdaContext(input: LambdaContextInput): Context {
  const unsupported = (name: string) => () => {
    throw new Error(
      `context.${name}() is not supported: return a value (or a promise) from the async handler instead ` +
        '(callback-style completion was removed from the Node.js 24 Lambda runtime).',
    );
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: input.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${input.region}:${input.accountId}:function:${input.functionName}`,
    memoryLimitInMB: String(input.memoryLimitInMB),
    awsRequestId: input.awsRequestId,
    logGroupName: `/aws/lambda/${input.functionName}`,
    logStreamName: input.logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, input.deadline - input.now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}

/**
 * Lambda's log stream name for an execution environment: `YYYY/MM/DD/[$LATEST]<32 hex>` (UTC date).
 *
 * @example
 * lambdaLogStreamName(new Date('2026-01-31T10:00:00Z'), '0'.repeat(32)); // '2026/01/31/[$LATEST]000...'
 */
export function lambdaLogStreamName(date: Date, hexId: string): string {
  const y = date.getUTCFullYear();
  const m = String(date.getUTCMonth() + 1).padStart(2, '0');
  const d = String(date.getUTCDate()).padStart(2, '0');
  return `${y}/${m}/${d}/[$LATEST]${hexId}`;
}
