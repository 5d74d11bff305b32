/**
 * Lambda entry point of the normalize worker (SQS event source mapping with ReportBatchItemFailures).
 * Everything is built once per container, at module scope; the handler only delegates.
 */
import { createAwsClients } from '../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { optionalEnv, requireEnv } from '../../src/env.js';
import { createLogger, type LogLevel } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { createNormalizeWorker } from './normalizeWorker.js';

const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
const logger = createLogger({
  level: optionalEnv('LOG_LEVEL', 'info') as LogLevel,
  fields: { service: 'rerun-normalize' },
});

export const handler = createSqsBatchHandler({
  worker: createNormalizeWorker({ outputBucket: requireEnv('OUTPUT_BUCKET') }),
  store: new S3ObjectStore(clients.s3),
  sqs: clients.sqs,
  logger,
});
