/**
 * Lambda entry point of the normalize worker (SQS event source mapping with ReportBatchItemFailures).
 * Everything is built once per container, at module scope; the handler only delegates.
 *
 * Environment: OUTPUT_BUCKET (required; also holds the failures/ records of given-up messages);
 * INPUT_BUCKETS (the buckets it reads, comma-separated: an event naming another is refused);
 * LEDGER_TABLE and NOTIFY_URL (together: notify a webhook once per output content); CODE_VERSION_PREFIX
 * (record when this code version first ran, see src/worker/codeVersionMarker.ts); MAX_INPUT_BYTES
 * (the largest input one invocation finishes; the stack sets it); MAX_RECEIVE_COUNT (the queue's
 * redrive count, set by the stack: without it the first item of each sandbox reads it from the
 * queue, GetQueueUrl and GetQueueAttributes, before its own requests); LOG_LEVEL;
 * RERUN_TRACE_AWS_SDK (trace the AWS SDK calls with X-Ray); AWS_ENDPOINT_URL (emulators).
 */

import { createAwsClients } from '../../src/aws/clients.js';
import { traceAwsClients } from '../../src/aws/traceAwsClients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { optionalEnv, optionalIntegerEnv, requireEnv } from '../../src/env.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import type { Ledger } from '../../src/ledger/Ledger.js';
import { createLogger } from '../../src/logging/logger.js';
import { emfOutcomeMetrics } from '../../src/metrics/emfOutcomeMetrics.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from '../../src/normalize/normalizeWorker.js';
import { notifyAfterOutput } from '../../src/notify/notifyAfterOutput.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { inputBucketsFrom } from '../../src/worker/inputScope.js';

const logger = createLogger({
  fields: { service: 'rerun-normalize' },
});
// The SDK's own warnings go through the same logger (the SDK would otherwise write to the console).
const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL, logger });
// With X-Ray tracing on (SqsWorker sets RERUN_TRACE_AWS_SDK), each AWS call is a subsegment of the
// trace. The X-Ray SDK is loaded here and only here: a function without tracing never loads it.
const tracing = process.env.RERUN_TRACE_AWS_SDK === 'true';
if (tracing) await traceAwsClients(clients);
const notifyUrl = optionalEnv('NOTIFY_URL', '');
// A webhook without its ledger would be sent on every rerun: refuse to start rather than do that.
const ledgerTable = notifyUrl
  ? requireEnv(
      'LEDGER_TABLE',
      process.env,
      "NOTIFY_URL needs the dedupe ledger: RerunPipeline's `webhook` sets both (or give it `ledger: true`).",
    )
  : '';

// The ledger (the DynamoDB client, its commands) is loaded only by a function that has one: one
// without a webhook neither loads nor builds it, so its first item sends only its own requests.
const ledger = notifyUrl ? await dedupeLedger(ledgerTable) : undefined;

const outputBucket = requireEnv('OUTPUT_BUCKET');
const inputBuckets = inputBucketsFrom(optionalEnv('INPUT_BUCKETS', ''));
const codeVersionPrefix = optionalEnv('CODE_VERSION_PREFIX', '');
// The largest input one invocation finishes (the stack derives it from memory, timeout and the
// measured throughput); a larger one is refused at once instead of timing out until the DLQ.
const maxInputBytes = optionalEnv('MAX_INPUT_BYTES', '');
// The queue's maxReceiveCount (SqsWorker sets it from the redrive policy it creates): the failure
// recorder then knows a message's last receive without asking SQS on a cold start.
const maxReceiveCount = optionalIntegerEnv('MAX_RECEIVE_COUNT', { min: 1, max: 1000 });
// Where RerunPipeline lets it write its failure records (its `failurePrefix`); failures/ when unset.
const failurePrefix = optionalEnv('FAILURE_PREFIX', '');
const store = new S3ObjectStore(clients.s3);

export const handler = createSqsBatchHandler({
  worker: createNormalizeWorker({ outputBucket, ...(inputBuckets ? { inputBuckets } : {}) }),
  store,
  sqs: clients.sqs,
  logger,
  ...(maxInputBytes ? { maxInputBytes: Number(maxInputBytes) } : {}),
  // In Lambda (whose stdout is the function's log): outcome counts (processed, skipped, failed,
  // quarantined, ...) as CloudWatch metrics, namespace rerun, dimension Worker, one embedded-metric-
  // format line per invocation, no API call. Not under rerun dev, whose stdout is its own protocol.
  ...(process.env.AWS_LAMBDA_FUNCTION_NAME ? { onOutcome: emfOutcomeMetrics() } : {}),
  // Why a message was given up on, at failures/<queue>/<messageId>.json, for `rerun redrive`.
  failureRecorder: new S3FailureRecorder({
    store,
    sqs: clients.sqs,
    bucket: outputBucket,
    ...(failurePrefix ? { prefix: failurePrefix } : {}),
    logger,
    ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
  }),
  // When this code version first ran, for `rerun reprocess` to find older code's outputs by listing
  // (the stack and rerun dev set CODE_VERSION_PREFIX; without it no marker is written).
  ...(codeVersionPrefix ? { codeVersionMarker: { bucket: outputBucket, prefix: codeVersionPrefix } } : {}),
  ...(ledger
    ? {
        afterOutput: notifyAfterOutput({
          ledger,
          url: notifyUrl,
          codeVersion: NORMALIZE_CODE_VERSION,
        }),
      }
    : {}),
});

/**
 * The dedupe ledger over `tableName`, its DynamoDB client built with the S3 and SQS clients'
 * options (and traced like them). Its modules are imported here, on a ledger's first use.
 */
async function dedupeLedger(tableName: string): Promise<Ledger> {
  const [{ createDynamoDBClient }, { DynamoDBLedger }] = await Promise.all([
    import('../../src/ledger/createDynamoDBClient.js'),
    import('../../src/ledger/DynamoDBLedger.js'),
  ]);
  const dynamodb = createDynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL, logger });
  if (tracing) await traceAwsClients({ dynamodb });
  return new DynamoDBLedger({ client: dynamodb, tableName, logger });
}
