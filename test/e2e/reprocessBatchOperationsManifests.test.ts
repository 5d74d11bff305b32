import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { testClients } from '../support/aws.js';
import { upload } from '../support/pipeline.js';
import { ordersCsv, provisionTwoStagePipeline, rerunCli, type TwoStagePipeline } from '../support/summaryPipeline.js';

interface JobJson {
  waited?: string;
  done?: number;
  remaining?: number;
  job?: { manifest: string; status: string; tasks: number; succeeded: number; failed: number };
}

/**
 * The two manifest kinds besides rerun's own CSV, each run by `rerun reprocess --engine
 * batch-operations --wait` against the emulator, where the local stand-in reads them as S3 does.
 */
describe('rerun reprocess --engine batch-operations over an S3 Inventory report and the manifest generator', () => {
  const clients = testClients();
  const store = new S3ObjectStore(clients.s3);
  const run = (p: TwoStagePipeline, ...args: string[]) =>
    rerunCli(['reprocess', '--engine', 'batch-operations', ...args, '--app-name', p.appName]);
  const outputKey = (p: TwoStagePipeline, key: string) =>
    `normalized/${p.stack.inputBucket}/${key.slice('incoming/'.length)}.ndjson`;

  it('runs the rows of an S3 Inventory report (manifest.json and its gzip CSV data files), delete markers left out', async () => {
    const p = await provisionTwoStagePipeline(clients);
    const keys = ['incoming/inv/a b.csv', 'incoming/inv/c.csv'];
    for (const [i, key] of keys.entries()) await upload(clients, p.stack.inputBucket, key, ordersCsv(`i${i}`, 1));
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: p.stack.queueUrl }));
    // An inventory as S3 writes it: quoted fields, keys URL-encoded, the schema in manifest.json.
    const rows = [
      ...keys.map((k) => `"${p.stack.inputBucket}","${encodeURIComponent(k).replace(/%2F/g, '/')}","false"`),
      `"${p.stack.inputBucket}","incoming/inv/deleted.csv","true"`,
    ];
    const data = gzipSync(`${rows.join('\n')}\n`);
    const dataKey = 'inventory/in/all/data/part-0.csv.gz';
    await clients.s3.send(new PutObjectCommand({ Bucket: p.stack.outputBucket, Key: dataKey, Body: data }));
    const manifest = {
      sourceBucket: p.stack.inputBucket,
      destinationBucket: `arn:aws:s3:::${p.stack.outputBucket}`,
      version: '2016-11-30',
      creationTimestamp: String(Date.now()),
      fileFormat: 'CSV',
      fileSchema: 'Bucket, Key, IsDeleteMarker',
      files: [{ key: dataKey, size: data.length, MD5checksum: createHash('md5').update(data).digest('hex') }],
    };
    const manifestKey = 'inventory/in/all/2026-12-01T00-00Z/manifest.json';
    await upload(clients, p.stack.outputBucket, manifestKey, JSON.stringify(manifest));

    const result = await run(p, '--manifest', `s3://${p.stack.outputBucket}/${manifestKey}`, '--wait', '--json');
    expect(result.code, result.stderr).toBe(0);
    const summary = result.json<JobJson>();
    expect(summary).toMatchObject({ waited: 'complete', done: 2, remaining: 0 });
    expect(summary.job).toMatchObject({ status: 'Complete', tasks: 2, succeeded: 2, failed: 0 });
    for (const key of keys) expect(await store.head(p.stack.outputBucket, outputKey(p, key)), key).toBeDefined();

    // An inventory whose data file was replaced since (its MD5 no longer matches) is refused.
    await clients.s3.send(
      new PutObjectCommand({ Bucket: p.stack.outputBucket, Key: dataKey, Body: gzipSync('"x","y","false"\n') }),
    );
    const changed = await run(p, '--manifest', `s3://${p.stack.outputBucket}/${manifestKey}`, '--wait');
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain('does not match its MD5');
  }, 120_000);

  it('lets the manifest generator pick the inputs: the prefix and the creation-time filters, nothing planned here', async () => {
    const p = await provisionTwoStagePipeline(clients);
    const early = ['incoming/gen/a.csv', 'incoming/gen/b.csv'];
    for (const [i, key] of early.entries()) await upload(clients, p.stack.inputBucket, key, ordersCsv(`g${i}`, 1));
    await upload(clients, p.stack.inputBucket, 'incoming/other/x.csv', ordersCsv('x', 1));
    // Listings give LastModified to the second: the cut is a whole second away from both groups.
    await sleep(1_100);
    const cut = new Date();
    await sleep(1_100);
    await upload(clients, p.stack.inputBucket, 'incoming/gen/late.csv', ordersCsv('late', 1));
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: p.stack.queueUrl }));

    const before = await run(
      p,
      '--generate-manifest',
      '--prefix',
      'incoming/gen/',
      '--created-before',
      cut.toISOString(),
      '--wait',
      '--json',
    );
    expect(before.code, before.stderr).toBe(0);
    expect(before.stderr).not.toMatch(/Planning|planned/);
    const first = before.json<JobJson>();
    expect(first.job).toMatchObject({ status: 'Complete', tasks: 2, succeeded: 2, failed: 0 });
    expect(first.job?.manifest).toBe(`generated from s3://${p.stack.inputBucket}/incoming/gen/`);
    for (const key of early) expect(await store.head(p.stack.outputBucket, outputKey(p, key)), key).toBeDefined();
    expect(await store.head(p.stack.outputBucket, outputKey(p, 'incoming/gen/late.csv'))).toBeUndefined();
    expect(await store.head(p.stack.outputBucket, outputKey(p, 'incoming/other/x.csv'))).toBeUndefined();

    const after = await run(
      p,
      '--generate-manifest',
      '--prefix',
      'incoming/gen/',
      '--created-after',
      cut.toISOString(),
      '--wait',
      '--json',
    );
    expect(after.code, after.stderr).toBe(0);
    expect(after.json<JobJson>().job).toMatchObject({ tasks: 1, succeeded: 1, failed: 0 });
    expect(await store.head(p.stack.outputBucket, outputKey(p, 'incoming/gen/late.csv'))).toBeDefined();

    // A filter without the generator is a usage error, said before anything runs.
    const alone = await run(p, '--created-after', cut.toISOString());
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--created-after and --created-before filter --generate-manifest');
  }, 120_000);
});
