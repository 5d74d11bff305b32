/**
 * rerun's public API (`import ... from 'rerun-pipeline'`): what a worker of your own needs (define it,
 * wrap it in a handler, build its clients, key its outputs, read its environment, hook its outcomes
 * and notifications) and the errors those throw. The rest lives in subpaths: the dedupe ledger in
 * `rerun-pipeline/ledger`, logging and metrics in `rerun-pipeline/observability`, the reference
 * normalizer in `rerun-pipeline/normalize`, the constructs (and their errors) in `rerun-pipeline/cdk`
 * and the local tooling in `rerun-pipeline/local`. test/unit/publicSurface.test.ts pins this list (at
 * most 40 runtime names).
 *
 * @example
 * import { createSqsBatchHandler, defineWorker, deterministicKey, S3ObjectStore } from 'rerun-pipeline';
 */

export { type AwsClientOptions, type AwsClients, createAwsClients } from './aws/clients.js';
export { type CheckEndpointOptions, checkEndpoint, EndpointUnusableError } from './aws/endpointPreflight.js';
export {
  BatchOperationsEventError,
  type BatchOperationsHandlerOptions,
  createBatchOperationsHandler,
} from './batch/createBatchOperationsHandler.js';
export {
  type AfterOutputHook,
  type AfterOutputResult,
  createSqsBatchHandler,
  type SqsBatchHandlerOptions,
} from './batch/createSqsBatchHandler.js';
export type { MemoryBudget, ReleaseMemory } from './batch/MemoryBudget.js';
export {
  type Judgement,
  judgeOutput,
  type OutputExpectation,
  type OutputHead,
  type OutputState,
} from './done/judgeOutput.js';
export type { SourceIdentity } from './done/outputMetadata.js';
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
export type { FailureRecord, GiveUpReason } from './failures/failureRecord.js';
export { S3FailureRecorder, type S3FailureRecorderOptions } from './failures/S3FailureRecorder.js';
export {
  type BatchOperationsEvent,
  type BatchOperationsResponse,
  type BatchOperationsResultCode,
  type BatchOperationsSchema,
  type BatchOperationsTask,
  type BatchOperationsTaskResult,
  encodeManifestKey,
  type ParsedBatchOperationsEvent,
  type ParsedBatchOperationsTask,
  parseBatchOperationsEvent,
} from './intake/parseBatchOperationsEvent.js';
export {
  decodeS3EventKey,
  type IntakeResult,
  parseS3EventBody,
  type S3ObjectEvent,
} from './intake/parseS3Event.js';
export { type DeterministicKeyOptions, deterministicKey } from './keys/deterministicKey.js';
export type { Logger } from './logging/logger.js';
export { type NotifyAfterOutputOptions, notifyAfterOutput } from './notify/notifyAfterOutput.js';
export {
  type NotifyWebhookOptions,
  notifyWebhook,
  WebhookDeliveryError,
  type WebhookResponse,
} from './notify/notifyWebhook.js';
export { OutputNotificationInputError } from './notify/outputNotification.js';
export { OutputWriter, type OutputWriterOptions } from './publish/OutputWriter.js';
export type { ConflictRetryPolicy } from './s3/conflictRetry.js';
export {
  S3AccessDeniedError,
  S3BucketMissingError,
  S3BucketNameInvalidError,
  type S3Operation,
  type S3Target,
} from './s3/errors.js';
export {
  type DeleteStatus,
  type GetResult,
  S3ObjectStore,
  type WriteCondition,
  type WriteResult,
  type WriteStatus,
} from './s3/S3ObjectStore.js';
export type { S3ObjectStoreOptions, S3PutOptions } from './s3/s3ObjectStoreOptions.js';
export type { FirstRunObject, FirstRunPath, FirstRunPolicy } from './worker/adaptiveFirstRun.js';
export {
  defineWorker,
  type FirstRun,
  type OutputStream,
  type TransformInput,
  type TransformOutputs,
  type WorkerDefinition,
  type WorkerDefinitionInput,
} from './worker/defineWorker.js';
export {
  type CoveredInput,
  type OutcomeHook,
  type OutcomeHookContext,
  onRecordOutcome,
  type RecordOutcome,
  RecordStatus,
} from './worker/outcomes.js';
export {
  type ObjectOutcome,
  type OutputDescription,
  processObject,
} from './worker/processObject.js';
export type { ProcessObjectOptions, TransformAdmission } from './worker/processObjectOptions.js';
export type { ReadDeadline } from './worker/readGuard.js';
export { decodeText, splitLines } from './worker/textHelpers.js';
export { createTransformInput } from './worker/transformInput.js';
