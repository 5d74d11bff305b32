/**
 * The normalize handler that `rerun dev --handler` runs in the browser tier: the reference worker,
 * except that an input named `poison` fails (a retryable error, recorded when given up). Built like
 * functions/normalize/handler.ts, from the variables `rerun dev` sets before loading it.
 */
import { createAwsClients } from '../../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../../src/batch/createSqsBatchHandler.js';
import { S3FailureRecorder } from '../../../src/failures/S3FailureRecorder.js';
import { createNormalizeWorker } from '../../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../../src/worker/defineWorker.js';

const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
const outputBucket = process.env.OUTPUT_BUCKET as string;
const store = new S3ObjectStore(clients.s3);
const real = createNormalizeWorker({ outputBucket });

export const handler = createSqsBatchHandler({
  worker: defineWorker({
    ...real,
    async transform(input, out) {
      if (input.source.key.includes('poison')) throw new Error('cannot parse amount "1.000,50" (bug #42)');
      return real.transform(input, out);
    },
  }),
  store,
  sqs: clients.sqs,
  failureRecorder: new S3FailureRecorder({ store, sqs: clients.sqs, bucket: outputBucket }),
});
