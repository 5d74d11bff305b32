import { PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import type { S3ObjectEvent } from '../../src/intake/parseS3Event.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { processObject } from '../../src/worker/processObject.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

/*
 * S3's first delivery of an overwrite, creating first, against the emulator: the create answers 412
 * and the next round publishes what the create built (src/worker/keptOutput.ts), so the input is
 * read and transformed once; and an input changed between that read and the HEAD is seen by the
 * closing check after that publish, which builds the new content.
 */

describe('a create-first overwrite publishes what its create built', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let input: string;
  let output: string;
  let transforms: string[];
  let worker: WorkerDefinition;

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    await clients.s3.send(
      new PutBucketVersioningCommand({ Bucket: input, VersioningConfiguration: { Status: 'Enabled' } }),
    );
    output = await createBucket(clients.s3, uniqueName('out'));
    transforms = [];
    worker = defineWorker({
      name: 'upper',
      codeVersion: 'upper@1',
      outputBucket: output,
      outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
      async transform({ source, lines }, { output: out }) {
        transforms.push(source.etag);
        for await (const line of lines()) await out.write(`${line.toUpperCase()}\n`);
        return {};
      },
    });
  });

  const upload = async (key: string, body: string): Promise<S3ObjectEvent> => {
    const out = await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
    return {
      bucket: input,
      key,
      eventName: 'ObjectCreated:Put',
      eTag: (out.ETag ?? '').replace(/"/g, ''),
      size: Buffer.byteLength(body),
    };
  };
  const outputText = async (store: S3ObjectStore, key: string) => {
    const got = await store.get(output, worker.outputKey({ bucket: input, key }));
    if (got.status !== 'ok') throw new Error(`no output for ${key}`);
    return (await got.body.toArray()).join('');
  };

  it('5 requests (GET, PUT 412, HEAD, PUT If-Match, GET 304) and one transform', async () => {
    const store = new S3ObjectStore(clients.s3);
    await processObject(worker, await upload('a.txt', 'x\n'), { store, freshDelivery: true, createFirst: true });
    const overwrite = await upload('a.txt', 'y\n');
    transforms.length = 0;
    log.clear();
    const outcome = await processObject(worker, overwrite, { store, freshDelivery: true, createFirst: true });
    expect(log.operations('S3')).toEqual(['GetObject', 'PutObject', 'HeadObject', 'PutObject', 'GetObject']);
    expect(transforms).toEqual([overwrite.eTag]);
    expect(outcome).toMatchObject({ status: 'processed', publishRacesLost: 1, output: { sourceEtag: overwrite.eTag } });
    expect(await outputText(store, 'a.txt')).toBe('Y\n');
  });

  it('the input changed between the read and the HEAD: the closing check sees it and builds the new content', async () => {
    const store = new S3ObjectStore(clients.s3);
    await processObject(worker, await upload('a.txt', 'x\n'), { store, freshDelivery: true, createFirst: true });
    const overwrite = await upload('a.txt', 'y\n');
    transforms.length = 0;
    // Another upload lands as the done-check's HEAD is sent; every body written to the output is kept.
    let changed: S3ObjectEvent | undefined;
    const head = store.head.bind(store);
    store.head = async (bucket, key) => {
      changed ??= await upload('a.txt', 'z\n');
      return head(bucket, key);
    };
    const written: string[] = [];
    const put = store.put.bind(store);
    store.put = async (bucket, key, body, options) => {
      if (bucket === output) written.push(Buffer.from(body).toString('utf8'));
      return put(bucket, key, body, options);
    };
    const outcome = await processObject(worker, overwrite, { store, freshDelivery: true, createFirst: true });
    // The create's PUT (412) and the kept publish carried Y; the closing check found Z and built it.
    expect(written).toEqual(['Y\n', 'Y\n', 'Z\n']);
    expect(transforms).toEqual([overwrite.eTag, changed?.eTag]);
    expect(outcome).toMatchObject({ status: 'processed', output: { sourceEtag: changed?.eTag } });
    expect(await outputText(store, 'a.txt')).toBe('Z\n');
  });
});
