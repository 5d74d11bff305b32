/**
 * The cold-start floor: a handler that does an item's least work with the bare S3 client and nothing
 * else (no idempotency, no validation, no logging): GET the input, PUT it back under `bare/`. The
 * bench's `cold-start` section prints its import plus first item beside the normalize bundle's and the
 * Powertools baseline's.
 *
 * Environment: OUTPUT_BUCKET (required); AWS_ENDPOINT_URL (emulators).
 */

import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

const endpoint = process.env.AWS_ENDPOINT_URL;
const s3 = new S3Client({ ...(endpoint ? { endpoint, forcePathStyle: true } : {}) });

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  for (const record of event.Records) {
    const body = JSON.parse(record.body) as {
      Records?: { s3: { bucket: { name: string }; object: { key: string } } }[];
    };
    for (const entry of body.Records ?? []) {
      const key = decodeURIComponent(entry.s3.object.key.replace(/\+/g, ' '));
      const input = await s3.send(new GetObjectCommand({ Bucket: entry.s3.bucket.name, Key: key }));
      const text = (await input.Body?.transformToString()) ?? '';
      await s3.send(new PutObjectCommand({ Bucket: process.env.OUTPUT_BUCKET, Key: `bare/${key}`, Body: text }));
    }
  }
  return { batchItemFailures: [] };
};
