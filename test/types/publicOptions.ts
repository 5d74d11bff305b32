/**
 * Compiled with `exactOptionalPropertyTypes` on (test/types/tsconfig.json, run by `npm run typecheck`):
 * the README's examples and what a user passes from the environment or from @types/aws-lambda type-check
 * under the strictest settings a user may have. Nothing here runs.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { S3EventRecord } from 'aws-lambda';
import {
  createAwsClients,
  createSqsBatchHandler,
  defineWorker,
  type S3ObjectEvent,
  S3ObjectStore,
} from 'rerun-pipeline';
import { createDynamoDBClient, DynamoDBLedger } from 'rerun-pipeline/ledger';
import { createLogger } from 'rerun-pipeline/observability';

// An environment variable is `string | undefined`: every option a user fills from one accepts that.
const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL, region: process.env.AWS_REGION });
const ledger = new DynamoDBLedger({
  client: createDynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL }),
  tableName: process.env.LEDGER_TABLE ?? 'rerun-ledger',
});
createLogger({ level: process.env.LOG_LEVEL === 'debug' ? 'debug' : undefined });

// An S3ObjectEvent built from @types/aws-lambda's record, whose versionId is `string | undefined`.
export function fromRecord(record: S3EventRecord): S3ObjectEvent {
  return {
    bucket: record.s3.bucket.name,
    key: record.s3.object.key,
    eventName: record.eventName,
    eTag: record.s3.object.eTag,
    size: record.s3.object.size,
    eventTime: record.eventTime,
    versionId: record.s3.object.versionId,
    sequencer: record.s3.object.sequencer,
  };
}

const worker = defineWorker({
  name: 'upper',
  codeVersion: 'upper@1',
  outputBucket: 'my-output',
  outputKey: (source) => `upper/${source.key}`,
  async transform({ text }, { output }) {
    for await (const chunk of text()) await output.write(chunk.toUpperCase());
    return {};
  },
});

// A Powertools Logger and `console` are loggers as they are (Logger.child is optional).
export const withPowertools = createSqsBatchHandler({
  worker,
  store: new S3ObjectStore(clients.s3),
  sqs: clients.sqs,
  logger: new PowertoolsLogger({ serviceName: 'upper' }),
});
export const withConsole = createSqsBatchHandler({
  worker,
  store: new S3ObjectStore(clients.s3),
  sqs: clients.sqs,
  logger: console,
});
export { ledger };

// The flag is on: an optional property that does not say `| undefined` refuses an environment variable.
// @ts-expect-error exactOptionalPropertyTypes
export const strict: { readonly name?: string } = { name: process.env.NAME };
