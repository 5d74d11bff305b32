import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { deterministicKeyMapping } from '../../app/reprocess/outputKeyMapping.js';
import { runReprocess } from '../../app/reprocess/runReprocess.js';
import { S3ListingReader } from '../../app/reprocess/S3ListingReader.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { processObject } from '../../src/worker/processObject.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys } from '../support/s3.js';

describe("rerun reprocess --prune racing the input's own delete event", () => {
  const clients = testClients();

  it('an orphan whose output its delete event removed after the listing is counted already gone, not kept', async () => {
    const input = await createBucket(clients.s3, uniqueName('pg-in'));
    const output = await createBucket(clients.s3, uniqueName('pg-out'));
    const queue = await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('pg-q') }));
    const worker = defineWorker({
      name: 'copy',
      codeVersion: 'copy@1',
      outputBucket: output,
      outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, stripPrefix: 'incoming/' }),
      async transform({ body }, { output: out }) {
        for await (const chunk of body) await out.write(chunk);
        return {};
      },
    });
    const store = new S3ObjectStore(clients.s3);
    for (const key of ['incoming/gone.csv', 'incoming/pruned.csv']) {
      await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: 'x\n' }));
      await processObject(worker, { bucket: input, key, eventName: 'ObjectCreated:Put' }, { store });
      await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: key }));
    }
    // Between the plan's listing and the prune's conditional delete, gone.csv's own delete event
    // (another remover) removes its output: the prune's If-Match delete answers 404.
    const racing = new (class extends S3ObjectStore {
      override async deleteIfMatch(bucket: string, key: string, etag: string) {
        if (key.includes('gone.csv')) await clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
        return super.deleteIfMatch(bucket, key, etag);
      }
    })(clients.s3);
    const result = await runReprocess({
      reader: new S3ListingReader(clients.s3),
      store: racing,
      sqs: clients.sqs,
      inputBucket: input,
      worker,
      mapping: deterministicKeyMapping({
        inputBucket: input,
        inputPrefix: 'incoming/',
        outputPrefix: 'out/',
        suffix: '',
      }),
      prefix: 'incoming/',
      prune: true,
      queueUrl: queue.QueueUrl as string,
    });
    expect(result).toMatchObject({ pruned: 1, alreadyGone: 1, kept: { count: 0, first: [] } });
    expect(await listKeys(clients.s3, output, 'out/')).toEqual([]);
  });
});
