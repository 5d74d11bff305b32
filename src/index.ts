/**
 * rerun's public API: everything a worker of your own needs.
 *
 * @example
 * import { createSqsBatchHandler, defineWorker, deterministicKey, S3ObjectStore } from './src/index.js';
 */

export { type AwsClients, createAwsClients } from './aws/clients.js';
export {
  type AfterOutputHook,
  createSqsBatchHandler,
  type SqsBatchHandlerOptions,
} from './batch/createSqsBatchHandler.js';
export { mapWithConcurrency } from './batch/mapWithConcurrency.js';
export { judgeOutput, type OutputHead, OutputState } from './done/judgeOutput.js';
export { buildOutputMetadata, MetadataKey, readSummary, type SourceIdentity } from './done/outputMetadata.js';
export { optionalEnv, requireEnv } from './env.js';
export {
  EventParseError,
  FullBatchFailureError,
  PublishConflictError,
  RerunError,
  WorkerConfigurationError,
} from './errors.js';
export { decodeS3EventKey, IntakeKind, parseS3EventBody, type S3ObjectEvent } from './intake/parseS3Event.js';
export { deterministicKey } from './keys/deterministicKey.js';
export { createLedgerTable } from './ledger/createLedgerTable.js';
export { DynamoDBLedger } from './ledger/DynamoDBLedger.js';
export type { Ledger } from './ledger/Ledger.js';
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
export { notifyAfterOutput } from './notify/notifyAfterOutput.js';
export { notifyWebhook } from './notify/notifyWebhook.js';
export { OutputWriter } from './publish/OutputWriter.js';
export { S3AccessDeniedError, S3BucketMissingError, S3BucketNameInvalidError } from './s3/errors.js';
export { S3ObjectStore, type WriteCondition, WriteStatus } from './s3/S3ObjectStore.js';
export { defineWorker, type TransformInput, type WorkerDefinition } from './worker/defineWorker.js';
export {
  type OutcomeHook,
  type OutcomeHookContext,
  onRecordOutcome,
  type RecordOutcome,
  RecordStatus,
} from './worker/outcomes.js';
export { processObject } from './worker/processObject.js';
export { decodeText, splitLines } from './worker/textHelpers.js';
export { createTransformInput } from './worker/transformInput.js';
