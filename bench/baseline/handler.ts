/**
 * Lambda entry of the benchmark's baseline worker (Powertools idempotency + batch). Built once per
 * container at module scope, like functions/normalize/handler.ts.
 *
 * Environment: OUTPUT_BUCKET, IDEMPOTENCY_TABLE (required); AWS_ENDPOINT_URL (emulators).
 */

import { requireEnv } from '../../src/env.js';
import { createPipelineClients } from '../../src/ledger/pipelineClients.js';
import { createPowertoolsNormalizeHandler } from './powertoolsWorker.js';

const clients = createPipelineClients({ endpoint: process.env.AWS_ENDPOINT_URL });

export const handler = createPowertoolsNormalizeHandler({
  s3: clients.s3,
  dynamodb: clients.dynamodb,
  outputBucket: requireEnv('OUTPUT_BUCKET'),
  idempotencyTable: requireEnv('IDEMPOTENCY_TABLE'),
});
