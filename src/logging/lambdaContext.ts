import type { Context } from 'aws-lambda';
import { optionalEnv } from '../env.js';
import type { FieldLogger, Logger } from './logger.js';
import { withFields } from './withFields.js';

/**
 * The Lambda context keys of a log line, named as the Powertools Logger names them, so that one
 * CloudWatch Logs Insights query reads rerun's lines and the rest of the function's alike.
 * A key whose value is unknown (a hand-made context in a test) is left out.
 */
export interface LambdaContextFields {
  readonly function_name?: string;
  readonly function_memory_size?: number;
  readonly function_arn?: string;
  readonly function_request_id?: string;
  /** The first invocation of this execution environment (see {@link createInvocationLogger}). */
  readonly cold_start: boolean;
  /** The Root of the invocation's X-Ray trace header, when there is one. */
  readonly xray_trace_id?: string;
}

/** What one invocation adds to the context: whether it is the cold start, and its X-Ray trace header. */
export interface InvocationFacts {
  readonly coldStart: boolean;
  /** `Root=1-...;Parent=...;Sampled=1`, as Lambda sets `_X_AMZN_TRACE_ID`. @default none */
  readonly traceHeader?: string | undefined;
}

/**
 * The Lambda context keys of an invocation's log lines. Pure.
 *
 * @example
 * lambdaContextFields({ functionName: 'normalize', memoryLimitInMB: '1024', awsRequestId: 'r-1' }, { coldStart: true });
 * // { function_name: 'normalize', function_memory_size: 1024, function_request_id: 'r-1', cold_start: true }
 */
export function lambdaContextFields(
  context: Partial<Pick<Context, 'functionName' | 'memoryLimitInMB' | 'invokedFunctionArn' | 'awsRequestId'>>,
  facts: InvocationFacts,
): LambdaContextFields {
  const memory = Number(context.memoryLimitInMB);
  const traceId = xrayTraceIdOf(facts.traceHeader);
  return {
    ...(context.functionName ? { function_name: context.functionName } : {}),
    // The Node.js runtime gives memoryLimitInMB as a string: a number is what a query compares.
    ...(context.memoryLimitInMB !== undefined && Number.isFinite(memory) ? { function_memory_size: memory } : {}),
    ...(context.invokedFunctionArn ? { function_arn: context.invokedFunctionArn } : {}),
    ...(context.awsRequestId ? { function_request_id: context.awsRequestId } : {}),
    cold_start: facts.coldStart,
    ...(traceId ? { xray_trace_id: traceId } : {}),
  };
}

/**
 * The trace id of an X-Ray trace header: its `Root` (a header without fields is the id itself).
 *
 * @example
 * xrayTraceIdOf('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=557abcec3ee5a047;Sampled=1'); // '1-5759e988-bd862e3fe1be46a994272793'
 */
export function xrayTraceIdOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  if (!header.includes('=')) return header;
  for (const field of header.split(';')) {
    const [key, value] = field.split('=');
    if (key?.trim() === 'Root' && value) return value.trim();
  }
  return undefined;
}

/** What {@link createInvocationLogger} reads from the execution environment. */
export interface LambdaEnvironment {
  /** The invocation's X-Ray trace header. */
  readonly traceHeader: () => string | undefined;
  /** `AWS_LAMBDA_INITIALIZATION_TYPE`: `on-demand`, `provisioned-concurrency`, `snap-start`, or unset (locally). */
  readonly initializationType: () => string | undefined;
}

/**
 * Lambda's own places: the trace header of the invocation (the runtime's per-invocation store when
 * an environment runs several invocations at once, else `_X_AMZN_TRACE_ID`, which the runtime sets
 * per invocation), and the initialization type.
 */
export const lambdaEnvironment: LambdaEnvironment = {
  traceHeader: () =>
    (
      globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId?: () => string | undefined } } }
    ).awslambda?.InvokeStore?.getXRayTraceId?.() ??
    (optionalEnv('_X_AMZN_TRACE_ID', '') || undefined),
  initializationType: () => optionalEnv('AWS_LAMBDA_INITIALIZATION_TYPE', '') || undefined,
};

/**
 * Makes each invocation's logger: a child of `logger` with the invocation's
 * {@link LambdaContextFields}. `cold_start` is true for the first invocation this function sees,
 * unless the environment was initialized ahead of it (provisioned concurrency, SnapStart), as the
 * Powertools Logger judges it. The batch handlers call it once per invocation.
 *
 * @example
 * const forInvocation = createInvocationLogger(logger);
 * export const handler = async (event: SQSEvent, context: Context) => {
 *   const log = forInvocation(context);
 *   log.info('batch received', { records: event.Records.length });
 * };
 */
export function createInvocationLogger(
  logger: Logger,
  environment: LambdaEnvironment = lambdaEnvironment,
): (context: Context) => FieldLogger {
  let first = true;
  return (context) => {
    const initializationType = environment.initializationType();
    const coldStart = first && (initializationType === undefined || initializationType === 'on-demand');
    first = false;
    return withFields(logger, {
      ...lambdaContextFields(context, { coldStart, traceHeader: environment.traceHeader() }),
    });
  };
}
