import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import type { WindowDeadline, WindowRunOptions } from '../../src/window/WindowTaskDefinition.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

const HOURLY = 'year={yyyy}/month={MM}/day={dd}/hour={HH}';
const DAY = '2026-12-05';
const OUTPUT = 'daily/dt=2026-12-05/counts.json';

interface Counts {
  readonly window: string;
  readonly records: number;
  readonly perInput: Record<string, number>;
}

async function text(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A user's daily counts whose large days are built from their hours: `build` counts each input's
 * records; `combine` merges the hours' counts, so both ways give the same bytes for a day.
 */
function dailyCounts(bucket: string, withParts = true) {
  const write = (window: string, perInput: Record<string, number>) => {
    const records = Object.values(perInput).reduce((a, b) => a + b, 0);
    return { doc: `${JSON.stringify({ window, records, perInput })}\n`, records };
  };
  return defineWindowTask({
    name: 'daily-counts',
    codeVersion: 'daily-counts@1',
    partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
    inputs: [{ name: 'hourly', prefix: 'events/', partitions: { kind: 'time', grain: 'hourly', template: HOURLY } }],
    output: { bucket, prefix: 'daily/', fileName: 'counts.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      const perInput: Record<string, number> = {};
      for await (const input of inputs) {
        let lines = 0;
        for await (const line of createInterface({ input: input.body, crlfDelay: Number.POSITIVE_INFINITY })) {
          if (line.trim() !== '') lines++;
        }
        perInput[input.path] = lines;
      }
      const { doc, records } = write(context.window.name, perInput);
      writer.write(doc);
      return { records };
    },
    validate(bytes, context) {
      const doc = JSON.parse(Buffer.from(bytes).toString('utf8')) as Partial<Counts>;
      return doc.window === context.partition ? undefined : `names window ${doc.window}`;
    },
    ...(withParts
      ? {
          parts: {
            grain: 'hourly' as const,
            async combine(hours, writer, context) {
              const perInput: Record<string, number> = {};
              for await (const hour of hours)
                Object.assign(perInput, (JSON.parse(await text(hour.body)) as Counts).perInput);
              const { doc, records } = write(context.window.name, perInput);
              writer.write(doc);
              return { records };
            },
          },
        }
      : {}),
  });
}

/** A logger that keeps its warnings, each as `message: error`. */
function warningsInto(warnings: string[]): Logger {
  const none = () => {};
  return {
    debug: none,
    info: none,
    error: none,
    warn: (message, ...fields) => warnings.push(`${message}: ${String(Object.assign({}, ...fields).error)}`),
  };
}

/** An object store that counts the parts it published (puts at a part's own key, not its staging copy). */
class CountingStore extends S3ObjectStore {
  partsPublished = 0;
  override async put(...args: Parameters<S3ObjectStore['put']>): ReturnType<S3ObjectStore['put']> {
    const written = await super.put(...args);
    if (args[1].startsWith('daily/_parts/') && written.status === 'written') this.partsPublished++;
    return written;
  }
}

describe('a window above maxInputs is built from its parts (a day from its hours) against the emulator', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let bucket: string;
  let store: CountingStore;
  let options: WindowRunOptions;
  const put = (key: string, body: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const deleteKey = (key: string) => clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  const hour = (h: string, name: string, body: string) =>
    put(`events/year=2026/month=12/day=05/hour=${h}/${name}`, body);
  const output = async (): Promise<Counts> => JSON.parse(await readText(clients.s3, bucket, OUTPUT));

  beforeEach(async () => {
    bucket = await createBucket(clients.s3, uniqueName('parts'));
    store = new CountingStore(clients.s3);
    // Two inputs per invocation: the day's five inputs take three hours of at most two each.
    options = { store, reader: new S3PartitionStore(clients.s3), maxInputs: 2 };
    await hour('00', 'a.json', '{"n":1}\n{"n":2}\n');
    await hour('00', 'b.json', '{"n":3}\n');
    await hour('13', 'c.json', '{"n":4}\n');
    await hour('23', 'd.json', '{"n":5}\n{"n":6}\n{"n":7}\n');
    await hour('23', 'e.json', '{"n":8}\n');
    log.clear();
  });

  it('publishes each hour as a part, then the day combined from them: the bytes a direct build gives', async () => {
    const task = dailyCounts(bucket);
    const outcome = await task.run(DAY, options);
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: 'window output published (5 inputs), built from 3 parts (3 built now)',
      inputs: 5,
      parts: { total: 3, built: 3 },
      result: { records: 8 },
    });
    expect(await listKeys(clients.s3, bucket, 'daily/_parts/')).toEqual([
      'daily/_parts/dt=2026-12-05/2026-12-05T00/counts.json',
      'daily/_parts/dt=2026-12-05/2026-12-05T13/counts.json',
      'daily/_parts/dt=2026-12-05/2026-12-05T23/counts.json',
    ]);
    expect(await listKeys(clients.s3, bucket, 'daily/_staging/')).toEqual([]);
    const combined = await readText(clients.s3, bucket, OUTPUT);

    // The same inputs built directly (no bound reached) give the same bytes and the same lineage hash.
    const direct = await dailyCounts(bucket, false).run(DAY, { ...options, maxInputs: 100 });
    expect(direct).toMatchObject({ status: 'skipped', lineageHash: outcome.lineageHash, etag: outcome.etag });
    expect(JSON.parse(combined)).toEqual({
      window: DAY,
      records: 8,
      perInput: {
        'year=2026/month=12/day=05/hour=00/a.json': 2,
        'year=2026/month=12/day=05/hour=00/b.json': 1,
        'year=2026/month=12/day=05/hour=13/c.json': 1,
        'year=2026/month=12/day=05/hour=23/d.json': 3,
        'year=2026/month=12/day=05/hour=23/e.json': 1,
      },
    });
    expect((await task.status(DAY, DAY, options)).map((r) => r.status)).toEqual(['published']);

    // A current day is judged by its own HEAD: no part is looked at again.
    log.clear();
    expect(await task.run(DAY, options)).toMatchObject({ status: 'skipped' });
    expect(log.operations('S3').sort()).toEqual(['HeadObject', 'ListObjectsV2', 'ListObjectsV2']);
  });

  it('a late input rebuilds only its hour, and the day combined again', async () => {
    const task = dailyCounts(bucket);
    const first = await task.run(DAY, options);
    await hour('13', 'late.json', '{"n":9}\n{"n":10}\n');
    log.clear();
    const second = await task.run(DAY, options);
    expect(second).toMatchObject({ status: 'processed', parts: { total: 3, built: 1 }, result: { records: 10 } });
    const publishes = log.requests.filter(
      (r) => r.operation === 'PutObject' && !String(r.input.Key).includes('_staging'),
    );
    expect(publishes.map((r) => [r.input.Key, r.input.IfMatch !== undefined])).toEqual([
      ['daily/_parts/dt=2026-12-05/2026-12-05T13/counts.json', true],
      [OUTPUT, true],
      [expect.stringMatching(/^daily\/dt=2026-12-05\/_manifest\//), false],
    ]);
    expect(second.lineageHash).not.toBe(first.lineageHash);
    expect((await output()).perInput['year=2026/month=12/day=05/hour=13/late.json']).toBe(2);
  });

  it('an invocation that ends between parts keeps the parts it published; the next receive builds only the rest', async () => {
    const task = dailyCounts(bucket);
    // The deadline comes near once the first part is published.
    const deadline: WindowDeadline = {
      remainingTimeMs: () => (store.partsPublished >= 1 ? 0 : 60_000),
      marginMs: 1_000,
      timeLimitMs: 60_000,
      now: () => 0,
    };
    await expect(task.run(DAY, { ...options, deadline })).rejects.toMatchObject({
      name: 'WindowPartsPendingError',
      retryable: true,
      built: 1,
      current: 1,
      total: 3,
      message:
        '2026-12-05: 1 of 3 parts are current (1 built now); the deadline came near before the rest, which are built from where this stopped',
    });
    expect(await listKeys(clients.s3, bucket, 'daily/')).toEqual([
      'daily/_parts/dt=2026-12-05/2026-12-05T00/counts.json',
    ]);
    // A run out of time before it built any part is a plain deadline: it made no progress to go on from.
    const noTime: WindowDeadline = { ...deadline, remainingTimeMs: () => 0 };
    await expect(task.run(DAY, { ...options, deadline: noTime })).rejects.toMatchObject({
      name: 'DeadlineNearError',
      retryable: true,
    });
    const resumed = await task.run(DAY, options);
    expect(resumed).toMatchObject({ status: 'processed', parts: { total: 3, built: 2 }, result: { records: 8 } });
    expect(store.partsPublished).toBe(3);
  });

  it('two racing builds of a large day publish each part and the day once, and leave no staging copy', async () => {
    const task = dailyCounts(bucket);
    const outcomes = await Promise.all([task.run(DAY, options), task.run(DAY, options)]);
    expect(new Set(outcomes.map((o) => o.etag)).size).toBe(1);
    expect((await output()).records).toBe(8);
    expect(await listKeys(clients.s3, bucket, 'daily/_staging/')).toEqual([]);
    expect(await listKeys(clients.s3, bucket, 'daily/dt=2026-12-05/_manifest/')).toHaveLength(1);
    expect(store.partsPublished).toBe(3);
  });

  it('removes the parts its output no longer reads: an hour whose inputs are gone, then all once the day is small', async () => {
    const task = dailyCounts(bucket);
    await task.run(DAY, options);
    const parts = (hours: string[]) => hours.map((h) => `daily/_parts/dt=2026-12-05/2026-12-05T${h}/counts.json`);
    // Hour 13 loses its only input; the day (4 inputs) is still above maxInputs and built from two hours.
    await deleteKey(`events/year=2026/month=12/day=05/hour=13/c.json`);
    // Something of the user's own under the parts' root is not a part: it is left alone.
    await put('daily/_parts/dt=2026-12-05/notes.txt', 'mine');
    const fewer = await task.run(DAY, options);
    expect(fewer).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/built from 2 parts \(0 built now\); 1 part no longer read removed$/),
    });
    expect(await listKeys(clients.s3, bucket, 'daily/_parts/')).toEqual([
      ...parts(['00', '23']),
      'daily/_parts/dt=2026-12-05/notes.txt',
    ]);
    // Down to two inputs, the day is built directly, and none of its parts is read any more.
    await deleteKey('events/year=2026/month=12/day=05/hour=23/d.json');
    await deleteKey('events/year=2026/month=12/day=05/hour=23/e.json');
    log.clear();
    const direct = await task.run(DAY, options);
    expect(direct).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/; 2 parts no longer read removed$/),
    });
    expect(direct).not.toHaveProperty('parts');
    expect(await listKeys(clients.s3, bucket, 'daily/_parts/')).toEqual(['daily/_parts/dt=2026-12-05/notes.txt']);
    // Each removal was conditional on the ETag its listing gave.
    const deletes = log.requests.filter(
      (r) => r.operation === 'DeleteObject' && String(r.input.Key).includes('_parts'),
    );
    expect(deletes.map((r) => r.input.IfMatch)).toEqual([
      expect.stringMatching(/^".+"$/),
      expect.stringMatching(/^".+"$/),
    ]);
    // A day built directly with no parts left lists them once and removes nothing.
    await hour('05', 'late.json', '{"n":11}\n');
    expect((await task.run(DAY, options)).reason).not.toContain('removed');
  });

  it('keeps a part rewritten after its listing, and a removal that fails is logged, never the outcome', async () => {
    const task = dailyCounts(bucket);
    await task.run(DAY, options);
    for (const key of ['13/c.json', '23/d.json', '23/e.json'])
      await deleteKey(`events/year=2026/month=12/day=05/hour=${key}`);
    const part13 = 'daily/_parts/dt=2026-12-05/2026-12-05T13/counts.json';
    // A concurrent writer rewrites hour 13's part between the prune's listing and its delete.
    const reader = new S3PartitionStore(clients.s3);
    const listAll = reader.listAll.bind(reader);
    reader.listAll = async (...args) => {
      const listed = await listAll(...args);
      if (args[1].prefix === 'daily/_parts/dt=2026-12-05/') await put(part13, 'rewritten');
      return listed;
    };
    const warnings: string[] = [];
    const logger = warningsInto(warnings);
    const outcome = await task.run(DAY, { ...options, reader, logger, maxInputs: 100 });
    // Built directly from the two inputs left: hours 00 and 23 removed, hour 13 (rewritten) kept.
    expect(outcome.reason).toMatch(/; 2 parts no longer read removed$/);
    expect(await listKeys(clients.s3, bucket, 'daily/_parts/')).toEqual([part13]);
    expect(await readText(clients.s3, bucket, part13)).toBe('rewritten');
    expect(warnings).toEqual([]);

    // A store that refuses to delete parts (a policy): the day is published all the same, the refusal logged.
    await hour('05', 'late.json', '{"n":11}\n');
    const refusing = new CountingStore(clients.s3);
    const deleteIfMatch = refusing.deleteIfMatch.bind(refusing);
    refusing.deleteIfMatch = async (b, key, etag) => {
      if (key.startsWith('daily/_parts/')) throw new Error('AccessDenied: not allowed');
      return deleteIfMatch(b, key, etag);
    };
    const refused = await task.run(DAY, { ...options, store: refusing, logger, maxInputs: 100 });
    expect(refused).toMatchObject({ status: 'processed' });
    expect(warnings).toEqual(['parts no longer read were not all removed: AccessDenied: not allowed']);
  });

  it('refuses a day to build whose single hour is above maxInputs, having read no input', async () => {
    await hour('13', 'f.json', '{"n":9}\n');
    await hour('13', 'g.json', '{"n":9}\n');
    log.clear();
    await expect(dailyCounts(bucket).run(DAY, options)).rejects.toMatchObject({
      name: 'WindowTooLargeError',
      retryable: false,
      message: expect.stringContaining(
        '2026-12-05 has 7 lineage entries (inputs); its hourly part 2026-12-05T13 alone has 3, above the bound of 2 (maxInputs)',
      ),
    });
    // The listing, and the day's own HEAD (a current day would be left as it is); no part, no input.
    expect(log.operations('S3')).toEqual(['ListObjectsV2', 'HeadObject']);
  });

  it('without parts, a day above maxInputs is refused as before', async () => {
    await expect(dailyCounts(bucket, false).run(DAY, options)).rejects.toMatchObject({
      name: 'WindowTooLargeError',
      message: expect.stringContaining('or give the task parts of a finer grain'),
    });
  });
});
