/**
 * rerun's public API (`import ... from 'rerun-pipeline'`): everything a worker of your own needs, and every
 * error class the library throws. The dedupe ledger is also in `rerun-pipeline/ledger`, the reference
 * normalizer in `rerun-pipeline/normalize`, the constructs in `rerun-pipeline/cdk` and the local tooling in `rerun-pipeline/local`.
 *
 * @example
 * import { createSqsBatchHandler, defineWorker, deterministicKey, S3ObjectStore } from 'rerun-pipeline';
 */

export { type AwsClientOptions, type AwsClients, createAwsClients } from './aws/clients.js';
export { type CheckEndpointOptions, checkEndpoint, EndpointUnusableError } from './aws/endpointPreflight.js';
export {
  BatchOperationsEventError,
  type BatchOperationsHandlerOptions,
  batchOperationsFailureSource,
  createBatchOperationsHandler,
  taskResult,
} from './batch/createBatchOperationsHandler.js';
export {
  type AfterOutputHook,
  type AfterOutputResult,
  createSqsBatchHandler,
  type SqsBatchHandlerOptions,
} from './batch/createSqsBatchHandler.js';
export {
  ReferenceWorkerBundleMissingError,
  StackConfigurationInvalidError,
  WorkerBundleUnusableError,
} from './cdk/errors.js';
export {
  type Judgement,
  judgeOutput,
  type OutputExpectation,
  type OutputHead,
  OutputState,
} from './done/judgeOutput.js';
export { buildOutputMetadata, MetadataKey, readSummary, type SourceIdentity } from './done/outputMetadata.js';
export { MissingEnvironmentVariableError, optionalEnv, requireEnv } from './env.js';
export {
  DeadlineNearError,
  EventParseError,
  FullBatchFailureError,
  InputTooLargeError,
  OutputKeyOutsidePrefixesError,
  PublishConflictError,
  RerunError,
  WorkerConfigurationError,
} from './errors.js';
export type { FailedDelivery, FailureRecorder, StartedDelivery, StartedRecord } from './failures/FailureRecorder.js';
export { S3FailureRecorder, type S3FailureRecorderOptions } from './failures/S3FailureRecorder.js';
export {
  type BatchOperationsEvent,
  type BatchOperationsResponse,
  BatchOperationsResultCode,
  BatchOperationsSchema,
  type BatchOperationsTask,
  type BatchOperationsTaskResult,
  encodeManifestKey,
  type ParsedBatchOperationsEvent,
  type ParsedBatchOperationsTask,
  parseBatchOperationsEvent,
} from './intake/parseBatchOperationsEvent.js';
export { decodeS3EventKey, IntakeKind, parseS3EventBody, type S3ObjectEvent } from './intake/parseS3Event.js';
export { type DeterministicKeyOptions, deterministicKey } from './keys/deterministicKey.js';
export { PartitionWindowInvalidError } from './keys/partition.js';
export { createLedgerTable } from './ledger/createLedgerTable.js';
export { DynamoDBLedger, type DynamoDBLedgerOptions } from './ledger/DynamoDBLedger.js';
export {
  LedgerConfigurationError,
  LedgerInProgressError,
  LedgerLeaseLostError,
  LedgerPayloadMismatchError,
  LedgerRecordCorruptError,
  LedgerResultUnstorableError,
  LedgerStoredFailureError,
} from './ledger/errors.js';
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
export { type NotifyAfterOutputOptions, notifyAfterOutput } from './notify/notifyAfterOutput.js';
export {
  type NotifyWebhookOptions,
  notifyWebhook,
  WebhookDeliveryError,
  type WebhookResponse,
} from './notify/notifyWebhook.js';
export { OutputNotificationInputError } from './notify/outputNotification.js';
export { OutputWriter, type OutputWriterOptions } from './publish/OutputWriter.js';
export { S3AccessDeniedError, S3BucketMissingError, S3BucketNameInvalidError } from './s3/errors.js';
export {
  DeleteStatus,
  type GetResult,
  S3ObjectStore,
  type WriteCondition,
  type WriteResult,
  WriteStatus,
} from './s3/S3ObjectStore.js';
export {
  defineWorker,
  type OutputStream,
  type TransformInput,
  type TransformOutputs,
  type WorkerDefinition,
} from './worker/defineWorker.js';
export {
  type OutcomeHook,
  type OutcomeHookContext,
  onRecordOutcome,
  type RecordOutcome,
  RecordStatus,
} from './worker/outcomes.js';
export {
  type ObjectOutcome,
  type OutputDescription,
  type ProcessObjectOptions,
  processObject,
} from './worker/processObject.js';
export { decodeText, splitLines } from './worker/textHelpers.js';
export { createTransformInput } from './worker/transformInput.js';
