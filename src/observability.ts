/**
 * Logging and metrics (`import ... from 'rerun-pipeline/observability'`): the JSON-lines logger,
 * the adapters that fit pino, the Powertools Logger or `console` to it, the Lambda context fields
 * every line carries, and the outcome metrics (CloudWatch EMF lines or a Powertools Metrics).
 * One subpath for both, because a worker wires them together, into the same handler options
 * (`logger`, `onOutcome`), and neither is needed to write a worker: the handlers log JSON lines
 * on their own.
 *
 * @example
 * import { createSqsBatchHandler } from 'rerun-pipeline';
 * import { createLogger, emfOutcomeMetrics } from 'rerun-pipeline/observability';
 * export const handler = createSqsBatchHandler({
 *   worker, store, sqs,
 *   logger: createLogger({ level: 'info' }),
 *   onOutcome: emfOutcomeMetrics({ namespace: 'my-pipeline' }),
 * });
 */

export { type ConsoleLike, fromConsole } from './logging/fromConsole.js';
export { fromPino, type PinoLike, pinoLambdaOptions } from './logging/fromPino.js';
export { fromPowertoolsLogger, type PowertoolsLoggerLike } from './logging/fromPowertoolsLogger.js';
export {
  createInvocationLogger,
  type InvocationFacts,
  type LambdaContextFields,
  type LambdaEnvironment,
  lambdaContextFields,
  lambdaEnvironment,
  xrayTraceIdOf,
} from './logging/lambdaContext.js';
export {
  createLogger,
  describeError,
  type ErrorDescription,
  type FieldLogger,
  type Logger,
  type LoggerOptions,
  LogLevel,
  silentLogger,
} from './logging/logger.js';
export { type EmfDocument, type EmfMetric, formatEmfLine } from './metrics/emf.js';
export { type EmfOutcomeMetricsOptions, emfOutcomeMetrics } from './metrics/emfOutcomeMetrics.js';
export { addOutcome, type OutcomeCounts, OutcomeMetric, zeroOutcomeCounts } from './metrics/outcomeMetrics.js';
export {
  type PowertoolsMetricsLike,
  type PowertoolsOutcomeMetricsOptions,
  powertoolsOutcomeMetrics,
} from './metrics/powertoolsOutcomeMetrics.js';
