import { spawnSync } from 'node:child_process';
import { ListMultipartUploadsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { createNormalizeWorker } from '../../functions/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { processObject } from '../../src/worker/processObject.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

/**
 * The design's first promise: a worker killed with SIGKILL at any request boundary of an item is
 * rerun with no manual cleanup, and the final state is clean and correct.
 * The item is large enough to take the multipart path (3 parts) and has bad rows (a quarantine
 * side output), so every kind of request is a boundary: HEAD, GET, Create/UploadPart/Complete, PUT.
 */
const PART_BYTES = 5 * 1024 * 1024;

function runItem(env: Record<string, string>): {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
} {
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/killableItem.ts'], {
    env: { ...process.env, ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: child.status, signal: child.signal, stdout: child.stdout };
}

describe('kill mid-item, then rerun', () => {
  const { s3 } = testClients();
  const key = 'incoming/big file+1.csv';
  let input: string;
  let reference: Map<string, string>;
  let requestsPerCleanRun: number;

  // ~11 MiB of rows with a bad row every 5,000: output needs 3 parts of 5 MiB.
  const rows = ['id,name,amount'];
  for (let i = 1; i <= 220_000; i++)
    rows.push(i % 5000 === 0 ? `${i},broken` : `${i},customer ${i},${(i * 7) % 1000}.50`);
  const body = `${rows.join('\n')}\n`;

  const envFor = (outputBucket: string) => ({
    AWS_ENDPOINT_URL: awsEndpoint(),
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    INPUT_BUCKET: input,
    INPUT_KEY: key,
    OUTPUT_BUCKET: outputBucket,
    PART_BYTES: String(PART_BYTES),
  });
  const rerunItem = (outputBucket: string) =>
    processObject(
      createNormalizeWorker({ outputBucket, partBytes: PART_BYTES }),
      { bucket: input, key, eventName: 'ObjectCreated:Put' },
      { store: new S3ObjectStore(s3) },
    );
  const snapshot = async (bucket: string) => {
    const state = new Map<string, string>();
    for (const k of await listKeys(s3, bucket)) state.set(k, await readText(s3, bucket, k));
    return state;
  };

  beforeAll(async () => {
    input = await createBucket(s3, uniqueName('kill-in'));
    await s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
    const clean = await createBucket(s3, uniqueName('kill-ref'));
    const run = runItem(envFor(clean));
    expect(run.status).toBe(0);
    requestsPerCleanRun = Number(/REQUESTS (\d+)/.exec(run.stdout)?.[1]);
    reference = await snapshot(clean);
  }, 120_000);

  it('the clean run takes the multipart path and writes an output and a quarantine object', () => {
    // HEAD, GET, CreateMultipartUpload, 3 x UploadPart, quarantine PUT, CompleteMultipartUpload.
    expect(requestsPerCleanRun).toBe(8);
    expect([...reference.keys()]).toEqual([
      `normalized/${input}/big file+1.csv.ndjson`,
      `quarantine/${input}/big file+1.csv.ndjson`,
    ]);
    expect(reference.get(`quarantine/${input}/big file+1.csv.ndjson`)?.split('\n').filter(Boolean)).toHaveLength(44);
  });

  it('SIGKILL before or after every request, then a rerun: final state equals the clean run, nothing torn', async () => {
    const killPoints: { at: number; when: 'before' | 'after' }[] = [];
    for (let at = 1; at <= requestsPerCleanRun; at++) killPoints.push({ at, when: 'before' }, { at, when: 'after' });
    for (const point of killPoints) {
      const output = await createBucket(s3, uniqueName('kill-out'));
      const killed = runItem({ ...envFor(output), KILL_AT: String(point.at), KILL_WHEN: point.when });
      expect(killed.signal, `kill ${point.when} request ${point.at}`).toBe('SIGKILL');

      // The rerun is a plain rerun: no cleanup step, no special flag.
      const rerun = await rerunItem(output);
      expect(rerun.status, `rerun after kill ${point.when} request ${point.at}`).toMatch(/processed|skipped/);
      expect(await snapshot(output), `state after kill ${point.when} request ${point.at}`).toEqual(reference);

      // And the rerun of the rerun is a no-op: the item is done.
      expect((await rerunItem(output)).status).toBe('skipped');
    }
  }, 600_000);

  it('an upload abandoned by a kill stays invisible (the stack aborts it with a lifecycle rule)', async () => {
    const output = await createBucket(s3, uniqueName('kill-out'));
    runItem({ ...envFor(output), KILL_AT: '4', KILL_WHEN: 'after' }); // after the first UploadPart
    expect(await listKeys(s3, output)).toEqual([]);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: output }));
    expect(uploads.Uploads?.length).toBe(1);
  }, 120_000);
});
