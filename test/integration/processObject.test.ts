import {
  CopyObjectCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { AdaptiveFirstRun } from '../../src/worker/adaptiveFirstRun.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { CREATE_FIRST_MAX_BYTES, processObject } from '../../src/worker/processObject.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

/** A tiny worker: upper-cases each line; lines starting with "!" go to the quarantine side output. */
function upperWorker(outputBucket: string, overrides: Partial<WorkerDefinition> = {}): WorkerDefinition {
  return defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
    sideOutputs: { quarantine: (s) => deterministicKey({ prefix: 'quarantine/', source: s, suffix: '.txt' }) },
    async transform({ body }, { output, side }) {
      let text = '';
      for await (const chunk of body) text += String(chunk);
      let lines = 0;
      let bad = 0;
      for (const line of text.split('\n').filter(Boolean)) {
        if (line.startsWith('!')) {
          bad++;
          await side('quarantine').write(`${line}\n`);
        } else {
          lines++;
          await output.write(`${line.toUpperCase()}\n`);
        }
      }
      return { lines, bad };
    },
    ...overrides,
  });
}

describe('processObject against the emulator', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  const store = new S3ObjectStore(clients.s3);
  let input: string;
  let output: string;
  let worker: WorkerDefinition;
  const event = (key: string) => ({ bucket: input, key, eventName: 'ObjectCreated:Put' });
  /** The version each upload made, by key and ETag, as its event names it (the input bucket is versioned). */
  const versions = new Map<string, string>();
  const put = async (key: string, body: string) => {
    const out = await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
    if (out.VersionId) versions.set(`${key}\n${(out.ETag ?? '').replace(/"/g, '')}`, out.VersionId);
    return out;
  };
  /** Uploads and returns the ETag (unquoted), as the upload's event would carry it. */
  const putEtag = async (key: string, body: string) => ((await put(key, body)).ETag ?? '').replace(/"/g, '');
  /** The event of the upload of `key` with `eTag`: with its versionId when the bucket made one. */
  const eventOf = (key: string, eTag: string) => {
    const versionId = versions.get(`${key}\n${eTag}`);
    return { ...event(key), eTag, ...(versionId ? { versionId } : {}) };
  };
  const outKey = (key: string) => `out/${input}/${key}.txt`;

  beforeEach(async () => {
    // Versioned, as RerunPipeline creates it: every write sends its own event (eventProvesCurrent.ts).
    input = await createBucket(clients.s3, uniqueName('in'));
    await clients.s3.send(
      new PutBucketVersioningCommand({ Bucket: input, VersioningConfiguration: { Status: 'Enabled' } }),
    );
    output = await createBucket(clients.s3, uniqueName('out'));
    worker = upperWorker(output);
    versions.clear();
    log.clear();
  });

  it('first run: 4 S3 requests (HEAD output, GET input, conditional PUT, then a conditional GET of the input: 304) and the output is created', async () => {
    const eTag = await putEtag('a.txt', 'x\ny\n');
    log.clear();
    const outcome = await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: 'output created: lines 2, bad 0',
      summary: { lines: 2, bad: 0 },
    });
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
    expect(log.requests.find((r) => r.operation === 'PutObject')?.input.IfNoneMatch).toBe('*');
    // After publishing: has the input changed meanwhile? Answered 304, no body.
    expect(log.requests.at(-1)?.input.IfNoneMatch).toBe(`"${eTag}"`);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('X\nY\n');
  });

  describe("S3's own first delivery (createFirst): the create is the done-check", () => {
    const first = { store, freshDelivery: true, createFirst: true };
    /** Uploads `body` and returns its event as S3 sends it: with the new content's eTag and size. */
    const uploaded = async (key: string, body: string) => ({
      ...eventOf(key, await putEtag(key, body)),
      size: Buffer.byteLength(body),
    });

    it('a new object costs 3 S3 requests: GET input, PUT with If-None-Match: *, the closing conditional GET (304); no HEAD', async () => {
      const created = await uploaded('a.txt', 'x\ny\n');
      log.clear();
      const outcome = await processObject(worker, created, first);
      expect(outcome).toMatchObject({ status: 'processed', reason: 'output created: lines 2, bad 0' });
      expect(log.operations('S3')).toEqual(['GetObject', 'PutObject', 'GetObject']);
      expect(log.requests[1]?.input.IfNoneMatch).toBe('*');
      expect(log.requests[2]?.input.IfNoneMatch).toBe(`"${created.eTag}"`);
      expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('X\nY\n');
    });

    it("a duplicate of S3's delivery of a file with a quarantine: the side output's create answers 412 first, then the HEADs find both done (the README's cost row)", async () => {
      const created = await uploaded('q.txt', 'x\n!bad\n');
      await processObject(worker, created, first);
      const heads = () =>
        Promise.all(
          [outKey('q.txt'), `quarantine/${input}/q.txt.txt`].map(
            async (Key) => (await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key }))).ETag,
          ),
        );
      const before = await heads();
      log.clear();
      const outcome = await processObject(worker, created, first);
      expect(outcome).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/already done/) });
      // 6 requests, not the 3 of a duplicate without a side output: the side output is created first
      // and its 412 is followed by a HEAD of it, then the main output's create answers 412, and the
      // done-check HEADs the output and the side output it lists.
      const quarantine = `quarantine/${input}/q.txt.txt`;
      expect(log.requests.map((r) => [r.operation, r.input.Key, r.input.IfNoneMatch])).toEqual([
        ['GetObject', 'q.txt', undefined],
        ['PutObject', quarantine, '*'],
        ['HeadObject', quarantine, undefined],
        ['PutObject', outKey('q.txt'), '*'],
        ['HeadObject', outKey('q.txt'), undefined],
        ['HeadObject', quarantine, undefined],
      ]);
      expect(await heads()).toEqual(before);
    });

    it("a duplicate of S3's delivery loses its create (412), then the HEAD finds the output done: nothing is replaced", async () => {
      const created = await uploaded('a.txt', 'x\n');
      await processObject(worker, created, first);
      const before = await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
      log.clear();
      const outcome = await processObject(worker, created, first);
      expect(outcome).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/already done/) });
      expect(log.operations('S3')).toEqual(['GetObject', 'PutObject', 'HeadObject']);
      const after = await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
      expect(after.ETag).toBe(before.ETag);
    });

    it('an overwrite loses its create (412) and replaces the older output with If-Match, keeping no orphan quarantine', async () => {
      await processObject(worker, await uploaded('a.txt', 'x\n!bad\n'), first);
      const v2 = await uploaded('a.txt', 'y\n');
      const outcome = await processObject(worker, v2, first);
      expect(outcome).toMatchObject({ status: 'processed', publishRacesLost: 1, source: { etag: v2.eTag } });
      expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('Y\n');
      // The older content's quarantine is removed: the new output has none.
      expect(await listKeys(clients.s3, output)).toEqual([outKey('a.txt')]);
    });

    it('an old event after newer content was built: its create answers 412, the done-check finds the newer output current (304), nothing regresses', async () => {
      const v1 = await uploaded('a.txt', 'x\n');
      const v2 = await uploaded('a.txt', 'y\n');
      await processObject(worker, v2, first);
      log.clear();
      const outcome = await processObject(worker, v1, first);
      expect(outcome).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/already done.*current/) });
      expect(log.operations('S3')).toEqual(['GetObject', 'PutObject', 'HeadObject', 'GetObject']);
      expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('Y\n');
    });

    it('a copy of identical bytes onto the key (same ETag): its create answers 412 and the HEAD alone finds the output done', async () => {
      const created = await uploaded('a.txt', 'x\n');
      await processObject(worker, created, first);
      await clients.s3.send(
        new CopyObjectCommand({
          Bucket: input,
          Key: 'a.txt',
          CopySource: `${input}/a.txt`,
          MetadataDirective: 'REPLACE',
        }),
      );
      log.clear();
      const outcome = await processObject(worker, created, first);
      expect(outcome).toMatchObject({ status: 'skipped', source: { etag: created.eTag } });
      expect(log.operations('S3')).toEqual(['GetObject', 'PutObject', 'HeadObject']);
    });

    it("the worker's firstRun: 'check' runs the done-check first", async () => {
      const created = await uploaded('a.txt', 'x\n');
      log.clear();
      await processObject(upperWorker(output, { firstRun: 'check' }), created, first);
      expect(log.operations('S3')[0]).toBe('HeadObject');
    });

    it('an input above 8 MiB, or of unknown size, is read once, after the HEAD: a read in vain would cost more than the HEAD saves', async () => {
      const created = await uploaded('a.txt', 'x\n');
      log.clear();
      await processObject(worker, { ...created, size: CREATE_FIRST_MAX_BYTES + 1 }, first);
      const { size: _size, ...sizeless } = created;
      await processObject(worker, { ...sizeless, key: 'b.txt' }, first);
      expect(log.operations('S3').filter((op) => op === 'HeadObject')).toHaveLength(2);
      expect(log.operations('S3')[0]).toBe('HeadObject');
    });

    it('a delivery that may repeat an earlier attempt never skips the done-check, whatever createFirst says', async () => {
      const created = await uploaded('a.txt', 'x\n');
      log.clear();
      await processObject(worker, created, { store, createFirst: true });
      expect(log.operations('S3')[0]).toBe('HeadObject');
    });
  });

  describe("firstRun: 'adaptive' (the default): a sandbox's AdaptiveFirstRun picks the path per delivery", () => {
    /** S3's fresh delivery on a standard queue, as the batch handler runs it, with this sandbox's policy. */
    const sandbox = (policy: AdaptiveFirstRun) => ({
      store,
      freshDelivery: true,
      createFirst: true,
      removalsLookAgain: true,
      firstRunPolicy: policy,
    });
    const uploaded = async (key: string, body: string) => ({
      ...eventOf(key, await putEtag(key, body)),
      size: Buffer.byteLength(body),
    });

    it('a run of new objects creates first: 2 S3 requests each (GET input, PUT If-None-Match: *)', async () => {
      const options = sandbox(new AdaptiveFirstRun());
      for (let i = 0; i < 5; i++) {
        const created = await uploaded(`new/${i}.txt`, `row ${i}\n`);
        log.clear();
        const outcome = await processObject(worker, created, options);
        expect(outcome).toMatchObject({ status: 'processed', reason: 'output created: lines 1, bad 0' });
        expect(log.operations('S3')).toEqual(['GetObject', 'PutObject']);
        expect(log.requests[1]?.input.IfNoneMatch).toBe('*');
      }
    });

    it('after a run of overwrites under a prefix, its next overwrite and its next new object check first (HEAD first, no create in vain)', async () => {
      // Another sandbox built the outputs; this one sees their overwrites, each create answering 412.
      for (let i = 0; i < 4; i++)
        await processObject(worker, await uploaded(`mutable/${i}.txt`, 'v1\n'), {
          store,
          freshDelivery: true,
          createFirst: true,
        });
      const policy = new AdaptiveFirstRun();
      const options = sandbox(policy);
      // The prefix's first delivery here knows nothing: it creates first, and its 412 is all the
      // prefix's record so far, so the next delivery checks first (one create in vain, not three).
      const first = await uploaded('mutable/0.txt', 'v2\n');
      log.clear();
      expect(await processObject(worker, first, options)).toMatchObject({ status: 'processed', publishRacesLost: 1 });
      expect(log.operations('S3').slice(0, 3)).toEqual(['GetObject', 'PutObject', 'HeadObject']);
      for (let i = 1; i < 3; i++) {
        const overwrite = await uploaded(`mutable/${i}.txt`, 'v2\n');
        log.clear();
        const outcome = await processObject(worker, overwrite, options);
        expect(outcome).toMatchObject({ status: 'processed' });
        expect(outcome.publishRacesLost).toBeUndefined();
        expect(log.operations('S3')[0]).toBe('HeadObject');
      }
      const overwrite = await uploaded('mutable/3.txt', 'v2\n');
      log.clear();
      const replaced = await processObject(worker, overwrite, options);
      expect(replaced).toMatchObject({ status: 'processed', source: { etag: overwrite.eTag } });
      expect(replaced.publishRacesLost).toBeUndefined();
      // The check path's overwrite: HEAD, GET, PUT If-Match, the closing conditional GET (304).
      expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
      expect(log.requests[2]?.input.IfMatch).toBeDefined();
      expect(await readText(clients.s3, output, outKey('mutable/3.txt'))).toBe('V2\n');
      const created = await uploaded('mutable/new.txt', 'n\n');
      log.clear();
      expect(await processObject(worker, created, options)).toMatchObject({ status: 'processed' });
      expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject', 'PutObject']);
      // Another prefix still creates first.
      const elsewhere = await uploaded('append/a.txt', 'a\n');
      log.clear();
      await processObject(worker, elsewhere, options);
      expect(log.operations('S3')).toEqual(['GetObject', 'PutObject']);
    });

    it('a re-upload of the bytes this sandbox built checks first: its duplicate costs the HEAD alone', async () => {
      const options = sandbox(new AdaptiveFirstRun());
      const created = await uploaded('daily/a.txt', 'x\n');
      await processObject(worker, created, options);
      const again = await uploaded('daily/a.txt', 'x\n');
      expect(again.eTag).toBe(created.eTag);
      expect(again.versionId).not.toBe(created.versionId);
      log.clear();
      const outcome = await processObject(worker, again, options);
      expect(outcome).toMatchObject({
        status: 'skipped',
        reason: expect.stringMatching(/built from the event's content/),
      });
      expect(log.operations('S3')).toEqual(['HeadObject']);
    });

    it("unknownPrefix: 'check': a re-upload of outputs another sandbox built never creates in vain, and new objects pay one HEAD per prefix", async () => {
      for (let i = 0; i < 3; i++)
        await processObject(worker, await uploaded(`again/${i}.txt`, `same ${i}\n`), {
          store,
          freshDelivery: true,
          createFirst: true,
        });
      const options = sandbox(new AdaptiveFirstRun({ unknownPrefix: 'check' }));
      for (let i = 0; i < 3; i++) {
        const again = await uploaded(`again/${i}.txt`, `same ${i}\n`);
        log.clear();
        expect(await processObject(worker, again, options)).toMatchObject({ status: 'skipped' });
        expect(log.operations('S3')).toEqual(['HeadObject']);
      }
      for (let i = 0; i < 3; i++) {
        const created = await uploaded(`fresh/${i}.txt`, `row ${i}\n`);
        log.clear();
        expect(await processObject(worker, created, options)).toMatchObject({ status: 'processed' });
        expect(log.operations('S3')).toEqual(
          i === 0 ? ['HeadObject', 'GetObject', 'PutObject'] : ['GetObject', 'PutObject'],
        );
      }
    });

    it("an explicit firstRun: 'create' ignores the policy, and firstRun: 'check' never asks it", async () => {
      const policy = new AdaptiveFirstRun();
      const options = sandbox(policy);
      await processObject(worker, await uploaded('k/a.txt', 'x\n'), options);
      const again = await uploaded('k/a.txt', 'x\n');
      log.clear();
      await processObject(upperWorker(output, { firstRun: 'create' }), again, options);
      expect(log.operations('S3')).toEqual(['GetObject', 'PutObject', 'HeadObject']);
      const other = await uploaded('k/b.txt', 'y\n');
      log.clear();
      await processObject(upperWorker(output, { firstRun: 'check' }), other, options);
      expect(log.operations('S3')[0]).toBe('HeadObject');
      // Neither taught the policy: k/b.txt was never remembered, its prefix saw one new object only.
      expect(policy.prefixState(again)).toEqual({ rate: 0, path: 'create' });
    });
  });

  it('rerun of an event without an eTag: skipped with 2 requests, no write and no body read (conditional GET answers 304)', async () => {
    await put('a.txt', 'x\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    log.clear();
    const outcome = await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/already done/) });
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject']);
    expect(log.requests[1]?.input.IfNoneMatch).toMatch(/^".+"$/);
  });

  it('a duplicate whose eTag is the one the output was built from costs exactly 1 S3 request: the HEAD', async () => {
    const etag = await putEtag('a.txt', 'x\n');
    await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true });
    log.clear();
    const outcome = await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true });
    expect(outcome).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/already done: .*the event's content/),
      source: { etag },
      output: { key: outKey('a.txt'), sourceEtag: etag },
    });
    expect(log.operations('S3')).toEqual(['HeadObject']);
    expect(log.requests).toHaveLength(1);
  });

  describe('a non-versioned input bucket: S3 may send one event for two writes made at the same time', () => {
    /** A bucket of the user's own, not versioned: its events carry no versionId. */
    const plainInput = async () => {
      input = await createBucket(clients.s3, uniqueName('plain'));
      log.clear();
    };

    it("a duplicate costs 2 requests there, not 1: the event's eTag alone proves nothing (HEAD, then the conditional GET: 304)", async () => {
      await plainInput();
      const etag = await putEtag('a.txt', 'x\n');
      await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true });
      log.clear();
      const outcome = await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true });
      expect(outcome).toMatchObject({ status: 'skipped', source: { etag } });
      expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject']);
      expect(log.requests[1]?.input.IfNoneMatch).toBe(`"${etag}"`);
    });

    it('the only event of two coalesced writes names the earlier content: the output still ends built from the later', async () => {
      await plainInput();
      const v1 = await putEtag('a.txt', 'v1\n');
      await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true });
      // The second write's notification is the one S3 coalesced away; a duplicate of the first arrives.
      const v2 = await putEtag('a.txt', 'v2\n');
      const outcome = await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true });
      expect(outcome).toMatchObject({ status: 'processed', source: { etag: v2 } });
      expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
    });
  });

  it('an old event after new content (output built from the new ETag): conditional GET answers 304, no regression', async () => {
    const v1 = await putEtag('a.txt', 'v1\n');
    const v2 = await putEtag('a.txt', 'v2\n');
    await processObject(worker, eventOf('a.txt', v2), { store, freshDelivery: true });
    log.clear();
    const outcome = await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'skipped', source: { etag: v2 } });
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject']);
    expect(log.requests[1]?.input.IfNoneMatch).toBe(`"${v2}"`);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
  });

  it('a new event while the output is still built from old content: the GET returns the new content, rebuilt with If-Match', async () => {
    const v1 = await putEtag('a.txt', 'v1\n');
    await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true });
    const v2 = await putEtag('a.txt', 'v2\n');
    log.clear();
    const outcome = await processObject(worker, eventOf('a.txt', v2), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'processed', source: { etag: v2 } });
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
    // The late duplicate of v1's event now takes the GET path (304) and leaves v2's output alone.
    expect(await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
  });

  it("an overwrite between an event and its HEAD: the event is done, the newer content's own event rebuilds", async () => {
    const v1 = await putEtag('a.txt', 'v1\n');
    await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true });
    // v2 lands after v1's duplicate was sent and before it is processed.
    const v2 = await putEtag('a.txt', 'v2\n');
    log.clear();
    expect(await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
      source: { etag: v1 },
    });
    expect(log.operations('S3')).toEqual(['HeadObject']);
    // S3 sends an event for v2 too (every write causes its own): it finds v1's output and rebuilds.
    expect(await processObject(worker, eventOf('a.txt', v2), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
      source: { etag: v2 },
    });
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
    log.clear();
    expect(await processObject(worker, eventOf('a.txt', v2), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    expect(log.operations('S3')).toEqual(['HeadObject']);
  });

  it('an overwrite before the first processing: the output is built from the current content, and its own event is then a 1-request duplicate', async () => {
    const v1 = await putEtag('a.txt', 'v1\n');
    const v2 = await putEtag('a.txt', 'v2\n');
    // v1's event, processed after v2 landed: no output yet, so the GET reads v2.
    expect(await processObject(worker, eventOf('a.txt', v1), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
      source: { etag: v2 },
    });
    log.clear();
    expect(await processObject(worker, eventOf('a.txt', v2), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    expect(log.operations('S3')).toEqual(['HeadObject']);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
  });

  it('a copy of identical content onto the key keeps the ETag: its event is done with 1 request, and that is correct', async () => {
    const etag = await putEtag('a.txt', 'same\n');
    await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true });
    await put('staging.txt', 'same\n');
    const copied = await clients.s3.send(
      new CopyObjectCommand({ Bucket: input, Key: 'a.txt', CopySource: `${input}/staging.txt` }),
    );
    const copiedEtag = (copied.CopyObjectResult?.ETag ?? '').replace(/"/g, '');
    expect(copiedEtag).toBe(etag);
    log.clear();
    const outcome = await processObject(
      worker,
      { ...eventOf('a.txt', copiedEtag), eventName: 'ObjectCreated:Copy' },
      { store, freshDelivery: true },
    );
    expect(outcome).toMatchObject({ status: 'skipped', source: { etag } });
    expect(log.operations('S3')).toEqual(['HeadObject']);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('SAME\n');
  });

  it('a duplicate with a matching eTag still HEADs the side objects its output lists (no GET), and repairs a changed one', async () => {
    const etag = await putEtag('a.txt', 'ok\n!bad\n');
    await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true });
    log.clear();
    expect(await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    expect(log.operations('S3')).toEqual(['HeadObject', 'HeadObject']);
    expect(log.requests[1]?.input.Key).toBe(`quarantine/${input}/a.txt.txt`);

    // A writer of other content replaced the side object after the commit (and died before repairing it).
    await clients.s3.send(
      new PutObjectCommand({ Bucket: output, Key: `quarantine/${input}/a.txt.txt`, Body: '!other content\n' }),
    );
    expect(await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
    });
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toBe('!bad\n');
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('OK\n');
  });

  it('a matching eTag never saves an invalid output: a corrupted output is rebuilt', async () => {
    const etag = await putEtag('a.txt', 'x\n');
    await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true });
    const head = await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
    await clients.s3.send(
      new PutObjectCommand({ Bucket: output, Key: outKey('a.txt'), Body: 'X', Metadata: head.Metadata }),
    );
    log.clear();
    expect(await processObject(worker, eventOf('a.txt', etag), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/invalid/),
    });
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('X\n');
  });

  it('input overwritten after its event: the output reflects the current content, replaced with If-Match', async () => {
    await put('a.txt', 'old\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    const before = await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
    await put('a.txt', 'new\n');
    log.clear();
    const outcome = await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'processed', reason: expect.stringMatching(/replaced \(stale/) });
    expect(log.requests.find((r) => r.operation === 'PutObject')?.input.IfMatch).toBe(before.ETag);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('NEW\n');
  });

  it('a late or replayed event for older content does not regress the output', async () => {
    await put('a.txt', 'v1\n');
    await put('a.txt', 'v2\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    // The v1 event arrives late (or is redelivered): the output already reflects v2.
    const outcome = await processObject(
      worker,
      { ...event('a.txt'), eTag: 'etag-of-v1' },
      { store, freshDelivery: true },
    );
    expect(outcome.status).toBe('skipped');
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
  });

  it('an event whose object no longer exists is skipped with the reason and writes nothing', async () => {
    await put('gone.txt', 'x\n');
    await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'gone.txt' }));
    log.clear();
    const outcome = await processObject(worker, event('gone.txt'), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'skipped', reason: 'input no longer exists: nothing written' });
    expect(log.count({ operation: 'PutObject' })).toBe(0);
    expect(await listKeys(clients.s3, output)).toEqual([]);
  });

  it('an output corrupted or truncated behind our back is detected and replaced', async () => {
    await put('a.txt', 'x\n');
    const first = await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    const head = await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
    // Same metadata, different bytes: only the checksum comparison can catch this.
    await clients.s3.send(
      new PutObjectCommand({ Bucket: output, Key: outKey('a.txt'), Body: 'X', Metadata: head.Metadata }),
    );
    const outcome = await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(first.status).toBe('processed');
    expect(outcome).toMatchObject({ status: 'processed', reason: expect.stringMatching(/invalid/) });
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('X\n');
  });

  it('an output of an older code version is rebuilt', async () => {
    await put('a.txt', 'x\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    const v2 = upperWorker(output, { codeVersion: 'upper@2' });
    expect(await processObject(v2, event('a.txt'), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/old-code/),
    });
    expect(await processObject(v2, event('a.txt'), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
  });

  it('side outputs are published before the main output and removed when newer content has none', async () => {
    await put('a.txt', 'ok\n!bad\n');
    log.clear();
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    const puts = log.requests.filter((r) => r.operation === 'PutObject').map((r) => r.input.Key);
    expect(puts).toEqual([`quarantine/${input}/a.txt.txt`, outKey('a.txt')]);
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toBe('!bad\n');
    await put('a.txt', 'ok\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(await listKeys(clients.s3, output)).toEqual([outKey('a.txt')]);
  });

  it('replacing an output that had no side output deletes nothing (its metadata lists none)', async () => {
    await put('a.txt', 'x\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    await put('a.txt', 'y\n');
    log.clear();
    expect(await processObject(worker, event('a.txt'), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
    });
    expect(log.count({ operation: 'DeleteObject' })).toBe(0);
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject', 'PutObject', 'GetObject']);
  });

  it('overlapping workers on one object: one output, correct content, every call succeeds', async () => {
    await put('a.txt', 'same\n');
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () =>
        processObject(worker, event('a.txt'), { store: new S3ObjectStore(testClients().s3), freshDelivery: true }),
      ),
    );
    expect(outcomes.every((o) => o.status === 'processed' || o.status === 'skipped')).toBe(true);
    expect(outcomes.filter((o) => o.status === 'processed').length).toBeGreaterThanOrEqual(1);
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('SAME\n');
  });

  it('a writer that loses the create race to a different content re-runs the done-check and converges', async () => {
    await put('a.txt', 'v1\n');
    // Worker A reads v1 and, while it transforms, v2 lands and worker B publishes it.
    const slowWorker = upperWorker(output, {
      async transform(inputArg, outputs) {
        const result = await worker.transform(inputArg, outputs);
        await put('a.txt', 'v2\n');
        await processObject(worker, event('a.txt'), {
          store: new S3ObjectStore(testClients().s3),
          freshDelivery: true,
        });
        return result;
      },
    });
    const outcome = await processObject(slowWorker, event('a.txt'), { store, freshDelivery: true });
    expect(outcome.status).toBe('skipped');
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('V2\n');
  });

  it('a writer of older content that loses the race removes the side output it wrote (the winner has none)', async () => {
    await put('a.txt', 'ok\n!bad\n');
    // A reads content with a bad row; before it publishes, clean content lands and B publishes it.
    const slowWorker = upperWorker(output, {
      async transform(inputArg, outputs) {
        const result = await worker.transform(inputArg, outputs);
        await put('a.txt', 'ok\n');
        await processObject(worker, event('a.txt'), {
          store: new S3ObjectStore(testClients().s3),
          freshDelivery: true,
        });
        return result;
      },
    });
    log.clear();
    const outcome = await processObject(slowWorker, event('a.txt'), { store, freshDelivery: true });
    expect(outcome.status).toBe('skipped');
    // A published its quarantine, lost the main output's race, found B's output current, and removed it.
    expect(log.requests.filter((r) => r.operation === 'DeleteObject').map((r) => r.input.Key)).toEqual([
      `quarantine/${input}/a.txt.txt`,
    ]);
    // Conditional: If-Match on the ETag of the object it wrote, never a blind delete.
    expect(log.requests.find((r) => r.operation === 'DeleteObject')?.input.IfMatch).toMatch(/^".+"$/);
    expect(await listKeys(clients.s3, output)).toEqual([outKey('a.txt')]);
  });

  it("a writer of older content that replaced the winner's side output repairs it before it returns", async () => {
    await put('a.txt', 'ok\n!bad-old\n');
    const slowWorker = upperWorker(output, {
      async transform(inputArg, outputs) {
        const result = await worker.transform(inputArg, outputs);
        await put('a.txt', 'new\n!bad-new\n');
        await processObject(worker, event('a.txt'), {
          store: new S3ObjectStore(testClients().s3),
          freshDelivery: true,
        });
        return result;
      },
    });
    const outcome = await processObject(slowWorker, event('a.txt'), { store, freshDelivery: true });
    // A's side output replaced B's (other content), then A lost the main output's race. The
    // done-check of its next round finds the side object B's output lists changed, and rebuilds.
    expect(outcome).toMatchObject({ status: 'processed', reason: expect.stringMatching(/^output replaced/) });
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('NEW\n');
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toBe('!bad-new\n');
  });

  it('the done-check includes the side outputs an output lists: a changed one is rebuilt', async () => {
    await put('a.txt', 'ok\n!bad\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    log.clear();
    expect(await processObject(worker, event('a.txt'), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    // Rerun of an output with a side output: HEAD output, HEAD side output, conditional GET (304).
    expect(log.operations('S3').sort()).toEqual(['GetObject', 'HeadObject', 'HeadObject']);

    await clients.s3.send(
      new PutObjectCommand({ Bucket: output, Key: `quarantine/${input}/a.txt.txt`, Body: '!something else\n' }),
    );
    expect(await processObject(worker, event('a.txt'), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
    });
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toBe('!bad\n');
    expect(await processObject(worker, event('a.txt'), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
  });

  it('a redelivery removes side output debris of other content that the new output does not list', async () => {
    // An attempt on content with a bad row died after its side output, before its main output.
    await put('a.txt', 'ok\n!bad\n');
    await processObject(worker, event('a.txt'), { store });
    await clients.s3.send(new DeleteObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
    // Clean content lands; a fresh delivery (no sweep) leaves the debris, a redelivery removes it.
    await put('a.txt', 'ok\n');
    await processObject(worker, event('a.txt'), { store, freshDelivery: true });
    expect(await listKeys(clients.s3, output)).toEqual([outKey('a.txt'), `quarantine/${input}/a.txt.txt`]);
    expect(await processObject(worker, event('a.txt'), { store })).toMatchObject({
      status: 'skipped',
    });
    expect(await listKeys(clients.s3, output)).toEqual([outKey('a.txt')]);
    // A redelivery of a done item: the rerun's 2 requests + 1 HEAD of the unlisted side output.
    log.clear();
    await processObject(worker, event('a.txt'), { store });
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject', 'HeadObject']);
  });

  it('large outputs stream as a conditional multipart upload and pass the done-check', async () => {
    const line = `${'a'.repeat(1023)}\n`;
    await put('big.txt', line.repeat(12 * 1024)); // 12 MiB
    const big = upperWorker(output, { partBytes: 5 * 1024 * 1024 });
    log.clear();
    const outcome = await processObject(big, event('big.txt'), { store, freshDelivery: true });
    expect(outcome.status).toBe('processed');
    expect(log.count({ operation: 'UploadPart' })).toBe(3);
    const complete = log.requests.find((r) => r.operation === 'CompleteMultipartUpload');
    expect(complete?.input.IfNoneMatch).toBe('*');
    expect(await processObject(big, event('big.txt'), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
  });

  it('a multipart output records its counts, its side outputs and the digest of its bytes, like a single-part one', async () => {
    const line = `${'a'.repeat(1023)}\n`;
    await put('big.txt', `${line.repeat(6 * 1024)}!bad one\n${line.repeat(6 * 1024)}!bad two\n`); // 12 MiB
    const big = upperWorker(output, { partBytes: 5 * 1024 * 1024 });
    log.clear();
    const outcome = await processObject(big, event('big.txt'), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'processed', summary: { lines: 12 * 1024, bad: 2 } });
    // Completed, then sealed: copied onto itself as a new upload with the metadata, on the
    // completed upload's ETag (copy-source-if-match on the part copy, If-Match on the completion).
    const completions = log.requests.filter((r) => r.operation === 'CompleteMultipartUpload');
    expect(log.operations('S3').filter((o) => o.includes('Multipart') || o.includes('UploadPartCopy'))).toEqual([
      'CreateMultipartUpload',
      'CompleteMultipartUpload',
      'CreateMultipartUpload',
      'UploadPartCopy',
      'CompleteMultipartUpload',
    ]);
    const copy = log.requests.find((r) => r.operation === 'UploadPartCopy');
    expect(copy?.input.CopySourceIfMatch).toMatch(/^".+"$/);
    expect(completions[1]?.input.IfMatch).toBe(copy?.input.CopySourceIfMatch);
    const head = await clients.s3.send(
      new HeadObjectCommand({ Bucket: output, Key: outKey('big.txt'), ChecksumMode: 'ENABLED' }),
    );
    const quarantine = await clients.s3.send(
      new HeadObjectCommand({ Bucket: output, Key: `quarantine/${input}/big.txt.txt` }),
    );
    expect(head.Metadata).toMatchObject({
      'rerun-x-lines': String(12 * 1024),
      'rerun-x-bad': '2',
      'rerun-side-outputs': `quarantine=${quarantine.ETag?.replace(/"/g, '')}`,
      'rerun-integrity': expect.stringMatching(/^sha256-parts:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+-1:\d+$/),
    });
    expect(head.ContentType).toBe('application/x-ndjson');
    expect(outcome.output?.summary).toEqual({ lines: String(12 * 1024), bad: '2' });
  });

  it('racing deliveries of one event with a multipart output keep the quarantine (the loser removes only what it created)', async () => {
    const line = `${'b'.repeat(1023)}\n`;
    const eTag = await putEtag('big.txt', `!bad one\n${line.repeat(6 * 1024)}!bad two\n`); // 6 MiB
    // Delivery A reads the input and transforms; delivery B of the same event runs from start to
    // end in between. A's quarantine create then meets B's (412: accepted, same content) and A's
    // CompleteMultipartUpload loses to B's output (412). Before the fix A took B's quarantine for
    // its orphan, and the sweep deleted it, since a multipart output listed no side outputs.
    const plain = upperWorker(output, { partBytes: 5 * 1024 * 1024 });
    const a = upperWorker(output, {
      partBytes: 5 * 1024 * 1024,
      async transform(inputArg, outputs) {
        const result = await plain.transform(inputArg, outputs);
        const b = await processObject(plain, eventOf('big.txt', eTag), {
          store: new S3ObjectStore(testClients().s3),
          freshDelivery: true,
        });
        expect(b.status).toBe('processed');
        return result;
      },
    });
    log.clear();
    const outcome = await processObject(a, eventOf('big.txt', eTag), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'skipped', publishRacesLost: 1 });
    expect(log.count({ operation: 'DeleteObject' })).toBe(0);
    expect(await readText(clients.s3, output, `quarantine/${input}/big.txt.txt`)).toBe('!bad one\n!bad two\n');
    // Every tool's done-check agrees: the duplicate HEADs the output and the quarantine it lists.
    log.clear();
    expect(await processObject(plain, eventOf('big.txt', eTag), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    expect(log.operations('S3')).toEqual(['HeadObject', 'HeadObject']);
  });

  it('many concurrent deliveries of one multipart input with bad rows end with one output that lists its intact quarantine', async () => {
    const line = `${'c'.repeat(1023)}\n`;
    const eTag = await putEtag('big.txt', `${line.repeat(3 * 1024)}!bad one\n${line.repeat(3 * 1024)}!bad two\n`);
    const big = upperWorker(output, { partBytes: 5 * 1024 * 1024 });
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () =>
        processObject(big, eventOf('big.txt', eTag), {
          store: new S3ObjectStore(testClients().s3),
          freshDelivery: true,
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'processed').length).toBeGreaterThanOrEqual(1);
    expect(await readText(clients.s3, output, `quarantine/${input}/big.txt.txt`)).toBe('!bad one\n!bad two\n');
    log.clear();
    expect(await processObject(big, eventOf('big.txt', eTag), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    expect(log.operations('S3')).toEqual(['HeadObject', 'HeadObject']);
  });

  it('a side output deleted behind a multipart output is found by the next duplicate and rebuilt', async () => {
    const line = `${'d'.repeat(1023)}\n`;
    const eTag = await putEtag('big.txt', `${line.repeat(6 * 1024)}!bad\n`);
    const big = upperWorker(output, { partBytes: 5 * 1024 * 1024 });
    await processObject(big, eventOf('big.txt', eTag), { store, freshDelivery: true });
    const quarantineKey = `quarantine/${input}/big.txt.txt`;
    const listed = await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: quarantineKey }));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: output, Key: quarantineKey, IfMatch: listed.ETag }));
    expect(await processObject(big, eventOf('big.txt', eTag), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/^output replaced/),
    });
    expect(await readText(clients.s3, output, quarantineKey)).toBe('!bad\n');
  });

  it('a multipart upload completed but never sealed is not done: the next delivery rebuilds and seals it', async () => {
    const line = `${'e'.repeat(1023)}\n`;
    const eTag = await putEtag('big.txt', line.repeat(6 * 1024));
    // A store whose seal never reaches S3: the writer "dies" between CompleteMultipartUpload and the seal.
    const dying = new S3ObjectStore(testClients().s3);
    dying.sealInPlace = async () => {
      throw new Error('killed before the seal');
    };
    const big = upperWorker(output, { partBytes: 5 * 1024 * 1024 });
    await expect(processObject(big, eventOf('big.txt', eTag), { store: dying, freshDelivery: true })).rejects.toThrow(
      'killed before the seal',
    );
    const unsealed = await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: outKey('big.txt') }));
    expect(unsealed.Metadata?.['rerun-integrity']).toBe('sha256-composite');
    expect(await processObject(big, eventOf('big.txt', eTag), { store, freshDelivery: true })).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/never sealed/),
    });
    expect(await processObject(big, eventOf('big.txt', eTag), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
  });

  it('a multipart side output removed between its completion and its seal: the round starts over, no upload left open', async () => {
    // Found by the simulation tier (npm run test:sim, "delete multi+side"): the input's delete
    // propagated while this delivery was between the quarantine's CompleteMultipartUpload and its
    // seal. The seal answered 404, the writer tried to complete the same upload again (NoSuchUpload),
    // and the record failed with the main output's multipart upload left open.
    const line = `${'f'.repeat(1023)}\n`;
    const eTag = await putEtag('big.txt', `${line.repeat(6 * 1024)}${'!bad '.repeat(1024 * 1024 + 1)}\n`);
    const racing = new S3ObjectStore(testClients().s3);
    const seal = racing.sealInPlace.bind(racing);
    let removed = 0;
    racing.sealInPlace = async (bucket, key, options) => {
      if (key.startsWith('quarantine/') && removed++ === 0) {
        await clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, IfMatch: `"${options.etag}"` }));
      }
      return seal(bucket, key, options);
    };
    const big = upperWorker(output, { partBytes: 5 * 1024 * 1024 });
    const outcome = await processObject(big, eventOf('big.txt', eTag), { store: racing, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'processed', publishRacesLost: 1 });
    const uploads = await clients.s3.send(new ListMultipartUploadsCommand({ Bucket: output }));
    expect(uploads.Uploads ?? []).toEqual([]);
    expect(await processObject(big, eventOf('big.txt', eTag), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
  });

  /**
   * A worker whose first transform, once it has built its content, puts `a` back on a.txt and runs
   * a fresh delivery of `a`'s event to the end, which finds the output built from `a` done: the
   * revert of the simulation tier's "revert single-part+side", at the one moment it bites.
   */
  const revertingWhileBuilt = (a: string, eTagA: string) => {
    let reverted = false;
    return upperWorker(output, {
      async transform(inputArg, outputs) {
        const result = await worker.transform(inputArg, outputs);
        if (reverted) return result;
        reverted = true;
        await put('a.txt', a);
        const inner = await processObject(worker, eventOf('a.txt', eTagA), {
          store: new S3ObjectStore(testClients().s3),
          freshDelivery: true,
        });
        expect(inner, inner.reason).toMatchObject({ status: 'skipped' });
        return result;
      },
    });
  };

  it('an input that changes back to the bytes an earlier event saw while a delivery builds the content in between: rebuilt', async () => {
    // Found by the simulation tier ("revert single-part+side"): A built; B uploaded and its delivery
    // reads B; A uploaded again (the same ETag), and A's delivery finds the output built from A:
    // done. The delivery of B then publishes B over it, If-Match on the output it saw, which nothing
    // had changed. Its check of the input after publishing (304 or not) sees A and rebuilds.
    const a = 'a\n!bad a\n';
    const eTagA = await putEtag('a.txt', a);
    await processObject(worker, eventOf('a.txt', eTagA), { store, freshDelivery: true });
    const eTagB = await putEtag('a.txt', 'b\n');
    const slow = revertingWhileBuilt(a, eTagA);
    const outcome = await processObject(slow, eventOf('a.txt', eTagB), { store, freshDelivery: true });
    expect(outcome).toMatchObject({ status: 'processed', reason: expect.stringMatching(/^output replaced/) });
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('A\n');
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toBe('!bad a\n');
  });

  it('the same revert, with the writer of the content in between killed before its check of the input: its redelivery rebuilds', async () => {
    // Found by the simulation tier ("revert single-part+side, crashes 1"): the redelivery carries the
    // eTag of the content its killed attempt published, so the event's eTag matches the output. Only
    // a fresh delivery may trust that; a repeated one asks S3 about the input, as the killed
    // attempt's closing check would have.
    const a = 'a\n';
    const eTagA = await putEtag('a.txt', a);
    await processObject(worker, eventOf('a.txt', eTagA), { store, freshDelivery: true });
    const eTagB = await putEtag('a.txt', 'b\n');
    const slow = revertingWhileBuilt(a, eTagA);
    // Killed after its publish: the conditional GET of the input (its closing check) never returns.
    const dying = new S3ObjectStore(testClients().s3);
    const get = dying.get.bind(dying);
    dying.get = async (bucket, key, options) => {
      if (options?.ifNoneMatch === eTagB) throw new Error('killed before the closing check');
      return get(bucket, key, options);
    };
    await expect(processObject(slow, eventOf('a.txt', eTagB), { store: dying, freshDelivery: true })).rejects.toThrow(
      'killed before the closing check',
    );
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('B\n');
    // The redelivery of B's message: not fresh (isFreshDelivery), so the done-check's conditional GET
    // finds A and rebuilds.
    log.clear();
    const redelivery = await processObject(slow, eventOf('a.txt', eTagB), { store });
    expect(redelivery).toMatchObject({ status: 'processed', reason: expect.stringMatching(/^output replaced/) });
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('A\n');
    expect(log.operations('S3').slice(0, 2)).toEqual(['HeadObject', 'GetObject']);
  });

  it('an input deleted while its output is built: the delivery removes what it published', async () => {
    const eTag = await putEtag('a.txt', 'x\n!bad\n');
    const slow = upperWorker(output, {
      async transform(inputArg, outputs) {
        const result = await worker.transform(inputArg, outputs);
        await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'a.txt' }));
        return result;
      },
    });
    const outcome = await processObject(slow, eventOf('a.txt', eTag), { store, freshDelivery: true });
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(
        /^input deleted while its output was built: input deleted: removed main, quarantine/,
      ),
    });
    expect(await listKeys(clients.s3, output)).toEqual([]);
  });

  it('a redelivery that finds the input deleted removes the quarantine a killed attempt left without its output', async () => {
    const eTag = await putEtag('a.txt', 'ok\n!bad\n');
    await processObject(worker, eventOf('a.txt', eTag), { store, freshDelivery: true });
    // The attempt was killed between its quarantine PUT and its output PUT; then the input was deleted.
    await clients.s3.send(new DeleteObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'a.txt' }));
    expect(await listKeys(clients.s3, output)).toEqual([`quarantine/${input}/a.txt.txt`]);
    log.clear();
    const outcome = await processObject(worker, eventOf('a.txt', eTag), { store });
    expect(outcome).toMatchObject({ status: 'skipped', reason: 'input no longer exists: nothing written' });
    expect(await listKeys(clients.s3, output)).toEqual([]);
    // Conditional: If-Match on the ETag the HEAD saw, never a blind delete.
    expect(log.requests.find((r) => r.operation === 'DeleteObject')?.input.IfMatch).toMatch(/^".+"$/);
  });

  it('a redelivery that finds the input deleted removes an output whose listed quarantine is gone', async () => {
    // A writer of the deleted content published its output after its quarantine was removed as
    // debris, and was killed before its closing check: the output lists a side object that is gone.
    const eTag = await putEtag('a.txt', 'ok\n!bad\n');
    await processObject(worker, eventOf('a.txt', eTag), { store, freshDelivery: true });
    await clients.s3.send(new DeleteObjectCommand({ Bucket: output, Key: `quarantine/${input}/a.txt.txt` }));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'a.txt' }));
    const outcome = await processObject(worker, eventOf('a.txt', eTag), { store });
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/^input deleted and its output lists a side object that is gone: .*removed main/),
    });
    expect(await listKeys(clients.s3, output)).toEqual([]);
  });

  it('removing the quarantine of a deleted input does not break the output of a re-upload built meanwhile', async () => {
    const eTag = await putEtag('a.txt', 'ok\n!bad\n');
    await processObject(worker, eventOf('a.txt', eTag), { store, freshDelivery: true });
    await clients.s3.send(new DeleteObjectCommand({ Bucket: output, Key: outKey('a.txt') }));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'a.txt' }));
    // Between the sweep's HEAD of the quarantine and its conditional delete, the same bytes are
    // uploaded again and their delivery runs to the end: it accepts the quarantine in place (same
    // content, same ETag) and publishes an output that lists it. The delete's If-Match cannot tell
    // the two apart, so it removes the re-upload's quarantine; the sweeper's closing check repairs it.
    let raced = false;
    const racing = new (class extends S3ObjectStore {
      override async deleteIfMatch(bucket: string, key: string, etag: string) {
        if (!raced && key.startsWith('quarantine/')) {
          raced = true;
          await put('a.txt', 'ok\n!bad\n');
          const reupload = await processObject(worker, event('a.txt'), { store, freshDelivery: true });
          expect(reupload).toMatchObject({ status: 'processed' });
        }
        return super.deleteIfMatch(bucket, key, etag);
      }
    })(clients.s3);
    const outcome = await processObject(worker, eventOf('a.txt', eTag), { store: racing });
    expect(raced).toBe(true);
    expect(outcome).toMatchObject({ status: 'processed' });
    expect(await readText(clients.s3, output, outKey('a.txt'))).toBe('OK\n');
    expect(await readText(clients.s3, output, `quarantine/${input}/a.txt.txt`)).toBe('!bad\n');
    expect(await processObject(worker, event('a.txt'), { store })).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/^already done/),
    });
  });

  it('a transform that fails leaves nothing visible and no multipart upload behind', async () => {
    await put('a.txt', 'x\n'.repeat(4 * 1024 * 1024));
    const failing = upperWorker(output, {
      partBytes: 5 * 1024 * 1024,
      async transform(_input, { output: out }) {
        await out.write(Buffer.alloc(6 * 1024 * 1024, 97));
        throw new Error('transform exploded');
      },
    });
    await expect(processObject(failing, event('a.txt'), { store, freshDelivery: true })).rejects.toThrow(
      'transform exploded',
    );
    expect(await listKeys(clients.s3, output)).toEqual([]);
    const uploads = await clients.s3.send(new ListMultipartUploadsCommand({ Bucket: output }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  it('skips non-create events and folder markers without a request', async () => {
    log.clear();
    expect(
      await processObject(
        worker,
        { ...event('a.txt'), eventName: 'ObjectRemoved:Delete' },
        { store, freshDelivery: true },
      ),
    ).toMatchObject({
      status: 'skipped',
    });
    expect(await processObject(worker, event('folder/'), { store, freshDelivery: true })).toMatchObject({
      status: 'skipped',
    });
    expect(log.requests).toEqual([]);
  });
});
