/**
 * Lambda entry point of the summarize worker (SQS FIFO event source mapping with
 * ReportBatchItemFailures). Everything is built once per container, at module scope.
 *
 * Environment: OUTPUT_BUCKET (required: lineage, summaries, failures/ records); INPUT_BUCKET
 * (required: the input bucket whose normalized outputs are summarized, and whose inputs each
 * summary's coverage record is listed from); MAX_RECEIVE_COUNT (the queue's redrive count, set by
 * the stack: without it a cold sandbox asks the queue before its first task); LOG_LEVEL; RERUN_TRACE_AWS_SDK (trace the AWS SDK
 * calls with X-Ray); AWS_ENDPOINT_URL (emulators).
 */

import { createSummarizeHandler } from '../../app/partition/createSummarizeHandler.js';
import { referenceInputRules } from '../../app/partition/referenceInputRules.js';
import { createAwsClients } from '../../src/aws/clients.js';
import { traceAwsClients } from '../../src/aws/traceAwsClients.js';
import { optionalIntegerEnv, requireEnv } from '../../src/env.js';
import { createLogger } from '../../src/logging/logger.js';
import { emfOutcomeMetrics } from '../../src/metrics/emfOutcomeMetrics.js';

const logger = createLogger({
  fields: { service: 'rerun-summarize' },
});
// The SDK's own warnings go through the same logger (the SDK would otherwise write to the console).
const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL, logger });
// With X-Ray tracing on (SqsWorker sets RERUN_TRACE_AWS_SDK), each AWS call is a subsegment of the trace.
if (process.env.RERUN_TRACE_AWS_SDK === 'true') await traceAwsClients(clients);

const outputBucket = requireEnv('OUTPUT_BUCKET');
const inputBucket = requireEnv('INPUT_BUCKET');
const maxReceiveCount = optionalIntegerEnv('MAX_RECEIVE_COUNT', { min: 1, max: 1000 });

export const handler = createSummarizeHandler({
  clients,
  outputBucket,
  inputBucket,
  ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
  // Each summary records which inputs of its day it covers and which it does not.
  inputs: referenceInputRules({ inputBucket }),
  logger,
  // In Lambda: task outcome counts (processed, skipped, failed) as CloudWatch metrics, namespace
  // rerun, dimension Worker, one embedded-metric-format line per invocation (as normalize writes).
  ...(process.env.AWS_LAMBDA_FUNCTION_NAME ? { onOutcome: emfOutcomeMetrics() } : {}),
});
