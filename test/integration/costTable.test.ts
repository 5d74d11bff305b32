import { readFileSync } from 'node:fs';
import { PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import type { S3ObjectEvent } from '../../src/intake/parseS3Event.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { processObject } from '../../src/worker/processObject.js';
import type { ProcessObjectOptions } from '../../src/worker/processObjectOptions.js';
import { removeOutputs } from '../../src/worker/removeOutputs.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

/*
 * The concepts guide's cost table ("Cost per item") held to measured request counts: every count
 * it states, side outputs included, is measured here against the emulator and must appear in its
 * row as written. A change of cost fails this test until the table says the new count.
 */

const GUIDE = new URL('../../docs/guides/02-concepts.md', import.meta.url);

/** The cost table's rows, by their first cell: the cell of S3 requests. */
function costTable(): Map<string, string> {
  const text = readFileSync(GUIDE, 'utf8');
  const section = text.slice(text.indexOf('### Cost per item'));
  const rows = new Map<string, string>();
  for (const line of section.split('\n').slice(2)) {
    if (!line.startsWith('|')) {
      if (rows.size > 0) break;
      continue;
    }
    const cells = line.split(' | ').map((c) => c.replace(/^\| |^\|/, '').trim());
    if (cells[0] === 'run' || cells[0]?.startsWith('---')) continue;
    rows.set(cells[0] ?? '', cells[1] ?? '');
  }
  return rows;
}

/** The row whose first cell starts with `label`. */
function row(label: string): string {
  const found = [...costTable()].find(([name]) => name.startsWith(label));
  if (!found) throw new Error(`the cost table has no row "${label}"`);
  return found[1];
}

/** Upper-cases lines; lines starting with "!" go to the quarantine side output. */
function upperWorker(outputBucket: string, overrides: Partial<WorkerDefinition> = {}): WorkerDefinition {
  return defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket,
    outputKey: (s) => deterministicKey({ prefix: 'out/', source: s, suffix: '.txt' }),
    sideOutputs: { quarantine: (s) => deterministicKey({ prefix: 'quarantine/', source: s, suffix: '.txt' }) },
    partBytes: 5 * 1024 * 1024,
    async transform({ lines }, { output, side }) {
      let good = 0;
      let bad = 0;
      for await (const line of lines()) {
        if (line.startsWith('!')) {
          bad++;
          await side('quarantine').write(`${line}\n`);
        } else {
          good++;
          await output.write(`${line.toUpperCase()}\n`);
        }
      }
      return { good, bad };
    },
    ...overrides,
  });
}

const CLEAN = 'x\ny\n';
const WITH_BAD_ROW = 'x\n!bad\n';

describe("the concepts guide's cost table holds the measured S3 requests of every case", () => {
  const log = new RequestLog();
  const clients = testClients(log);
  const store = new S3ObjectStore(clients.s3);
  let input: string;
  let output: string;
  let worker: WorkerDefinition;

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    await clients.s3.send(
      new PutBucketVersioningCommand({ Bucket: input, VersioningConfiguration: { Status: 'Enabled' } }),
    );
    output = await createBucket(clients.s3, uniqueName('out'));
    worker = upperWorker(output);
  });

  /** Uploads `body` to `key` and returns its event as S3 sends it (eTag, versionId, size). */
  const upload = async (key: string, body: string): Promise<S3ObjectEvent> => {
    const out = await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
    return {
      bucket: input,
      key,
      eventName: 'ObjectCreated:Put',
      eTag: (out.ETag ?? '').replace(/"/g, ''),
      ...(out.VersionId && out.VersionId !== 'null' ? { versionId: out.VersionId } : {}),
      size: Buffer.byteLength(body),
    };
  };
  /** S3's own first delivery, as the batch handler runs it on a standard queue. */
  const s3Delivery: ProcessObjectOptions = { store, freshDelivery: true, createFirst: true, removalsLookAgain: true };
  /** The S3 requests of `run`. */
  const requests = async (run: () => Promise<unknown>): Promise<number> => {
    log.clear();
    await run();
    return log.count({ service: 'S3' });
  };
  const checkFirst = () => upperWorker(output, { firstRun: 'check' });

  it("first run (S3's first delivery of a new object)", async () => {
    const cell = row('first run');
    const plain = await upload('a.txt', CLEAN);
    expect(cell).toContain(`${await requests(() => processObject(worker, plain, s3Delivery))}: GET input, PUT`);
    const checked = await upload('b.txt', CLEAN);
    expect(cell).toContain(`HEAD first, ${await requests(() => processObject(checkFirst(), checked, s3Delivery))})`);
    const side = await upload('c.txt', WITH_BAD_ROW);
    expect(cell).toContain(`with a side output ${await requests(() => processObject(worker, side, s3Delivery))}:`);
    const big = await upload('big.txt', `${'m'.repeat(1023)}\n`.repeat(6 * 1024));
    expect(cell).toContain(
      `a 6 MiB output in 5 MiB parts: ${await requests(() => processObject(worker, big, s3Delivery))}`,
    );
  });

  it('rerun, duplicate', async () => {
    const cell = row('rerun, duplicate');
    const reprocess = { store, freshDelivery: true };
    for (const [key, body, claim] of [
      ['a.txt', CLEAN, (n: number) => `${n}: HEAD output`],
      ['q.txt', WITH_BAD_ROW, (n: number) => `${n} when the output lists a side output`],
    ] as const) {
      const done = await upload(key, body);
      await processObject(worker, done, s3Delivery);
      const message = { ...done, origin: 'rerun-reprocess' };
      expect(cell).toContain(claim(await requests(() => processObject(worker, message, reprocess))));
    }
  });

  it('S3 delivering one event twice (both fresh), and the same bytes uploaded again', async () => {
    const twice = row('S3 delivering one event twice');
    const again = row('the same bytes uploaded again');
    const measure = async (body: string, second: 'duplicate' | 'upload', first: WorkerDefinition) => {
      const key = `${second}-${body.length}-${first.firstRun ?? 'adaptive'}.txt`;
      const created = await upload(key, body);
      await processObject(worker, created, s3Delivery);
      const repeat = second === 'duplicate' ? created : await upload(key, body);
      return requests(() => processObject(first, repeat, s3Delivery));
    };
    const created = await measure(CLEAN, 'duplicate', worker);
    const createdSide = await measure(WITH_BAD_ROW, 'duplicate', worker);
    const checked = await measure(CLEAN, 'duplicate', checkFirst());
    const checkedSide = await measure(WITH_BAD_ROW, 'duplicate', checkFirst());
    expect(twice).toContain(`the second: ${created}: GET input, PUT`);
    expect(twice).toContain(`with a side output in place ${createdSide}:`);
    expect(twice).toContain(`${checked} (the HEAD) when it checks first (${checkedSide} with a side output`);
    const reuploaded = await measure(CLEAN, 'upload', worker);
    const reuploadedSide = await measure(WITH_BAD_ROW, 'upload', worker);
    const reChecked = await measure(CLEAN, 'upload', checkFirst());
    const reCheckedSide = await measure(WITH_BAD_ROW, 'upload', checkFirst());
    expect(again).toContain(`${reuploaded} when created first (${reuploadedSide} with a side output)`);
    expect(again).toContain(`${reChecked} (HEAD) when checked first (${reCheckedSide} with a side output)`);
  });

  it('S3 delivering one event twice in an input bucket that is not versioned', async () => {
    input = await createBucket(clients.s3, uniqueName('plain'));
    const created = await upload('a.txt', CLEAN);
    await processObject(worker, created, s3Delivery);
    const cell = row('S3 delivering one event twice');
    expect(cell).toContain(
      `${await requests(() => processObject(worker, created, s3Delivery))} in an input bucket that is not versioned`,
    );
  });

  it('a duplicate that finds a multipart output completed and not sealed yet, its writer alive', async () => {
    const cell = row('a duplicate that finds a multipart output completed and not sealed yet');
    const big = await upload('big.txt', `${'m'.repeat(1023)}\n`.repeat(6 * 1024));
    // The first delivery stops at its seal until the duplicate has paused once.
    let reachedSeal = () => {};
    const atSeal = new Promise<void>((resolve) => {
      reachedSeal = resolve;
    });
    let releaseSeal = () => {};
    const released = new Promise<void>((resolve) => {
      releaseSeal = resolve;
    });
    const sealing = new S3ObjectStore(testClients().s3);
    const seal = sealing.sealInPlace.bind(sealing);
    sealing.sealInPlace = async (bucket, key, options) => {
      reachedSeal();
      await released;
      return seal(bucket, key, options);
    };
    const writer = processObject(worker, big, { ...s3Delivery, store: sealing });
    await atSeal;
    const invocation = (remainingMs: number) => ({
      remainingTimeMs: () => remainingMs,
      marginMs: 1_000,
      timeLimitMs: 60_000,
      now: Date.now,
    });
    // Duplicates that check first (an input above 8 MiB does; this one is smaller, so its worker says
    // so). With no time left to wait: deferred after its one HEAD.
    const deferred = await requests(() =>
      processObject(checkFirst(), big, { ...s3Delivery, deadline: invocation(2_000) }).catch((error: unknown) => error),
    );
    const waited = await requests(() =>
      processObject(checkFirst(), big, {
        ...s3Delivery,
        deadline: invocation(50_000),
        sleep: async () => {
          releaseSeal();
          await writer;
        },
      }),
    );
    releaseSeal();
    await writer;
    expect(cell).toContain(`${waited}: HEAD output (completed, not sealed), HEAD output after a 0.25 s pause`);
    expect(cell).toContain(`deferred when its invocation has no time left to wait: ${deferred} (the HEAD)`);
  });

  it("the writer's own message received again, its writer killed between the completion and the seal", async () => {
    const big = await upload('big.txt', `${'m'.repeat(1023)}\n`.repeat(6 * 1024));
    const killed = new S3ObjectStore(testClients().s3);
    killed.sealInPlace = async () => {
      throw new Error('killed before the seal');
    };
    await expect(processObject(worker, big, { ...s3Delivery, store: killed, messageId: 'message-1' })).rejects.toThrow(
      'killed before the seal',
    );
    const invocation = {
      remainingTimeMs: () => 50_000,
      marginMs: 1_000,
      timeLimitMs: 60_000,
      now: Date.now,
    };
    const pauses: number[] = [];
    // A redelivery (not fresh) of the same message, well within a function timeout of the completion.
    const again: ProcessObjectOptions = {
      store,
      messageId: 'message-1',
      deadline: invocation,
      removalsLookAgain: true,
      sleep: async (ms) => {
        pauses.push(ms);
      },
    };
    const rebuilt = await requests(() => processObject(worker, big, again));
    expect(pauses).toEqual([]);
    expect(row("the writer's own message received again")).toContain(`${rebuilt}: HEAD output (completed, not sealed`);
  });

  it('rerun, event without an eTag or of older content; repeated delivery', async () => {
    const rerun = row('rerun, event without an eTag');
    const repeated = row('repeated delivery');
    const counts: number[] = [];
    for (const [key, body] of [
      ['a.txt', CLEAN],
      ['q.txt', WITH_BAD_ROW],
    ] as const) {
      const done = await upload(key, body);
      await processObject(worker, done, s3Delivery);
      const { eTag: _eTag, versionId: _versionId, ...withoutETag } = done;
      counts.push(await requests(() => processObject(worker, withoutETag, { store, freshDelivery: true })));
      counts.push(await requests(() => processObject(worker, done, { store })));
    }
    const [plain, plainRepeated, side, sideRepeated] = counts;
    expect(rerun).toContain(`${plain}: HEAD output, conditional GET (304); ${side} with a side output`);
    expect(repeated).toContain(`without a failure recorder: ${plainRepeated}, ${sideRepeated} with a side output`);
  });

  it('replayed old event, and input changed', async () => {
    const old = await upload('a.txt', 'v1\n');
    await processObject(worker, old, s3Delivery);
    const changed = await upload('a.txt', 'v2\n');
    // The table says the overwrite transforms its input once: counted.
    const transforms: string[] = [];
    const counting: WorkerDefinition = {
      ...worker,
      transform: (input, outputs) => {
        transforms.push(input.source.etag);
        return worker.transform(input, outputs);
      },
    };
    expect(row('input changed')).toContain(
      `${await requests(() => processObject(counting, changed, s3Delivery))}: GET, PUT`,
    );
    expect(transforms).toEqual([changed.eTag]);
    expect(row('replayed old event')).toContain(
      `${await requests(() => processObject(worker, old, s3Delivery))}: GET (the current content)`,
    );
    const changedAgain = await upload('a.txt', 'v3\n');
    expect(row('input changed')).toContain(
      `${await requests(() => processObject(checkFirst(), changedAgain, s3Delivery))} when it checks first`,
    );
    const sideOld = await upload('q.txt', 'v1\n!bad\n');
    await processObject(worker, sideOld, s3Delivery);
    const sideChanged = await upload('q.txt', 'v2\n!worse\n');
    expect(row('input changed')).toContain(
      `with a side output in place ${await requests(() => processObject(worker, sideChanged, s3Delivery))}`,
    );
  });

  it('input deleted', async () => {
    const cell = row('input deleted');
    const remove = (key: string) =>
      removeOutputs(
        worker,
        { bucket: input, key, eventName: 'ObjectRemoved:Delete' },
        { store, rebuild: (o) => processObject(worker, o, { store }) },
      );
    const counts: number[] = [];
    for (const [key, body] of [
      ['a.txt', CLEAN],
      ['q.txt', WITH_BAD_ROW],
    ] as const) {
      await processObject(worker, await upload(key, body), s3Delivery);
      await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: `${key}.keep`, Body: '' }));
      const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
      await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: key }));
      counts.push(await requests(() => remove(key)));
      counts.push(await requests(() => remove(key)));
    }
    const [plain, plainAgain, side, sideAgain] = counts;
    expect(cell).toContain(`${side} with a side output in place, ${plain} without one`);
    expect(cell).toContain(`looking again: ${sideAgain} (${plainAgain} without a side output)`);
  });
});
