import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { topology } from '../../app/topology.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { formatOfKey, normalizeRecords } from '../../src/normalize/normalizeRecords.js';

/** Options of {@link createPowertoolsNormalizeHandler}. */
export interface PowertoolsNormalizeOptions {
  readonly s3: S3Client;
  readonly dynamodb: DynamoDBClient;
  readonly outputBucket: string;
  /** The idempotency table: partition key `id` (string), as Powertools' DynamoDB layer expects by default. */
  readonly idempotencyTable: string;
}

/** One object of an S3 event, the idempotent function's payload: its hash is the idempotency key. */
interface ObjectRef {
  readonly bucket: string;
  readonly key: string;
  readonly etag: string;
}

/**
 * The benchmark's baseline: the same normalize transform written the way the Powertools for AWS
 * Lambda documentation shows it. `makeIdempotent` with the DynamoDB persistence layer guards the
 * per-object work, keyed on bucket + key + ETag (the whole payload is hashed); `BatchProcessor` with
 * `processPartialResponse` reports partial batch failures. The output is written with a plain
 * PutObject to the same deterministic key rerun uses, so the two produce byte-identical outputs.
 *
 * What it does not do, by design of the approach: check the output itself. Once the idempotency
 * record says COMPLETED, a deleted or corrupted output stays that way until the record expires.
 *
 * @example
 * export const handler = createPowertoolsNormalizeHandler({ s3, dynamodb, outputBucket, idempotencyTable });
 */
export function createPowertoolsNormalizeHandler(
  options: PowertoolsNormalizeOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const { s3, outputBucket } = options;
  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: options.idempotencyTable,
    awsSdkV3Client: options.dynamodb,
  });
  const config = new IdempotencyConfig({});
  const processor = new BatchProcessor(EventType.SQS);

  const normalizeObject = makeIdempotent(
    async (object: ObjectRef): Promise<{ records: number; quarantined: number }> => {
      const format = formatOfKey(object.key);
      if (!format) return { records: 0, quarantined: 0 };
      const input = await s3.send(new GetObjectCommand({ Bucket: object.bucket, Key: object.key }));
      const lines: string[] = [];
      const bad: string[] = [];
      const result = await normalizeRecords(input.Body as AsyncIterable<Uint8Array>, format, {
        output: { write: (line) => void lines.push(line) },
        quarantine: { write: (line) => void bad.push(line) },
      });
      const keyOf = (prefix: string) =>
        deterministicKey({ prefix, source: object, stripPrefix: topology.inputPrefix, suffix: '.ndjson' });
      if (bad.length > 0) {
        await s3.send(
          new PutObjectCommand({
            Bucket: outputBucket,
            Key: keyOf(topology.quarantinePrefix),
            Body: `${bad.join('\n')}\n`,
            ContentType: 'application/x-ndjson',
          }),
        );
      }
      await s3.send(
        new PutObjectCommand({
          Bucket: outputBucket,
          Key: keyOf(topology.outputPrefix),
          Body: lines.length > 0 ? `${lines.join('\n')}\n` : '',
          ContentType: 'application/x-ndjson',
        }),
      );
      return { records: result.records, quarantined: result.quarantined };
    },
    { persistenceStore, config },
  );

  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const body = JSON.parse(record.body) as {
      Records?: { eventName?: string; s3?: { bucket?: { name?: string }; object?: { key?: string; eTag?: string } } }[];
    };
    for (const entry of body.Records ?? []) {
      if (!entry.eventName?.startsWith('ObjectCreated:')) continue;
      const bucket = entry.s3?.bucket?.name ?? '';
      // S3 event keys are form-encoded (space as '+').
      const key = decodeURIComponent((entry.s3?.object?.key ?? '').replace(/\+/g, ' '));
      if (!key.startsWith(topology.inputPrefix) || !formatOfKey(key)) continue;
      await normalizeObject({ bucket, key, etag: (entry.s3?.object?.eTag ?? '').replace(/"/g, '') });
    }
  };

  return async (event, context) => {
    config.registerLambdaContext(context);
    return processPartialResponse(event, recordHandler, processor, { context });
  };
}

/**
 * Creates the table Powertools' DynamoDBPersistenceLayer expects (partition key `id`, on demand).
 *
 * @example
 * await createIdempotencyTable(dynamodb, 'bench-idempotency');
 */
export async function createIdempotencyTable(dynamodb: DynamoDBClient, tableName: string): Promise<void> {
  await dynamodb.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );
}
