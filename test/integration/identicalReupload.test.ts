import { setTimeout as sleep } from 'node:timers/promises';
import { CopyObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { inputRulesOf } from '../../app/partition/inputCoverage.js';
import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import { listInputPage } from '../../app/ui/dayInputs.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { testClients } from '../support/aws.js';
import { upload } from '../support/pipeline.js';
import {
  normalizeStageRunner,
  ordersCsv,
  provisionTwoStagePipeline,
  rerunCli,
  summarizeStageRunner,
} from '../support/summaryPipeline.js';

const DAY = '2026-03-04';

interface ReprocessJson {
  planned: number;
  enqueued: number;
  counts: Record<string, number>;
  requests: { list: number; lookup: number; head: number };
  sourceChecks: number;
  sample: { state: string; inputKey?: string; reason: string }[];
  done?: number;
  remaining?: number;
}

interface StatusJson {
  counts: Record<string, number>;
  requests: { list: number; head: number };
  partitions: { day: string; status: string; reason: string }[];
}

// Identical bytes uploaded again (s5cmd sync, `aws s3 cp` of the same file twice, a copy onto
// itself) give an input a later LastModified and the same ETag. The worker finds its output built
// from that ETag and rightly writes nothing: the tools must call the input current, not stale forever.
describe('identical bytes uploaded again: the tools judge as the worker judges', () => {
  const clients = testClients();

  it('reprocess plans 0 (one HEAD per re-uploaded input), --wait exits 0, and status calls the day published, also after a backfill; other bytes are still stale', async () => {
    const p = await provisionTwoStagePipeline(clients);
    const app = ['--app-name', p.appName, '--json'];
    const a = `incoming/dt=${DAY}/a.csv`;
    const b = `incoming/dt=${DAY}/b.csv`;
    const c = `incoming/dt=${DAY}/c.csv`;
    const bodies = new Map([
      [a, ordersCsv(`${DAY}a`, 2)],
      [b, ordersCsv(`${DAY}b`, 3)],
      [c, ordersCsv(`${DAY}c`, 1)],
    ]);
    for (const [key, body] of bodies) await upload(clients, p.stack.inputBucket, key, body);
    await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });
    const backfill = async () => {
      const summarizer = summarizeStageRunner(clients, p);
      summarizer.start();
      try {
        const run = await rerunCli([
          'backfill',
          '--from',
          DAY,
          '--to',
          DAY,
          '--wait',
          '--poll-interval',
          '200',
          '--timeout',
          '60',
          ...app,
        ]);
        expect(run.code, run.stderr).toBe(0);
      } finally {
        await summarizer.stop();
      }
    };
    const status = async () => {
      const run = await rerunCli(['status', '--from', DAY, '--to', DAY, '--no-validate', ...app]);
      expect(run.code, run.stderr).toBe(0);
      return run.json<StatusJson>();
    };
    const reprocess = async (...args: string[]) => {
      const run = await rerunCli(['reprocess', ...args, ...app]);
      return { code: run.code, stderr: run.stderr, json: run.json<ReprocessJson>() };
    };
    await backfill();
    expect((await status()).partitions[0]).toMatchObject({ status: 'published' });
    const outputKey = (key: string) => `normalized/${p.stack.inputBucket}/${key.slice('incoming/'.length)}.ndjson`;
    const outputWritten = async (key: string) =>
      (await clients.s3.send(new HeadObjectCommand({ Bucket: p.stack.outputBucket, Key: outputKey(key) })))
        .LastModified;
    const writtenBefore = [await outputWritten(a), await outputWritten(b)];

    // LastModified has one-second resolution: the re-uploads are visibly later than the outputs.
    await sleep(1100);
    // a: the same body put again (`aws s3 cp` twice, s5cmd sync).
    await upload(clients, p.stack.inputBucket, a, bodies.get(a) as string);
    // b: a copy onto itself; S3 requires MetadataDirective REPLACE for that.
    await clients.s3.send(
      new CopyObjectCommand({
        Bucket: p.stack.inputBucket,
        Key: b,
        CopySource: `${p.stack.inputBucket}/${b}`,
        MetadataDirective: 'REPLACE',
      }),
    );
    // The worker gets their events, finds each output built from the same ETag and writes nothing.
    await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });
    expect([await outputWritten(a), await outputWritten(b)]).toEqual(writtenBefore);

    const dry = await reprocess('--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json).toMatchObject({ planned: 0, counts: { current: 3, stale: 0, missing: 0 } });
    // One HEAD per input whose output the listing called older: its recorded source decides.
    expect(dry.json.sourceChecks).toBe(2);
    expect(dry.json.requests.head).toBe(2);
    const text = await rerunCli(['reprocess', '--dry-run', '--app-name', p.appName]);
    expect(text.text).toMatch(/, 2 HEADs \(2 of outputs older than their input: their recorded source decides\)/);
    expect(text.text).toMatch(/Mode stale: 0 input\(s\) to enqueue/);
    const verified = await reprocess('--dry-run', '--verify');
    expect(verified.json).toMatchObject({ planned: 0, counts: { current: 3, stale: 0 } });
    // The sharded listings and the Batch Operations engine plan through the same judgement.
    for (const engine of [
      ['--shards', '4'],
      ['--engine', 'batch-operations'],
    ]) {
      const other = await reprocess('--dry-run', ...engine);
      expect(other.code, other.stderr).toBe(0);
      expect(other.json, engine.join(' ')).toMatchObject({
        planned: 0,
        counts: { current: 3, stale: 0 },
        sourceChecks: 2,
      });
    }
    const waited = await reprocess('--wait', '--poll-interval', '200', '--timeout', '60');
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.json).toMatchObject({ planned: 0, enqueued: 0 });

    // The console's Days view classifies the day's inputs by the same rule: all three covered.
    const consolePage = () =>
      listInputPage(
        {
          reader: new S3PartitionStore(clients.s3),
          s3: clients.s3,
          outputBucket: p.stack.outputBucket,
          rules: inputRulesOf(createNormalizeWorker({ outputBucket: p.stack.outputBucket, prefixes: p.t }), {
            bucket: p.stack.inputBucket,
            prefix: p.t.inputPrefix,
            failurePrefix: p.t.failurePrefix,
          }),
          readFailure: async () => undefined,
        },
        DAY,
        { limit: 10 },
      );
    expect((await consolePage()).items.map((i) => [i.key, i.class])).toEqual([
      [a, 'covered'],
      [b, 'covered'],
      [c, 'covered'],
    ]);

    // The day's summary is still true: published, without a backfill and after one.
    const after = await status();
    expect(after.partitions[0]).toMatchObject({ status: 'published', reason: 'up to date (3 inputs: 3 with outputs)' });
    expect(after.requests.head).toBe(2);
    await backfill();
    expect((await status()).partitions[0]).toMatchObject({
      status: 'published',
      reason: 'up to date (3 inputs: 3 with outputs)',
    });

    // The opposite: c gets other bytes while its event is lost. Its output records the old ETag: stale.
    await sleep(1100);
    await upload(clients, p.stack.inputBucket, c, ordersCsv(`${DAY}c-v2`, 4));
    // Lose it for real: a worker started below would otherwise build c from this event before the
    // reprocess lists it, and there would be nothing left to plan (seen on a loaded machine).
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: p.stack.queueUrl }));
    const changed = await reprocess('--dry-run');
    expect(changed.json).toMatchObject({ planned: 1, counts: { current: 2, stale: 1 }, sourceChecks: 3 });
    for (const engine of [
      ['--shards', '4'],
      ['--engine', 'batch-operations'],
    ]) {
      expect((await reprocess('--dry-run', ...engine)).json, engine.join(' ')).toMatchObject({ planned: 1 });
    }
    expect(changed.json.sample[0]).toMatchObject({ state: 'stale', inputKey: c });
    expect(changed.json.sample[0]?.reason).toMatch(/^built from input ETag \w+, the input is \w+$/);
    expect((await status()).partitions[0]).toMatchObject({
      status: 'stale',
      reason: `inputs changed since publish, not their outputs (3 inputs: 2 with outputs, 1 outdated (${c}) now)`,
    });
    expect((await consolePage()).items.map((i) => i.class)).toEqual(['covered', 'covered', 'outdated']);
    // The reprocess enqueues c; the worker rebuilds it and --wait ends 0 with it done.
    const worker = normalizeStageRunner(clients, p);
    worker.start();
    try {
      const repaired = await reprocess('--wait', '--poll-interval', '200', '--timeout', '60');
      expect(repaired.code, repaired.stderr).toBe(0);
      expect(repaired.json).toMatchObject({ planned: 1, enqueued: 1, done: 1, remaining: 0 });
    } finally {
      await worker.stop();
    }
    await backfill();
    expect((await status()).partitions[0]).toMatchObject({ status: 'published' });
  }, 180_000);
});
