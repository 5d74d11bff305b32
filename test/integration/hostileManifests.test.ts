import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { createGzip } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

const run = promisify(execFile);
/** The bomb: about 600 KB of gzip that expands to one line of 600 MiB. */
const BOMB_MIB = 600;
/** Peak memory of a child that reads the bomb: Node and tsx take about 100 MiB; a whole line would take 600+. */
const MAX_PEAK_RSS_MIB = 250;

interface ChildResult {
  readonly name: string;
  readonly message: string;
  readonly peakRssMiB: number;
}

/** Runs test/fixtures/manifests/readHostileManifest.ts in a child and reads its one JSON line. */
async function readInChild(mode: 'inventory' | 'local', env: Record<string, string> = {}): Promise<ChildResult> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', 'test/fixtures/manifests/readHostileManifest.ts', mode],
    { env: { ...process.env, RERUN_BOMB_MIB: String(BOMB_MIB), ...env }, maxBuffer: 1024 * 1024 },
  ).catch((error: { stdout?: string; stderr?: string }) => {
    // A crash (the RangeError of a 600 MiB line) prints no result line: show what it printed.
    throw new Error(`the reader crashed: ${(error.stderr ?? '').slice(-2000)}`);
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as ChildResult;
}

async function gzipBomb(): Promise<Buffer> {
  const line = Buffer.alloc(1024 * 1024, 0x61);
  const parts: Buffer[] = [];
  const gzip = Readable.from(
    (function* () {
      for (let i = 0; i < BOMB_MIB; i++) yield line;
    })(),
  ).pipe(createGzip({ level: 9 }));
  for await (const part of gzip) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe('hostile manifests: an inventory data file of a few hundred KB of gzip that expands to one 600 MiB line', () => {
  it("the SQS engine's inventory listing stops at the line's limit with ManifestLineTooLongError naming the file and line, in bounded memory", async () => {
    const result = await readInChild('inventory');
    expect(result).toMatchObject({
      name: 'ManifestLineTooLongError',
      message: expect.stringMatching(/^s3:\/\/inv\/data\/bomb\.csv\.gz: line 1 is longer than 65536 bytes/),
    });
    expect(result.peakRssMiB).toBeLessThan(MAX_PEAK_RSS_MIB);
  });

  it('the local Batch Operations stand-in reads it from S3 and stops the same way, in bounded memory', async () => {
    const clients = testClients();
    const bucket = await createBucket(clients.s3, uniqueName('inv'));
    const data = await gzipBomb();
    expect(data.length).toBeLessThan(1024 * 1024);
    const dataKey = 'inventory/data/bomb.csv.gz';
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: dataKey, Body: data }));
    const manifest = {
      sourceBucket: 'in',
      destinationBucket: `arn:aws:s3:::${bucket}`,
      version: '2016-11-30',
      creationTimestamp: '0',
      fileFormat: 'CSV',
      fileSchema: 'Bucket, Key',
      files: [{ key: dataKey, size: data.length, MD5checksum: createHash('md5').update(data).digest('hex') }],
    };
    const manifestKey = 'inventory/manifest.json';
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: manifestKey, Body: JSON.stringify(manifest) }));
    const result = await readInChild('local', {
      AWS_ENDPOINT_URL: awsEndpoint(),
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      RERUN_MANIFEST: `s3://${bucket}/${manifestKey}`,
    });
    expect(result).toMatchObject({
      name: 'ManifestLineTooLongError',
      message: expect.stringContaining(`s3://${bucket}/${dataKey}: line 1 is longer than 65536 bytes`),
    });
    expect(result.peakRssMiB).toBeLessThan(MAX_PEAK_RSS_MIB);
  });

  it('the local stand-in refuses a manifest.json larger than any inventory writes with ManifestTooLargeError, unread past its limit', async () => {
    const clients = testClients();
    const bucket = await createBucket(clients.s3, uniqueName('inv'));
    const huge = `{"sourceBucket":"in","files":[],"pad":"${'x'.repeat(17 * 1024 * 1024)}"}`;
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'huge/manifest.json', Body: huge }));
    const { readManifestTasks } = await import('../../local/batchOperations/manifestTasks.js');
    const refused = readManifestTasks(clients.s3, {
      bucket,
      key: 'huge/manifest.json',
      format: 'S3InventoryReport_CSV_20161130',
    });
    await expect(refused).rejects.toMatchObject({
      name: 'ManifestTooLargeError',
      message: expect.stringMatching(new RegExp(`^s3://${bucket}/huge/manifest\\.json is larger than 16777216 bytes`)),
    });
  });
});
