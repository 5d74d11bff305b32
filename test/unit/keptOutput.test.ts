import { describe, expect, it } from 'vitest';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { processObject } from '../../src/worker/processObject.js';
import type { ProcessObjectOptions } from '../../src/worker/processObjectOptions.js';
import { MemoryS3 } from '../support/memoryS3.js';

/*
 * A create-first overwrite publishes what its create built (src/worker/keptOutput.ts): after the 412
 * and the HEAD, a PUT If-Match on the HEAD's ETag and the closing conditional GET (304: the input is
 * still the content it read), with one transform. Against the simulation tier's in-memory S3;
 * the same against moto, counted, in test/integration/costTable.test.ts.
 */

const IN = 'in';
const OUT = 'out';
const outKey = (key: string) => `out/${IN}/${key}.txt`;
const quarantineKey = (key: string) => `quarantine/${IN}/${key}.txt`;

/** Upper-cases lines ("!" lines to the quarantine), counting the transforms it runs. */
function countingWorker(overrides: Partial<WorkerDefinition> = {}): { worker: WorkerDefinition; transforms: string[] } {
  const transforms: string[] = [];
  const worker = defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket: OUT,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
    sideOutputs: { quarantine: (s) => deterministicKey({ prefix: 'quarantine/', source: s, suffix: '.txt' }) },
    async transform({ source, body }, { output, side }) {
      transforms.push(source.etag);
      let text = '';
      for await (const chunk of body) text += String(chunk);
      for (const line of text.split('\n').filter(Boolean)) {
        if (line.startsWith('!')) await side('quarantine').write(`${line}\n`);
        else await output.write(`${line.toUpperCase()}\n`);
      }
      return {};
    },
    ...overrides,
  });
  return { worker, transforms };
}

function setup(overrides: Partial<WorkerDefinition> = {}, minPartBytes?: number) {
  const s3 = new MemoryS3([IN, OUT], minPartBytes ? { minPartBytes } : {});
  const store = new S3ObjectStore(s3.client, minPartBytes ? { minPartBytes } : {});
  const { worker, transforms } = countingWorker(overrides);
  const event = (key: string, size: number) => ({ bucket: IN, key, eventName: 'ObjectCreated:Put', size });
  /** S3's own first delivery, creating first. */
  const deliver = (key: string, size: number, options: Partial<ProcessObjectOptions> = {}) =>
    processObject(worker, event(key, size), { store, freshDelivery: true, createFirst: true, ...options });
  /** Builds the output of `body` (checking first), then uploads `next` over it: the overwrite. */
  const overwrite = async (key: string, body: string, next: string) => {
    s3.write(IN, key, body);
    await processObject(worker, event(key, body.length), { store });
    transforms.length = 0;
    const etag = s3.write(IN, key, next);
    s3.clear();
    return etag;
  };
  /** The requests since the last clear, with the condition each carried. */
  const described = () =>
    s3.requests.map(({ name, input }) => {
      const condition = input.IfMatch ? ` If-Match` : input.IfNoneMatch ? ` If-None-Match ${input.IfNoneMatch}` : '';
      return `${name} ${String(input.Key)}${condition}`;
    });
  return { s3, store, worker, transforms, deliver, overwrite, described };
}

describe('a create-first overwrite publishes what its create built', () => {
  it('after the 412 and the HEAD: PUT If-Match, then the closing GET (304); 5 requests, one transform', async () => {
    const { s3, transforms, deliver, overwrite, described } = setup();
    const etag = await overwrite('a.txt', 'x\n', 'y\n');
    const logged: { message: string; fields: Record<string, unknown> }[] = [];
    const keep = (message: string, ...fields: Record<string, unknown>[]) => {
      logged.push({ message, fields: Object.assign({}, ...fields) });
    };
    const outcome = await deliver('a.txt', 2, { logger: { debug: keep, info: keep, warn: keep, error: keep } });
    expect(logged).toContainEqual({
      message: 'replacing output with the one the create built',
      fields: expect.objectContaining({ outputKey: outKey('a.txt'), was: expect.stringMatching(/^stale: built from/) }),
    });
    expect(described()).toEqual([
      'GetObject a.txt',
      `PutObject ${outKey('a.txt')} If-None-Match *`,
      `HeadObject ${outKey('a.txt')}`,
      `PutObject ${outKey('a.txt')} If-Match`,
      `GetObject a.txt If-None-Match "${etag}"`,
    ]);
    expect(transforms).toEqual([etag]);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Y\n');
    expect(outcome).toMatchObject({
      status: 'processed',
      publishRacesLost: 1,
      source: { etag },
      output: { sourceEtag: etag, etag: s3.etag(OUT, outKey('a.txt')) },
    });
    expect(outcome.reason).toMatch(/^output replaced \(stale: built from input ETag /);
  });

  it('the input changed between the read and the HEAD: the kept bytes go out, the closing check builds the new content', async () => {
    const { s3, transforms, deliver, overwrite, described } = setup();
    const read = await overwrite('a.txt', 'x\n', 'y\n');
    let changed = '';
    const puts: string[] = [];
    s3.before = (request) => {
      if (changed === '' && request.name === 'HeadObject') changed = s3.write(IN, 'a.txt', 'z\n');
      if (request.name === 'PutObject' && request.input.Key === outKey('a.txt')) puts.push(String(request.input.Body));
    };
    const outcome = await deliver('a.txt', 2);
    // The create's PUT (412) and the kept publish carry Y; the closing check finds Z and builds it.
    expect(puts).toEqual(['Y\n', 'Y\n', 'Z\n']);
    expect(described().slice(3, 6)).toEqual([
      `PutObject ${outKey('a.txt')} If-Match`,
      `GetObject a.txt If-None-Match "${read}"`,
      `HeadObject ${outKey('a.txt')}`,
    ]);
    expect(transforms).toEqual([read, changed]);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Z\n');
    expect(outcome).toMatchObject({ status: 'processed', output: { sourceEtag: changed } });
  });

  it('the changed input already built by its own delivery: replaced by the kept bytes, then built again', async () => {
    const { s3, store, worker, transforms, deliver, overwrite } = setup();
    const read = await overwrite('a.txt', 'x\n', 'y\n');
    let raced = false;
    s3.before = async (request) => {
      if (raced || request.name !== 'HeadObject') return;
      raced = true;
      s3.write(IN, 'a.txt', 'z\n');
      await processObject(worker, { bucket: IN, key: 'a.txt', eventName: 'ObjectCreated:Put' }, { store });
    };
    const outcome = await deliver('a.txt', 2);
    // Y (read before Z) replaced Z's output for a while; the closing check saw Z and built it again.
    const [, zBuilt, zAgain] = transforms;
    expect(transforms).toEqual([read, zBuilt, zAgain]);
    expect(zAgain).toBe(zBuilt);
    expect(zAgain).not.toBe(read);
    expect(outcome).toMatchObject({ status: 'processed', publishRacesLost: 1, output: { sourceEtag: zAgain } });
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Z\n');
  });

  it('an output built from the same content by another writer is found done: the kept bytes are not published', async () => {
    const { s3, store, worker, transforms, deliver, overwrite, described } = setup();
    const etag = await overwrite('a.txt', 'x\n', 'y\n');
    let raced = false;
    s3.before = async (request) => {
      if (raced || request.name !== 'PutObject') return;
      raced = true;
      await processObject(worker, { bucket: IN, key: 'a.txt', eventName: 'ObjectCreated:Put' }, { store });
    };
    const outcome = await deliver('a.txt', 2);
    expect(outcome).toMatchObject({ status: 'skipped', publishRacesLost: 1 });
    expect(outcome.reason).toMatch(/^already done/);
    expect(transforms).toEqual([etag, etag]);
    expect(described().filter((r) => r.includes('If-Match'))).toEqual([`PutObject ${outKey('a.txt')} If-Match`]);
  });

  it("an output the event proves current (S3's older event, a versioned write) is not replaced by the kept bytes", async () => {
    const { s3, store, worker, transforms, overwrite, described } = setup();
    s3.write(IN, 'a.txt', 'x\n');
    await processObject(worker, { bucket: IN, key: 'a.txt', eventName: 'ObjectCreated:Put' }, { store });
    const older = s3.etag(IN, 'a.txt');
    const newer = await overwrite('a.txt', 'x\n', 'y\n');
    // X's event, delivered after Y was uploaded: the create reads Y, and the HEAD finds X's output, which the
    // event proves current (Y's own event will replace it): done, with no publish.
    const event = { bucket: IN, key: 'a.txt', eventName: 'ObjectCreated:Put', size: 2, eTag: older, versionId: 'v1' };
    const outcome = await processObject(worker, event, { store, freshDelivery: true, createFirst: true });
    expect(transforms).toEqual([newer]);
    expect(described().filter((r) => r.startsWith('PutObject'))).toEqual([
      `PutObject ${outKey('a.txt')} If-None-Match *`,
    ]);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('X\n');
    expect(outcome).toMatchObject({ status: 'skipped', publishRacesLost: 1 });
  });

  it('the kept publish loses its If-Match to another writer: the next round finds that output done', async () => {
    const { s3, store, worker, transforms, deliver, overwrite } = setup();
    const etag = await overwrite('a.txt', 'x\n', 'y\n');
    let raced = false;
    s3.before = async (request) => {
      if (raced || request.name !== 'PutObject' || !request.input.IfMatch) return;
      raced = true;
      await processObject(worker, { bucket: IN, key: 'a.txt', eventName: 'ObjectCreated:Put' }, { store });
    };
    const outcome = await deliver('a.txt', 2);
    expect(raced).toBe(true);
    // The other writer built Y as well; this call's If-Match answered 412, and its next round found Y done.
    expect(transforms).toEqual([etag, etag]);
    expect(outcome).toMatchObject({ status: 'skipped', publishRacesLost: 2 });
    expect(outcome.reason).toMatch(/^already done/);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Y\n');
  });

  it("a round that checked first and lost its race keeps nothing: the next round judges the other writer's output", async () => {
    const { s3, store, worker, transforms, deliver, overwrite } = setup();
    const read = await overwrite('a.txt', 'x\n', 'y\n');
    let changed = '';
    s3.before = async (request) => {
      if (changed !== '' || request.name !== 'PutObject' || !request.input.IfMatch) return;
      changed = s3.write(IN, 'a.txt', 'z\n');
      await processObject(worker, { bucket: IN, key: 'a.txt', eventName: 'ObjectCreated:Put' }, { store });
    };
    // Checking first (no create): its If-Match loses to Z's output, which the next round finds done.
    const outcome = await deliver('a.txt', 2, { createFirst: false });
    expect(transforms).toEqual([read, changed]);
    expect(outcome).toMatchObject({ status: 'skipped', publishRacesLost: 1 });
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Z\n');
  });

  it('an output removed between the 412 and the HEAD is created from the kept bytes (If-None-Match)', async () => {
    const { s3, transforms, deliver, overwrite, described } = setup();
    const etag = await overwrite('a.txt', 'x\n', 'y\n');
    s3.before = (request) => {
      if (request.name === 'HeadObject') s3.remove(OUT, outKey('a.txt'));
    };
    const outcome = await deliver('a.txt', 2, { removalsLookAgain: true });
    // A create: with the removal's look again (removalsLookAgain), no closing check follows it.
    expect(described().slice(3)).toEqual([`PutObject ${outKey('a.txt')} If-None-Match *`]);
    expect(s3.text(OUT, outKey('a.txt'))).toBe('Y\n');
    expect(transforms).toEqual([etag]);
    expect(outcome).toMatchObject({ status: 'processed', reason: 'output created' });
  });

  it('with a quarantine: it is published once, and the kept output lists it; checked once more', async () => {
    const { s3, transforms, deliver, overwrite, described } = setup();
    const etag = await overwrite('q.txt', 'x\n!old\n', 'y\n!new\n');
    const outcome = await deliver('q.txt', 7);
    expect(transforms).toEqual([etag]);
    const writes = described().filter((r) => r.startsWith('PutObject'));
    expect(writes).toEqual([
      `PutObject ${quarantineKey('q.txt')} If-None-Match *`,
      `PutObject ${quarantineKey('q.txt')} If-Match`,
      `PutObject ${outKey('q.txt')} If-None-Match *`,
      `PutObject ${outKey('q.txt')} If-Match`,
    ]);
    // The side-output protocol's closing done-check: the output and the quarantine it lists, the input.
    expect(described().slice(-3).sort()).toEqual([
      `GetObject q.txt If-None-Match "${etag}"`,
      `HeadObject ${outKey('q.txt')}`,
      `HeadObject ${quarantineKey('q.txt')}`,
    ]);
    expect(s3.text(OUT, quarantineKey('q.txt'))).toBe('!new\n');
    expect(outcome).toMatchObject({ status: 'processed', output: { sourceEtag: etag } });
  });

  it('a round whose quarantine was lost before its main output keeps nothing: built again, listing it', async () => {
    const { s3, transforms, deliver } = setup({ partBytes: 16 }, 16);
    const body = `x\n${'!bad row\n'.repeat(8)}`;
    const etag = s3.write(IN, 'a.txt', body);
    let removed = false;
    s3.before = () => {
      const last = s3.requests.at(-1);
      if (!removed && last?.name === 'CompleteMultipartUpload' && last.input.Key === quarantineKey('a.txt')) {
        removed = true;
        s3.remove(OUT, quarantineKey('a.txt'));
      }
    };
    const outcome = await deliver('a.txt', body.length);
    expect(removed).toBe(true);
    expect(transforms).toEqual([etag, etag]);
    expect(outcome).toMatchObject({ status: 'processed', publishRacesLost: 1 });
    expect(s3.text(OUT, quarantineKey('a.txt'))).toBe('!bad row\n'.repeat(8));
  });

  it('a multipart output is not kept: the next round reads and transforms again', async () => {
    const { transforms, deliver, overwrite, described } = setup({ partBytes: 8 }, 8);
    const etag = await overwrite('m.txt', 'x\n', 'yyyyyyyyyyyy\n');
    await deliver('m.txt', 13);
    expect(transforms).toEqual([etag, etag]);
    expect(described()).toContain(`AbortMultipartUpload ${outKey('m.txt')}`);
  });
});
