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
export { EventParseError, PublishConflictError, RerunError, WorkerConfigurationError } from './errors.js';
export { decodeS3EventKey, IntakeKind, parseS3EventBody, type S3ObjectEvent } from './intake/parseS3Event.js';
export { deterministicKey } from './keys/deterministicKey.js';
export { createLedgerTable } from './ledger/createLedgerTable.js';
export { DynamoDBLedger } from './ledger/DynamoDBLedger.js';
export type { Ledger } from './ledger/Ledger.js';
export { createLogger, type Logger, silentLogger } from './logging/logger.js';
export { notifyAfterOutput } from './notify/notifyAfterOutput.js';
export { notifyWebhook } from './notify/notifyWebhook.js';
export { OutputWriter } from './publish/OutputWriter.js';
export { S3AccessDeniedError, S3BucketMissingError, S3BucketNameInvalidError } from './s3/errors.js';
export { S3ObjectStore, type WriteCondition, WriteStatus } from './s3/S3ObjectStore.js';
export { defineWorker, type TransformInput, type WorkerDefinition } from './worker/defineWorker.js';
export { onRecordOutcome, type RecordOutcome, RecordStatus } from './worker/outcomes.js';
export { processObject } from './worker/processObject.js';
export { decodeText, splitLines } from './worker/textHelpers.js';
export { createTransformInput } from './worker/transformInput.js';
