/**
 * Lambda entry point of the normalize worker (SQS event source mapping with ReportBatchItemFailures).
 * Everything is built once per container, at module scope; the handler only delegates.
 *
 * Environment: OUTPUT_BUCKET (required); LEDGER_TABLE and NOTIFY_URL (together: notify a webhook
 * once per output content); LOG_LEVEL; AWS_ENDPOINT_URL (emulators).
 */
import { createAwsClients } from '../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { notifyAfterOutput } from '../../src/effects/notifyAfterOutput.js';
import { optionalEnv, requireEnv } from '../../src/env.js';
import { DynamoDBLedger } from '../../src/ledger/DynamoDBLedger.js';
import { createLogger, type LogLevel } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { createNormalizeWorker, NORMALIZE_CODE_VERSION } from './normalizeWorker.js';

const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
const logger = createLogger({
  level: optionalEnv('LOG_LEVEL', 'info') as LogLevel,
  fields: { service: 'rerun-normalize' },
});
const ledgerTable = optionalEnv('LEDGER_TABLE', '');
const notifyUrl = optionalEnv('NOTIFY_URL', '');
if (Boolean(ledgerTable) !== Boolean(notifyUrl)) {
  // One without the other is a half-configured side effect: refuse to start rather than skip it.
  requireEnv(ledgerTable ? 'NOTIFY_URL' : 'LEDGER_TABLE', process.env, 'Set LEDGER_TABLE and NOTIFY_URL together.');
}

export const handler = createSqsBatchHandler({
  worker: createNormalizeWorker({ outputBucket: requireEnv('OUTPUT_BUCKET') }),
  store: new S3ObjectStore(clients.s3),
  sqs: clients.sqs,
  logger,
  ...(ledgerTable && notifyUrl
    ? {
        afterOutput: notifyAfterOutput({
          ledger: new DynamoDBLedger({ client: clients.dynamodb, tableName: ledgerTable, logger }),
          url: notifyUrl,
          codeVersion: NORMALIZE_CODE_VERSION,
        }),
      }
    : {}),
});
