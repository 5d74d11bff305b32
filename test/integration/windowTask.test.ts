import { createInterface } from 'node:readline';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

const HOURLY = 'year={yyyy}/month={MM}/day={dd}/hour={HH}';
const DAY = '2026-12-05';

/** A user's daily window over hourly inputs: records per hour, as one JSON document. */
function dailyCounts(bucket: string) {
  return defineWindowTask({
    name: 'daily-counts',
    codeVersion: 'daily-counts@1',
    partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
    inputs: [{ name: 'hourly', prefix: 'events/', partitions: { kind: 'time', grain: 'hourly', template: HOURLY } }],
    output: { bucket, prefix: 'daily/', fileName: 'counts.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      const perInput: Record<string, number> = {};
      let records = 0;
      for await (const input of inputs) {
        let lines = 0;
        for await (const line of createInterface({ input: input.body, crlfDelay: Number.POSITIVE_INFINITY })) {
          if (line.trim() !== '') lines++;
        }
        perInput[input.path] = lines;
        records += lines;
      }
      writer.write(`${JSON.stringify({ window: context.window.name, records, perInput })}\n`);
      return { records };
    },
    validate(bytes, context) {
      const doc = JSON.parse(Buffer.from(bytes).toString('utf8')) as { window?: string };
      return doc.window === context.partition ? undefined : `names window ${doc.window}`;
    },
  });
}

describe('a user-defined hourly-to-daily window task against the emulator', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let bucket: string;
  let task: ReturnType<typeof dailyCounts>;
  let options: { store: S3ObjectStore; reader: S3PartitionStore };
  const put = (key: string, body: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const hour = (h: string, name: string, body: string, day = '05') =>
    put(`events/year=2026/month=12/day=${day}/hour=${h}/${name}`, body);
  const output = () => readText(clients.s3, bucket, 'daily/dt=2026-12-05/counts.json').then((t) => JSON.parse(t));

  beforeEach(async () => {
    bucket = await createBucket(clients.s3, uniqueName('win'));
    task = dailyCounts(bucket);
    options = { store: new S3ObjectStore(clients.s3), reader: new S3PartitionStore(clients.s3) };
    await hour('00', 'a.json', '{"n":1}\n{"n":2}\n');
    await hour('13', 'b.json', '{"n":3}\n');
    await hour('23', 'c.json', '{"n":4}\n');
    // The neighbouring days' last and first hours: not in 2026-12-05.
    await hour('23', 'before.json', '{"n":0}\n', '04');
    await hour('00', 'after.json', '{"n":0}\n', '06');
    log.clear();
  });

  it('builds the day from exactly the hours that intersect it, with one listing of its inputs', async () => {
    const outcome = await task.run(DAY, options);
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: 'window output published (3 inputs)',
      outputKey: 'daily/dt=2026-12-05/counts.json',
      inputs: 3,
      skipped: [],
      result: { records: 4 },
    });
    expect(await output()).toEqual({
      window: DAY,
      records: 4,
      perInput: {
        'year=2026/month=12/day=05/hour=00/a.json': 2,
        'year=2026/month=12/day=05/hour=13/b.json': 1,
        'year=2026/month=12/day=05/hour=23/c.json': 1,
      },
    });
    const lists = log.requests.filter((r) => r.operation === 'ListObjectsV2').map((r) => r.input.Prefix);
    // The day's 24 hours in one listing of the day's prefix in the hourly template, then the markers.
    expect(lists).toEqual(['events/year=2026/month=12/day=05/hour=', 'daily/dt=2026-12-05/_manifest/']);
    expect(await listKeys(clients.s3, bucket, 'daily/')).toEqual([
      `daily/dt=2026-12-05/_manifest/${outcome.lineageHash}/${outcome.etag}/daily-counts%401`,
      'daily/dt=2026-12-05/counts.json',
    ]);
    // A second run finds it current: one listing, one HEAD, the marker listing; nothing read or written.
    log.clear();
    expect(await task.run(DAY, options)).toMatchObject({ status: 'skipped', etag: outcome.etag });
    expect(log.operations('S3').sort()).toEqual(['HeadObject', 'ListObjectsV2', 'ListObjectsV2']);
  });

  it('reports a key that matches no window as skipped with its reason, and builds the rest', async () => {
    await put('events/year=2026/month=12/day=05/hour=7/stray.json', '{"n":9}\n');
    const outcome = await task.run(DAY, options);
    expect(outcome.skipped).toEqual([
      {
        source: 'hourly',
        key: 'events/year=2026/month=12/day=05/hour=7/stray.json',
        reason:
          'not in any hourly window of year={yyyy}/month={MM}/day={dd}/hour={HH}: the key does not start with ' +
          'year={yyyy}/month={MM}/day={dd}/hour={HH}/',
      },
    ]);
    expect(outcome.result).toEqual({ records: 4 });
    const [report] = await task.status(DAY, DAY, options);
    expect(report?.skipped.map((s) => s.key)).toEqual(['events/year=2026/month=12/day=05/hour=7/stray.json']);
  });

  it('a late input changes the lineage: status calls the day stale, and the next run rebuilds it with If-Match', async () => {
    const first = await task.run(DAY, options);
    expect((await task.status(DAY, DAY, options)).map((r) => r.status)).toEqual(['published']);
    await hour('05', 'late.json', '{"n":5}\n{"n":6}\n');
    const [stale] = await task.status(DAY, DAY, options);
    expect(stale).toMatchObject({ status: 'stale', reason: 'inputs changed since publish (4 inputs now)' });
    log.clear();
    const rebuilt = await task.run(DAY, options);
    expect(rebuilt).toMatchObject({
      status: 'processed',
      reason: 'window output replaced (inputs changed since it was built (lineage hash differs))',
      result: { records: 6 },
    });
    const publish = log.requests.find(
      (r) => r.operation === 'PutObject' && r.input.Key === 'daily/dt=2026-12-05/counts.json',
    );
    expect(publish?.input.IfMatch).toBe(`"${first.etag}"`);
    expect((await output()).records).toBe(6);
    expect((await task.status('2026-12-04', DAY, options)).map((r) => `${r.window.name} ${r.status}`)).toEqual([
      '2026-12-04 missing',
      '2026-12-05 published',
    ]);
  });

  it('never publishes a staged copy its validation refuses, even one whose validation throws: retryable, nothing published', async () => {
    const broken = defineWindowTask({
      ...task.definition,
      build: async (inputs, writer) => {
        for await (const input of inputs) input.body.resume();
        writer.write('not json');
        return { records: 0 };
      },
    });
    const run = broken.run(DAY, options);
    await expect(run).rejects.toMatchObject({
      name: 'WindowOutputInvalidError',
      retryable: true,
      message: expect.stringMatching(
        /staged window output s3:\/\/.*\/daily\/_staging\/dt=2026-12-05\/[0-9a-f]{64}\.json is invalid: its validation threw/,
      ),
    });
    expect(await listKeys(clients.s3, bucket, 'daily/dt=2026-12-05/')).toEqual([]);
  });

  it('two racing builds of one window publish it once and leave one marker and no staging copy', async () => {
    const outcomes = await Promise.all([task.run(DAY, options), task.run(DAY, options)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['processed', 'skipped']);
    expect(new Set(outcomes.map((o) => o.etag)).size).toBe(1);
    expect(await listKeys(clients.s3, bucket, 'daily/dt=2026-12-05/_manifest/')).toHaveLength(1);
    expect(await listKeys(clients.s3, bucket, 'daily/_staging/')).toEqual([]);
  });

  describe("a weekly task chained onto the daily task's outputs", () => {
    const WEEK_DAYS = [
      '2026-11-30',
      '2026-12-01',
      '2026-12-02',
      '2026-12-03',
      '2026-12-04',
      '2026-12-05',
      '2026-12-06',
    ];
    const weekly = () =>
      defineWindowTask({
        name: 'weekly-counts',
        codeVersion: 'weekly-counts@1',
        partitions: { kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' },
        inputs: [{ name: 'daily', outputsOf: task }],
        output: { bucket, prefix: 'weekly/', fileName: 'week.json' },
        async build(inputs, writer) {
          let records = 0;
          let days = 0;
          for await (const input of inputs) {
            const chunks: Buffer[] = [];
            for await (const chunk of input.body) chunks.push(chunk as Buffer);
            records += (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { records: number }).records;
            days++;
          }
          writer.write(`${JSON.stringify({ days, records })}\n`);
          return { days, records };
        },
      });

    it('reads the 7 published days of its ISO week (not their markers), and is judged stale when a day is rebuilt', async () => {
      for (const day of WEEK_DAYS) await task.run(day, options);
      await put('daily/dt=2026-12-05/notes.txt', 'not an output');
      const week = weekly();
      const first = await week.run('2026-W49', options);
      // 4 records on 2026-12-05, and the neighbouring days' hours 23 of 12-04 and 00 of 12-06: 6 in the week.
      expect(first).toMatchObject({ status: 'processed', inputs: 7, result: { days: 7, records: 6 } });
      expect(first.skipped).toEqual([
        {
          source: 'daily',
          key: 'daily/dt=2026-12-05/notes.txt',
          reason:
            'not the output of window task "daily-counts" for 2026-12-05 (daily/dt=2026-12-05/counts.json), nor its marker',
        },
      ]);
      expect((await week.status('2026-W49', '2026-W49', options)).map((r) => r.status)).toEqual(['published']);

      // A late hour: its day is rebuilt, and the week over it becomes stale, then is rebuilt.
      await hour('05', 'late.json', '{"n":5}\n{"n":6}\n');
      await task.run(DAY, options);
      expect((await week.status('2026-W49', '2026-W49', options))[0]).toMatchObject({ status: 'stale' });
      expect(await week.run('2026-W49', options)).toMatchObject({ status: 'processed', result: { records: 8 } });
    });
  });
});
