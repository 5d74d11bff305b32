/**
 * Lambda entry point of the normalize worker for S3 Batch Operations jobs (`LambdaInvoke`, the
 * function `rerun reprocess --engine batch-operations` names in CreateJob). The same worker as the
 * SQS handler (functions/normalize/handler.ts), built once per container at module scope.
 *
 * Environment: OUTPUT_BUCKET (required; also holds the failure records of permanent failures);
 * INPUT_BUCKETS (the buckets it reads, comma-separated: a task naming another is refused);
 * MAX_INPUT_BYTES (the largest input one invocation finishes); LOG_LEVEL; AWS_ENDPOINT_URL (emulators).
 * No webhook here: a job's task runs processObject only, and a changed output's webhook goes out when
 * the SQS worker next handles that input's events.
 */
import { createAwsClients } from '../../src/aws/clients.js';
import { createBatchOperationsHandler } from '../../src/batch/createBatchOperationsHandler.js';
import { optionalEnv, requireEnv } from '../../src/env.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { createLogger } from '../../src/logging/logger.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { inputBucketsFrom } from '../../src/worker/inputScope.js';

const logger = createLogger({
  fields: { service: 'rerun-normalize-batch-operations' },
});
const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL, logger });
const outputBucket = requireEnv('OUTPUT_BUCKET');
const inputBuckets = inputBucketsFrom(optionalEnv('INPUT_BUCKETS', ''));
const maxInputBytes = optionalEnv('MAX_INPUT_BYTES', '');
const store = new S3ObjectStore(clients.s3);

export const handler = createBatchOperationsHandler({
  worker: createNormalizeWorker({ outputBucket, ...(inputBuckets ? { inputBuckets } : {}) }),
  store,
  logger,
  ...(maxInputBytes ? { maxInputBytes: Number(maxInputBytes) } : {}),
  // Why a task failed permanently, at failures/s3-batch-job-<jobId>/<task>.json (no SQS call for a job).
  failureRecorder: new S3FailureRecorder({ store, sqs: clients.sqs, bucket: outputBucket, logger }),
});
