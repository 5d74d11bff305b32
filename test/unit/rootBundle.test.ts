import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The inputs esbuild puts in the bundle of a module with `contents`, resolved from the repository root. */
async function bundledInputs(contents: string): Promise<string[]> {
  const result = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts', sourcefile: 'worker.ts' },
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs);
}

describe("a worker's bundle carries the DynamoDB client only when it has a ledger", () => {
  it('a worker that imports only the root (createAwsClients, the handler) bundles no @aws-sdk/client-dynamodb', async () => {
    const inputs = await bundledInputs(`
      import { createAwsClients, createSqsBatchHandler, defineWorker, S3ObjectStore } from './src/index.ts';
      const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
      const worker = defineWorker({
        name: 'upper', codeVersion: 'upper@1', outputBucket: 'out', outputKey: (s) => 'upper/' + s.key,
        async transform({ text }, { output }) { for await (const c of text()) await output.write(c); return {}; },
      });
      export const handler = createSqsBatchHandler({ worker, store: new S3ObjectStore(clients.s3), sqs: clients.sqs });
    `);
    expect(inputs.some((i) => i.includes('@aws-sdk/client-s3/'))).toBe(true);
    expect(inputs.filter((i) => i.includes('@aws-sdk/client-dynamodb/'))).toEqual([]);
  }, 60_000);

  it('a worker with a ledger (createDynamoDBClient of ./ledger) does bundle it: the check above can fail', async () => {
    const inputs = await bundledInputs(`
      import { createDynamoDBClient, DynamoDBLedger } from './src/ledger/index.ts';
      export const ledger = new DynamoDBLedger({ client: createDynamoDBClient(), tableName: 'rerun-ledger' });
    `);
    expect(inputs.some((i) => i.includes('@aws-sdk/client-dynamodb/'))).toBe(true);
  }, 60_000);
});
