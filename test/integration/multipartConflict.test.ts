import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../src/aws/clients.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { processObject } from '../../src/worker/processObject.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys } from '../support/s3.js';
import { S3DenyProxy } from '../support/s3DenyProxy.js';

/**
 * moto never answers 409 ConditionalRequestConflict (EMULATORS.md), so a proxy in S3's wire format
 * answers the first CompleteMultipartUpload with one, as S3 does when a conflicting conditional
 * write is in flight.
 */
describe('a 409 on CompleteMultipartUpload', () => {
  const clients = testClients();
  let proxy: S3DenyProxy;
  let input: string;
  let output: string;
  const creates: string[] = [];
  const completions: string[] = [];
  const aborts: string[] = [];

  beforeAll(async () => {
    input = await createBucket(clients.s3, uniqueName('mc-in'));
    output = await createBucket(clients.s3, uniqueName('mc-out'));
    proxy = await S3DenyProxy.start(awsEndpoint(), ({ method, query }) => {
      if (method === 'POST' && query.has('uploads')) creates.push('create');
      if (method === 'DELETE' && query.has('uploadId')) aborts.push(query.get('uploadId') as string);
      if (method === 'POST' && query.has('uploadId')) {
        completions.push(query.get('uploadId') as string);
        if (completions.length === 1) return { status: 409, code: 'ConditionalRequestConflict' };
      }
      return undefined;
    });
  });
  afterAll(async () => proxy?.stop());

  it('starts a new multipart upload with the parts uploaded again, never completes the same UploadId twice, and aborts the first', async () => {
    const line = `${'a'.repeat(1023)}\n`;
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'big.txt', Body: line.repeat(6 * 1024) })); // 6 MiB
    const worker = defineWorker({
      name: 'copy',
      codeVersion: 'copy@1',
      outputBucket: output,
      partBytes: 5 * 1024 * 1024,
      outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
      async transform({ body }, { output: out }) {
        for await (const chunk of body) await out.write(chunk as Uint8Array);
        return {};
      },
    });
    const proxied = createAwsClients({ endpoint: proxy.url, region: 'us-east-1', maxAttempts: 1 });
    const outcome = await processObject(
      worker,
      { bucket: input, key: 'big.txt', eventName: 'ObjectCreated:Put' },
      { store: new S3ObjectStore(proxied.s3) },
    );
    expect(outcome.status).toBe('processed');
    // Two uploads of the output's parts (the first met the 409), then the seal's own upload.
    expect(creates).toHaveLength(3);
    expect(completions).toHaveLength(3);
    expect(new Set(completions).size).toBe(3);
    expect(aborts).toEqual([completions[0]]);
    expect(await listKeys(clients.s3, output, 'out/')).toEqual([`out/${input}/big.txt`]);
    expect(
      await processObject(
        worker,
        { bucket: input, key: 'big.txt', eventName: 'ObjectCreated:Put' },
        {
          store: new S3ObjectStore(clients.s3),
        },
      ),
    ).toMatchObject({ status: 'skipped' });
  });
});
