import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import type { OutputHead } from '../../src/done/judgeOutput.js';
import type { S3ObjectEvent } from '../../src/intake/parseS3Event.js';
import { DeleteStatus, S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import { processObject } from '../../src/worker/processObject.js';
import { removeOutputs } from '../../src/worker/removeOutputs.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { quarantiningWorker } from '../support/quarantiningWorker.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

describe('deletion propagates: removeOutputs with conditional deletes', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  const store = new S3ObjectStore(clients.s3);
  let input: string;
  let output: string;
  let worker: WorkerDefinition;
  const created = (key: string) => ({ bucket: input, key, eventName: 'ObjectCreated:Put' });
  const removed = (key: string) => ({ bucket: input, key, eventName: 'ObjectRemoved:Delete' });
  const put = (key: string, body: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
  const deleteInput = (key: string) => clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: key }));
  const deletes = () => log.requests.filter((r) => r.operation === 'DeleteObject');
  // What the batch handler passes: an input that is back gets the done-check (processObject).
  const rebuild = (object: S3ObjectEvent) => processObject(worker, object, { store });

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    output = await createBucket(clients.s3, uniqueName('out'));
    worker = quarantiningWorker(output);
    log.clear();
  });

  it('the emulator applies If-Match on DeleteObject: 412 on another ETag, 404 on a missing key, deleted on a match', async () => {
    const first = await store.put(output, 'out/k', new Uint8Array([1]), {
      condition: { ifNoneMatch: '*' },
      metadata: {},
      sha256Base64: 'S/bLb6vN2u9oHTcRK2d2D1G8nhE2DTv7aK+Q1BSfZZA=',
    });
    expect(first.status).toBe('written');
    const etag = first.status === 'written' ? first.etag : '';
    expect(await store.deleteIfMatch(output, 'out/k', 'not-the-etag')).toBe(DeleteStatus.PRECONDITION_FAILED);
    expect(await listKeys(clients.s3, output)).toEqual(['out/k']);
    expect(await store.deleteIfMatch(output, 'out/k', etag)).toBe(DeleteStatus.DELETED);
    expect(await listKeys(clients.s3, output)).toEqual([]);
    expect(await store.deleteIfMatch(output, 'out/k', etag)).toBe(DeleteStatus.MISSING);
  });

  it('an input deleted: its main and side outputs are removed, each with If-Match on the ETag its HEAD saw', async () => {
    await put('a.txt', 'x\n!bad\n');
    await processObject(worker, created('a.txt'), { store });
    expect(await listKeys(clients.s3, output)).toEqual([`out/${input}/a.txt.txt`, `quarantine/${input}/a.txt.txt`]);
    await deleteInput('a.txt');
    log.clear();
    const outcome = await removeOutputs(worker, removed('a.txt'), { store, rebuild });
    expect(outcome).toMatchObject({ status: 'processed', reason: 'input deleted: removed main, quarantine' });
    // HEAD both outputs, HEAD the input (404), then two conditional deletes (no blind delete), and
    // the input HEADed once more: a re-upload of the same bytes during the deletes is rebuilt.
    expect(log.operations('S3')).toEqual([
      'HeadObject',
      'HeadObject',
      'HeadObject',
      'DeleteObject',
      'DeleteObject',
      'HeadObject',
    ]);
    expect(deletes().every((d) => typeof d.input.IfMatch === 'string' && d.input.IfMatch !== '')).toBe(true);
    expect(await listKeys(clients.s3, output)).toEqual([]);
  });

  it('an input re-uploaded after its delete event was sent: nothing deleted, and the output brought up to date', async () => {
    await put('a.txt', 'x\n');
    await processObject(worker, created('a.txt'), { store });
    await deleteInput('a.txt');
    await put('a.txt', 'y\n');
    log.clear();
    const outcome = await removeOutputs(worker, removed('a.txt'), { store, rebuild });
    // The re-upload's own event has not run here: the removal path runs the done-check instead of
    // leaving an output of the old content.
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(
        /^input exists again \(re-uploaded after the delete\): outputs kept: output replaced/,
      ),
    });
    expect(deletes()).toEqual([]);
    expect(await listKeys(clients.s3, output)).toEqual([`out/${input}/a.txt.txt`]);
    expect(await readText(clients.s3, output, `out/${input}/a.txt.txt`)).toBe('Y\n');
  });

  it('a removal that deleted the outputs of a re-uploaded identical input, then died, is repaired by its redelivery', async () => {
    // Found by the simulation tier ("recreate single-part, crashes 1"): the re-upload has the same
    // bytes, hence the same ETag, so its own event found the output done; the removal then deleted
    // that output (If-Match on the same ETag), saw the input back, and died before rebuilding.
    await put('a.txt', 'x\n!bad\n');
    await processObject(worker, created('a.txt'), { store });
    await clients.s3.send(new DeleteObjectCommand({ Bucket: output, Key: `out/${input}/a.txt.txt` }));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: output, Key: `quarantine/${input}/a.txt.txt` }));
    log.clear();
    // The redelivered removal: no output to remove, the input exists: the output is rebuilt.
    const outcome = await removeOutputs(worker, removed('a.txt'), { store, rebuild });
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/input exists again.*output created/),
    });
    expect(await readText(clients.s3, output, `out/${input}/a.txt.txt`)).toBe('X\n');
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toBe('!bad\n');
  });

  it('a removal that sees the input back after its deletes rebuilds the output at once', async () => {
    await put('a.txt', 'same\n');
    await processObject(worker, created('a.txt'), { store });
    await deleteInput('a.txt');
    // Right after the remover's deletes, the same bytes are uploaded again (same ETag), and that
    // upload's event finds... nothing to find yet: the remover's own check after deleting sees it.
    const racing = new (class extends S3ObjectStore {
      override async deleteIfMatch(bucket: string, key: string, etag: string) {
        const result = await super.deleteIfMatch(bucket, key, etag);
        if (key.startsWith('out/')) await put('a.txt', 'same\n');
        return result;
      }
    })(clients.s3);
    const outcome = await removeOutputs(worker, removed('a.txt'), { store: racing, rebuild });
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/^input re-uploaded while its outputs were removed \(main\): output created/),
    });
    expect(await readText(clients.s3, output, `out/${input}/a.txt.txt`)).toBe('SAME\n');
  });

  it('a delete racing a re-upload: the output rebuilt between the HEADs and the delete is kept (412)', async () => {
    await put('a.txt', 'old\n!old-bad\n');
    await processObject(worker, created('a.txt'), { store });
    await deleteInput('a.txt');
    // The remover's input HEAD answers 404; right after it, the key is uploaded again and a worker
    // rebuilds both outputs before the remover's conditional deletes arrive.
    const racing = new (class extends S3ObjectStore {
      override async head(bucket: string, key: string): Promise<OutputHead | undefined> {
        const head = await super.head(bucket, key);
        if (bucket === input) {
          await put('a.txt', 'new\n!new-bad\n');
          await processObject(worker, created('a.txt'), { store });
        }
        return head;
      }
    })(clients.s3);
    log.clear();
    const outcome = await removeOutputs(worker, removed('a.txt'), { store: racing, rebuild });
    expect(outcome).toMatchObject({
      status: 'skipped',
      reason: 'input deleted: nothing removed; kept main, quarantine (replaced meanwhile by a rebuild)',
      kept: 2,
    });
    expect(deletes()).toHaveLength(2);
    expect(await readText(clients.s3, output, `out/${input}/a.txt.txt`)).toBe('NEW\n');
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toContain('!new-bad');
    // And the rebuilt output is valid and current: a rerun writes nothing.
    expect(await processObject(worker, created('a.txt'), { store })).toMatchObject({ status: 'skipped' });
  });

  it('outputs removed meanwhile by another removal are already gone, not kept', async () => {
    await put('a.txt', 'old\n!old-bad\n');
    await processObject(worker, created('a.txt'), { store });
    await deleteInput('a.txt');
    // The remover's HEADs find both outputs; right after, the input's own delete event (another
    // remover) removes them before this one's conditional deletes arrive: 404 on each.
    const racing = new (class extends S3ObjectStore {
      override async deleteIfMatch(bucket: string, key: string, etag: string) {
        await clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
        return super.deleteIfMatch(bucket, key, etag);
      }
    })(clients.s3);
    const outcome = await removeOutputs(worker, removed('a.txt'), { store: racing, rebuild });
    expect(outcome).toEqual({
      status: 'skipped',
      reason: 'input deleted: nothing removed; already gone: main, quarantine (removed meanwhile by another removal)',
      outputKey: `out/${input}/a.txt.txt`,
    });
    expect(await listKeys(clients.s3, output, '')).toEqual([]);
  });

  it('an object at an output key that does not name this input is kept', async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: output, Key: `out/${input}/a.txt.txt`, Body: 'foreign' }));
    log.clear();
    const outcome = await removeOutputs(worker, removed('a.txt'), { store, rebuild });
    expect(outcome).toMatchObject({
      status: 'skipped',
      reason: 'input deleted: nothing removed; kept main: object does not name this input (no rerun metadata)',
      kept: 1,
    });
    expect(deletes()).toEqual([]);
  });
});
