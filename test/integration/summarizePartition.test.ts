import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseSummary } from '../../app/partition/dailySummary.js';
import type { InputRules } from '../../app/partition/inputCoverage.js';
import { judgePartition } from '../../app/partition/judgePartition.js';
import { listPartitions } from '../../app/partition/listPartitions.js';
import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import {
  type SummarizePartitionOptions,
  SummaryTooLargeError,
  summarizePartition,
} from '../../app/partition/summarizePartition.js';
import { markerPrefix, stagingKey, summaryKey, summaryLayout } from '../../app/partition/summaryLayout.js';
import { DeadlineNearError } from '../../src/errors.js';
import { failureIndexKey } from '../../src/failures/failureIndex.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

const DAY = '2026-01-05';
const CODE = 'summarize@1';

describe('summarizePartition against the emulator', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let bucket: string;
  let source: string;
  let options: SummarizePartitionOptions;
  const layout = () => summaryLayout(source);
  const put = async (key: string, body: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const normalized = (path: string, body: string) => put(`normalized/${source}/${path}`, body);
  const quarantine = (path: string, body: string) => put(`quarantine/${source}/${path}`, body);
  const writes = () =>
    log.requests.filter((r) => r.service === 'S3' && ['PutObject', 'DeleteObject'].includes(r.operation)).length;

  beforeEach(async () => {
    bucket = await createBucket(clients.s3, uniqueName('sum'));
    source = uniqueName('src');
    options = {
      store: new S3ObjectStore(clients.s3),
      reader: new S3PartitionStore(clients.s3),
      bucket,
      layout: summaryLayout(source),
      codeVersion: CODE,
    };
    await normalized(`dt=${DAY}/orders.csv.ndjson`, '{"id":"1","amount":"10.50"}\n{"id":"2","amount":"7.25"}\n');
    await normalized(`dt=${DAY}/events.ndjson.ndjson`, '{"id":"3","amount":null,"kind":"x"}\n');
    await quarantine(
      `dt=${DAY}/orders.csv.ndjson`,
      '{"line":3,"reason":"expected 2 fields, got 1","raw":"3","truncated":false}\n',
    );
    // Another day and a key outside any partition: not part of this day's lineage.
    await normalized('dt=2026-01-06/later.csv.ndjson', '{"id":"9"}\n');
    await normalized('undated.csv.ndjson', '{"id":"8"}\n');
    log.clear();
  });

  it('publishes the summary of exactly its window, with its lineage manifest, a marker, and no staging leftover', async () => {
    const outcome = await summarizePartition(DAY, options);
    expect(outcome).toMatchObject({
      status: 'processed',
      reason: 'summary published (3 inputs: 3 records, 1 quarantined)',
    });
    expect(outcome.counts).toEqual({ files: 2, records: 3, quarantined: 1 });

    const key = summaryKey(layout(), DAY);
    const text = await readText(clients.s3, bucket, key);
    const checked = parseSummary(Buffer.from(text), { day: DAY, lineageHash: outcome.lineageHash, codeVersion: CODE });
    expect(checked.ok).toBe(true);
    const summary = checked.ok ? checked.summary : undefined;
    expect(summary).toMatchObject({
      partition: `dt=${DAY}`,
      files: 2,
      records: 3,
      quarantined: 1,
      quarantineReasons: { 'expected 2 fields, got 1': 1 },
      fields: {
        id: { present: 3, numeric: 3, sum: 6, min: 1, max: 3 },
        amount: { present: 2, numeric: 2, sum: 17.75, min: 7.25, max: 10.5 },
        kind: { present: 1, numeric: 0 },
      },
    });
    expect(summary?.manifest.lineage.map((e) => `${e.kind}:${e.path}`)).toEqual([
      `normalized:dt=${DAY}/events.ndjson.ndjson`,
      `normalized:dt=${DAY}/orders.csv.ndjson`,
      `quarantine:dt=${DAY}/orders.csv.ndjson`,
    ]);
    // Canonical bytes: sorted keys, one line.
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.indexOf('"bytes"')).toBeLessThan(text.indexOf('"fields"'));

    const head = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
    expect(head.Metadata).toMatchObject({
      'rerun-lineage-hash': outcome.lineageHash,
      'rerun-code-version': CODE,
      'rerun-partition': `dt=${DAY}`,
    });
    expect(head.ChecksumSHA256).toBe(createHash('sha256').update(text).digest('base64'));

    const keys = await listKeys(clients.s3, bucket, 'summaries/');
    expect(keys).toEqual(
      [key, `${markerPrefix(layout(), DAY)}${outcome.lineageHash}/${outcome.etag}/summarize%401`].sort(),
    );
  });

  it('a connection dropped while reading an input starts the round over instead of failing the task', async () => {
    const clean = await summarizePartition(DAY, { ...options, layout: summaryLayout(source) });
    const bytes = await readText(clients.s3, bucket, summaryKey(layout(), DAY));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: summaryKey(layout(), DAY) }));
    // The first read of an input delivers one line, then the connection drops.
    let dropped = 0;
    const reader = new S3PartitionStore(clients.s3);
    const getExact = reader.getExact.bind(reader);
    reader.getExact = async (b, key, etag) => {
      const read = await getExact(b, key, etag);
      if (read.status !== 'ok' || dropped > 0) return read;
      dropped++;
      const body = new PassThrough();
      body.write('{"id":"1","amount":"10.50"}\n');
      setTimeout(() => body.destroy(new Error('aborted')), 10);
      read.body.destroy();
      return { ...read, body };
    };
    const outcome = await summarizePartition(DAY, { ...options, reader });
    expect(dropped).toBe(1);
    expect(outcome).toMatchObject({ status: 'processed', lineageHash: clean.lineageHash });
    // The partial read did not leak into the summary: the same bytes as an undisturbed run.
    expect(await readText(clients.s3, bucket, summaryKey(layout(), DAY))).toBe(bytes);
  });

  it('a second run reads and writes nothing: 2 lineage listings, 1 HEAD, 1 marker listing', async () => {
    await summarizePartition(DAY, options);
    log.clear();
    const again = await summarizePartition(DAY, options);
    expect(again.status).toBe('skipped');
    expect(log.operations('S3').sort()).toEqual(['HeadObject', 'ListObjectsV2', 'ListObjectsV2', 'ListObjectsV2']);
  });

  it('replaces the summary with If-Match when an input changes, and moves the marker', async () => {
    const first = await summarizePartition(DAY, options);
    await normalized(`dt=${DAY}/orders.csv.ndjson`, '{"id":"1","amount":"1"}\n');
    log.clear();
    const second = await summarizePartition(DAY, options);
    expect(second).toMatchObject({
      status: 'processed',
      reason: expect.stringMatching(/^summary replaced \(inputs changed/),
    });
    expect(second.lineageHash).not.toBe(first.lineageHash);
    const publish = log.requests.find((r) => r.operation === 'PutObject' && r.input.Key === summaryKey(layout(), DAY));
    expect(publish?.input.IfMatch).toBe(`"${first.etag}"`);
    const markers = await listKeys(clients.s3, bucket, markerPrefix(layout(), DAY));
    expect(markers).toEqual([`${markerPrefix(layout(), DAY)}${second.lineageHash}/${second.etag}/summarize%401`]);
  });

  it('publishes an empty summary for a day without inputs', async () => {
    const outcome = await summarizePartition('2026-01-01', options);
    expect(outcome).toMatchObject({ status: 'processed', counts: { files: 0, records: 0, quarantined: 0 } });
  });

  it('rebuilds a summary of another code version, and one overwritten behind its back', async () => {
    const old = await summarizePartition(DAY, { ...options, codeVersion: 'summarize@0' });
    const rebuilt = await summarizePartition(DAY, options);
    expect(rebuilt.reason).toMatch(/built by code version summarize@0, current is summarize@1/);
    expect(rebuilt.etag).not.toBe(old.etag);

    await clients.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: summaryKey(layout(), DAY),
        Body: '{"oops":1}',
        IfMatch: `"${rebuilt.etag}"`,
      }),
    );
    const repaired = await summarizePartition(DAY, options);
    expect(repaired.reason).toMatch(/no rerun summary metadata/);
    expect(repaired.etag).toBe(rebuilt.etag); // same lineage and code: the same bytes again
  });

  it('repairs a missing or extra marker without rewriting the summary', async () => {
    const first = await summarizePartition(DAY, options);
    const prefix = markerPrefix(layout(), DAY);
    const [marker] = await listKeys(clients.s3, bucket, prefix);
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}old/etag/summarize%400`, Body: '' }));
    await options.store.delete(bucket, marker as string);
    const [before] = await listPartitions({ store: options.reader, bucket, layout: layout(), from: DAY, to: DAY });
    expect(judgePartition(before as never, CODE).status).toBe('invalid');

    log.clear();
    const again = await summarizePartition(DAY, options);
    expect(again).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/manifest marker repaired/) });
    expect(log.requests.filter((r) => r.operation === 'PutObject').map((r) => r.input.Key)).toEqual([marker]);
    expect(await listKeys(clients.s3, bucket, prefix)).toEqual([marker]);
    expect(again.etag).toBe(first.etag);
  });

  it('replaces a foreign staging copy a crashed run left, and accepts one with the same bytes', async () => {
    const [listing] = await listPartitions({ store: options.reader, bucket, layout: layout(), from: DAY, to: DAY });
    const hash = judgePartition(listing as never, CODE).lineageHash;
    const staged = stagingKey(layout(), DAY, hash);
    // A crash after a foreign write at the staging key (same lineage hash => same key): garbage there.
    await put(staged, 'partial');
    const first = await summarizePartition(DAY, options);
    expect(first.status).toBe('processed');
    expect(await listKeys(clients.s3, bucket, 'summaries/_staging/')).toEqual([]);

    // A crash after staging the right bytes but before publishing: the next run keeps that copy.
    const text = await readText(clients.s3, bucket, summaryKey(layout(), DAY));
    await options.store.delete(bucket, summaryKey(layout(), DAY));
    const bytes = Buffer.from(text);
    const sha256Base64 = createHash('sha256').update(bytes).digest('base64');
    await options.store.put(bucket, staged, bytes, { condition: { ifNoneMatch: '*' }, metadata: {}, sha256Base64 });
    log.clear();
    const second = await summarizePartition(DAY, options);
    expect(second).toMatchObject({ status: 'processed', etag: first.etag });
    const stagingPuts = log.requests.filter((r) => r.operation === 'PutObject' && r.input.Key === staged);
    expect(stagingPuts.map((r) => r.input.IfNoneMatch)).toEqual(['*']); // 412, then accepted as is
    expect(await listKeys(clients.s3, bucket, 'summaries/_staging/')).toEqual([]);
  });

  it('starts over when an input changes while it is being read, and records the lineage it really read', async () => {
    const reader = new S3PartitionStore(clients.s3);
    const original = reader.getExact.bind(reader);
    // Every read of the first round (they run ahead of the build, several at once) waits for the change.
    let change: Promise<unknown> | undefined;
    reader.getExact = async (b, key, etag) => {
      change ??= normalized(`dt=${DAY}/orders.csv.ndjson`, '{"id":"1","amount":"99"}\n');
      await change;
      return original(b, key, etag);
    };
    const outcome = await summarizePartition(DAY, { ...options, reader });
    expect(outcome.status).toBe('processed');
    const text = await readText(clients.s3, bucket, summaryKey(layout(), DAY));
    expect(JSON.parse(text).fields.amount.sum).toBe(99);
    // The published summary is current for what is there now.
    expect((await summarizePartition(DAY, options)).status).toBe('skipped');
  });

  describe('size and time guards', () => {
    it('a day with more lineage entries than the bound fails without retry, naming the count and the bound, writing nothing', async () => {
      const run = summarizePartition(DAY, { ...options, maxInputs: 2 });
      await expect(run).rejects.toThrow(SummaryTooLargeError);
      await run.catch((error: SummaryTooLargeError) => {
        expect(error.retryable).toBe(false);
        expect(error.message).toMatch(
          /dt=2026-01-05 has 3 lineage entries .*above the summary's bound of 2 \(maxInputs\)/,
        );
      });
      expect(writes()).toBe(0);
      expect(await summarizePartition(DAY, { ...options, maxInputs: 3 })).toMatchObject({ status: 'processed' });
    });

    it('a summary larger than maxSummaryBytes fails without retry before it is staged', async () => {
      await expect(summarizePartition(DAY, { ...options, maxSummaryBytes: 100 })).rejects.toThrow(
        /the summary of dt=2026-01-05 is \d+ bytes \(3 lineage entries\), above the bound of 100 bytes/,
      );
      expect(writes()).toBe(0);
    });

    /**
     * A reader whose every input takes `msPerInput` of an injected clock, counted once the build has
     * read its body (the GETs run ahead of the build, several at once; the time is the build's).
     */
    const slowReader = (clock: { t: number }, msPerInput: number) => {
      const reader = new S3PartitionStore(clients.s3);
      const getExact = reader.getExact.bind(reader);
      reader.getExact = async (...args: Parameters<typeof getExact>) => {
        const read = await getExact(...args);
        if (read.status === 'ok') {
          read.body.once('end', () => {
            clock.t += msPerInput;
          });
        }
        return read;
      };
      return reader;
    };
    const deadlineOf = (clock: { t: number }) => ({
      remainingTimeMs: () => 10_000 - clock.t,
      marginMs: 2_500,
      timeLimitMs: 10_000,
      now: () => clock.t,
    });

    it('a day whose pace cannot be read in a whole invocation stops before the timeout: too large, not retried', async () => {
      const clock = { t: 0 };
      const run = summarizePartition(DAY, {
        ...options,
        reader: slowReader(clock, 4_000),
        deadline: deadlineOf(clock),
      });
      await expect(run).rejects.toThrow(SummaryTooLargeError);
      await run.catch((error: Error) =>
        expect(error.message).toMatch(/cannot be summarized within the function's time: it read 2 of 3 inputs/),
      );
      expect(clock.t).toBeLessThan(10_000);
      expect(writes()).toBe(0);
    });

    it('a task that only started late stops before the timeout, retryably', async () => {
      const clock = { t: 6_000 };
      const run = summarizePartition(DAY, {
        ...options,
        reader: slowReader(clock, 1_000),
        deadline: deadlineOf(clock),
      });
      await expect(run).rejects.toThrow(DeadlineNearError);
      expect(clock.t).toBeLessThan(10_000);
      expect(writes()).toBe(0);
    });
  });

  it('two concurrent runs of one partition publish once and leave exactly one marker', async () => {
    const results = await Promise.all([summarizePartition(DAY, options), summarizePartition(DAY, options)]);
    expect(new Set(results.map((r) => r.etag)).size).toBe(1);
    expect(await listKeys(clients.s3, bucket, markerPrefix(layout(), DAY))).toHaveLength(1);
    expect(await listKeys(clients.s3, bucket, 'summaries/_staging/')).toEqual([]);
  });

  it("an older writer's marker step never deletes a newer writer's marker: only markers that do not name the published summary go", async () => {
    await summarizePartition(DAY, options);
    // Writer A publishes a new lineage; just before A lists the markers, writer B publishes a newer
    // lineage and records its marker (the race the simulation tier found, test/sim/invariants.ts).
    await normalized(`dt=${DAY}/orders.csv.ndjson`, '{"id":"1","amount":"2"}\n');
    const reader = new S3PartitionStore(clients.s3);
    const listAll = reader.listAll.bind(reader);
    let newer: Awaited<ReturnType<typeof summarizePartition>> | undefined;
    reader.listAll = async (b, listing) => {
      if (!newer && listing.prefix === markerPrefix(layout(), DAY)) {
        await normalized(`dt=${DAY}/orders.csv.ndjson`, '{"id":"1","amount":"3"}\n');
        newer = await summarizePartition(DAY, options);
      }
      return listAll(b, listing);
    };
    const older = await summarizePartition(DAY, { ...options, reader });
    expect(older.status).toBe('processed');
    expect(newer?.status).toBe('processed');
    const published = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: summaryKey(layout(), DAY) }));
    expect(published.ETag).toBe(`"${newer?.etag}"`);
    // The newer writer's marker stays, and it is the only one: the older writer removed its own.
    expect(await listKeys(clients.s3, bucket, markerPrefix(layout(), DAY))).toEqual([
      `${markerPrefix(layout(), DAY)}${newer?.lineageHash}/${newer?.etag}/summarize%401`,
    ]);
    const [listing] = await listPartitions({ store: options.reader, bucket, layout: layout(), from: DAY, to: DAY });
    expect(judgePartition(listing as never, CODE).status).toBe('published');
  });

  it('fails without retry on a normalized output that is not NDJSON of objects, naming it', async () => {
    await normalized(`dt=${DAY}/broken.csv.ndjson`, '{"id":"1"}\n[1,2]\n');
    log.clear();
    await expect(summarizePartition(DAY, options)).rejects.toMatchObject({
      name: 'SummaryInputInvalidError',
      retryable: false,
      message: expect.stringMatching(/normalized\/dt=2026-01-05\/broken\.csv\.ndjson line 2 is not a JSON object/),
    });
    expect(writes()).toBe(0);
  });

  describe('with the inputs of the day', () => {
    let inputBucket: string;
    let rules: InputRules;
    const input = (name: string) => `incoming/dt=${DAY}/${name}`;
    const gaveUp = (name: string, givenUp: 'last-receive' | 'non-retryable') =>
      put(failureIndexKey('failures/', { bucket: inputBucket, key: input(name) }, 'q', `m-${name}`, givenUp), '');

    beforeEach(async () => {
      inputBucket = await createBucket(clients.s3, uniqueName('in'));
      // The normalize worker's key rules: incoming/{path} -> normalized/{source}/{path}.ndjson.
      const derived = (root: string) => (s: { key: string }) =>
        `${root}/${source}/${s.key.slice('incoming/'.length)}.ndjson`;
      rules = {
        bucket: inputBucket,
        prefix: 'incoming/',
        failurePrefix: 'failures/',
        outputKey: derived('normalized'),
        quarantineKey: derived('quarantine'),
      };
      for (const name of ['orders.csv', 'events.ndjson', 'late.csv', 'poison.csv', 'bad.csv']) {
        await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: input(name), Body: 'id\n1\n' }));
      }
      await clients.s3.send(
        new PutObjectCommand({ Bucket: inputBucket, Key: 'incoming/dt=2026-01-06/other-day.csv', Body: 'id\n' }),
      );
      // The outputs, written after their inputs (an output older than its input is outdated).
      await normalized(`dt=${DAY}/orders.csv.ndjson`, '{"id":"1","amount":"10.50"}\n{"id":"2","amount":"7.25"}\n');
      await normalized(`dt=${DAY}/events.ndjson.ndjson`, '{"id":"3","amount":null,"kind":"x"}\n');
      await gaveUp('poison.csv', 'last-receive');
      await gaveUp('bad.csv', 'non-retryable');
      options = { ...options, inputs: rules };
      log.clear();
    });

    const group = (keys: string[]) => ({ count: keys.length, keys });
    const readSummary = async () => JSON.parse(await readText(clients.s3, bucket, summaryKey(layout(), DAY)));
    const statusOfDay = async () => {
      const [listing] = await listPartitions({
        store: new S3PartitionStore(clients.s3),
        bucket,
        layout: layout(),
        from: DAY,
        to: DAY,
        inputs: rules,
      });
      return judgePartition(listing as NonNullable<typeof listing>, CODE);
    };

    it('records which inputs it covers and which it does not, from listings only', async () => {
      const outcome = await summarizePartition(DAY, options);
      expect(outcome.status).toBe('processed');
      // Bulk: two listings more than without inputs (the day's inputs, its failure index), and not
      // one request about a single input.
      const s3 = log.requests.filter((r) => r.service === 'S3');
      expect(s3.filter((r) => r.operation === 'ListObjectsV2')).toHaveLength(5); // 2 lineage + inputs + index + markers
      expect(s3.filter((r) => r.operation === 'HeadObject')).toHaveLength(1); // the summary's done-check
      expect(s3.filter((r) => r.operation === 'GetObject')).toHaveLength(4); // 3 lineage objects + the staged copy
      const summary = await readSummary();
      expect(summary.manifest.coverage).toEqual({
        inputs: 5,
        covered: { withOutput: group([input('events.ndjson'), input('orders.csv')]), quarantined: group([]) },
        notCovered: {
          pending: group([input('late.csv')]),
          // A non-retryable failure and a last receive: one class, named as rerun status names it.
          deadLettered: group([input('bad.csv'), input('poison.csv')]),
          outdated: group([]),
          skipped: group([]),
        },
        keysLimit: 100,
        digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(parseSummary(Buffer.from(JSON.stringify(summary)), { day: DAY }).ok).toBe(true);
      // A summarizer given no inputs judges by the outputs alone: current, and the record stays.
      const { inputs: _ignored, ...outputsOnly } = options;
      expect(await summarizePartition(DAY, outputsOnly)).toMatchObject({ status: 'skipped' });
      expect((await readSummary()).manifest.coverage).toEqual(summary.manifest.coverage);
    });

    it('says what rerun status and the backfill planner say, and is rebuilt when an input fails without any output changing', async () => {
      const first = await summarizePartition(DAY, options);
      // Current, but the day has a pending input: rerun status reports it incomplete, for the same lineage hash.
      const before = await statusOfDay();
      expect(before).toMatchObject({ status: 'incomplete', lineageHash: first.lineageHash });
      expect(await summarizePartition(DAY, options)).toMatchObject({
        status: 'skipped',
        lineageHash: first.lineageHash,
      });

      // The pending input is dead-lettered: no output changed, yet the summary no longer tells the truth.
      await gaveUp('late.csv', 'last-receive');
      expect((await statusOfDay()).status).toBe('stale');
      const second = await summarizePartition(DAY, options);
      expect(second.status).toBe('processed');
      // Same outputs, so the same lineage hash; another coverage record, so another summary.
      expect(second).toMatchObject({
        lineageHash: first.lineageHash,
        reason: expect.stringMatching(/the day's inputs changed since it was built/),
      });
      expect(second.etag).not.toBe(first.etag);
      const { notCovered } = (await readSummary()).manifest.coverage;
      expect(notCovered.pending).toEqual(group([]));
      expect(notCovered.deadLettered).toEqual(group([input('bad.csv'), input('late.csv'), input('poison.csv')]));
      // Every input now has an output or a classified outcome: published, for the summary's own hash.
      expect(await statusOfDay()).toMatchObject({ status: 'published', lineageHash: second.lineageHash });
    });
  });
});
