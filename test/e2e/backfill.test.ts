import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBackfill } from '../../app/backfill/runBackfill.js';
import { SUMMARIZE_CODE_VERSION } from '../../app/partition/codeVersion.js';
import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import { summaryKey, summaryLayout } from '../../app/partition/summaryLayout.js';
import { daysInWindow } from '../../src/keys/partition.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { awsEndpoint, RequestLog, testClients, uniqueName } from '../support/aws.js';
import { queueDepth, upload } from '../support/pipeline.js';
import { readText } from '../support/s3.js';
import {
  normalizeStageRunner,
  ordersCsv,
  provisionTwoStagePipeline,
  rerunCli,
  summarizeStageRunner,
  type TwoStagePipeline,
} from '../support/summaryPipeline.js';

const FROM = '2026-01-01';
const TO = '2026-01-30';
const DAYS = daysInWindow(FROM, TO);
const FAST_WAIT = ['--wait', '--poll-interval', '200', '--timeout', '120'];

describe('backfills as controlled reruns of the daily summary stage', () => {
  const log = new RequestLog();
  const logged = testClients(log);
  const clients = testClients();
  let summaryOutcomes: RecordOutcome[];
  let unsubscribe: () => void;

  beforeEach(() => {
    summaryOutcomes = [];
    unsubscribe = onRecordOutcome((o) => {
      if (o.outputKey?.includes('/summary.json') || o.source?.key.startsWith('normalized/')) summaryOutcomes.push(o);
    });
  });
  afterEach(() => unsubscribe());

  /** Every object under a prefix of the output bucket with its ETag. */
  const snapshot = async (p: TwoStagePipeline, prefix = '') =>
    Object.fromEntries(
      (await new S3PartitionStore(clients.s3).listAll(p.stack.outputBucket, { prefix })).map((o) => [o.key, o.etag]),
    );
  /** Summary bytes per day, keyed by day (comparable across pipelines: no bucket name inside). */
  const summaries = async (p: TwoStagePipeline, days: readonly string[]) =>
    Object.fromEntries(
      await Promise.all(
        days.map(async (d) => [
          d,
          await readText(clients.s3, p.stack.outputBucket, summaryKey(summaryLayout(p.stack.inputBucket), d)),
        ]),
      ),
    );
  const app = (p: TwoStagePipeline) => ['--app-name', p.appName, '--json'];
  const uploadDays = async (p: TwoStagePipeline, days: readonly string[], variant = '') => {
    for (const [i, day] of days.entries()) {
      await upload(
        clients,
        p.stack.inputBucket,
        `incoming/dt=${day}/orders.csv`,
        ordersCsv(`${day}${variant}`, 2, { bad: i % 3 === 0 }),
      );
      if (i % 2 === 0) {
        await upload(
          clients,
          p.stack.inputBucket,
          `incoming/dt=${day}/more.ndjson`,
          `{"id":"${day}-m","amount":${i}}\n`,
        );
      }
    }
  };

  it('a 30-day backfill, then the same backfill again: the second enqueues and writes nothing', async () => {
    const p = await provisionTwoStagePipeline(clients);
    await uploadDays(p, DAYS);
    await upload(clients, p.stack.inputBucket, 'incoming/undated.csv', ordersCsv('x', 1)); // no partition
    await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });

    const summarizer = summarizeStageRunner(clients, p);
    summarizer.start();
    try {
      const first = await rerunCli(['backfill', '--from', FROM, '--to', TO, ...FAST_WAIT, ...app(p)]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.json()).toMatchObject({
        planned: 30,
        enqueued: 30,
        waited: 'complete',
        published: 30,
        notPublished: 0,
      });
      expect(summaryOutcomes.filter((o) => o.status === 'processed')).toHaveLength(30);
      const day1 = JSON.parse(
        await readText(clients.s3, p.stack.outputBucket, summaryKey(summaryLayout(p.stack.inputBucket), FROM)),
      );
      expect(day1).toMatchObject({ files: 2, records: 3, quarantined: 1, fields: { amount: { numeric: 3, sum: 21 } } });

      // The same backfill again, with every request counted: three listings, nothing sent, nothing written.
      const before = await snapshot(p);
      const outcomesBefore = summaryOutcomes.length;
      log.clear();
      const second = await runBackfill({
        reader: new S3PartitionStore(logged.s3),
        sqs: logged.sqs,
        bucket: p.stack.outputBucket,
        layout: summaryLayout(p.stack.inputBucket, p.t),
        codeVersion: SUMMARIZE_CODE_VERSION,
        queueUrl: p.summary.queueUrl,
        from: FROM,
        to: TO,
        wait: true,
      });
      expect(second).toMatchObject({
        enqueued: 0,
        planRequests: 3,
        counts: { published: 30, missing: 0, stale: 0, invalid: 0 },
      });
      expect(second.tasks).toEqual([]);
      expect(log.operations()).toEqual(['ListObjectsV2', 'ListObjectsV2', 'ListObjectsV2']);

      const viaCli = await rerunCli(['backfill', '--from', FROM, '--to', TO, ...FAST_WAIT, ...app(p)]);
      expect(viaCli.code).toBe(0);
      expect(viaCli.json()).toMatchObject({ planned: 0, enqueued: 0 });
      await sleep(500);
      expect(summaryOutcomes.length).toBe(outcomesBefore); // the worker received nothing
      expect(await queueDepth(clients, p.summary.queueUrl)).toBe(0);
      expect(await snapshot(p)).toEqual(before);
    } finally {
      await summarizer.stop();
    }

    const status = await rerunCli(['status', '--from', FROM, '--to', TO, ...app(p)]);
    expect(status.json()).toMatchObject({ counts: { published: 30, missing: 0, stale: 0, invalid: 0 } });
  }, 180_000);

  it('status reports stale after an input in a published window changes, and published after the backfill that follows', async () => {
    const p = await provisionTwoStagePipeline(clients);
    const days = DAYS.slice(0, 5);
    const [from, to] = [days[0] as string, days[4] as string];
    await uploadDays(p, days);
    const normalizer = normalizeStageRunner(clients, p);
    await normalizer.runUntilDrained({ timeoutMs: 60_000 });
    const summarizer = summarizeStageRunner(clients, p);
    summarizer.start();
    try {
      expect((await rerunCli(['backfill', '--from', from, '--to', to, ...FAST_WAIT, ...app(p)])).code).toBe(0);

      // One input of day 3 changes (a corrected upload), and normalize reruns it.
      await upload(clients, p.stack.inputBucket, `incoming/dt=${days[2]}/orders.csv`, ordersCsv('corrected', 4));
      await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });
      const stale = await rerunCli(['status', '--from', from, '--to', to, ...app(p)]);
      const report = stale.json<{ counts: unknown; partitions: { day: string; status: string; reason: string }[] }>();
      expect(report.counts).toEqual({ published: 4, missing: 0, stale: 1, invalid: 0, incomplete: 0 });
      expect(report.partitions[2]).toMatchObject({
        day: days[2],
        status: 'stale',
        reason: expect.stringMatching(/inputs changed since publish/),
      });

      // A summary replaced behind rerun's back reads invalid (listing: ETag differs from its marker).
      const key = summaryKey(summaryLayout(p.stack.inputBucket), days[4] as string);
      const etag = (await snapshot(p, key))[key];
      await clients.s3.send(
        new PutObjectCommand({
          Bucket: p.stack.outputBucket,
          Key: key,
          Body: '{"tampered":true}',
          IfMatch: `"${etag}"`,
        }),
      );
      const human = await rerunCli(['status', '--from', from, '--to', to, '--app-name', p.appName]);
      // The table and its counts on stdout (`rerun status | less`), SUMMARY last.
      expect(human.text).toMatch(/dt=2026-01-03\s+stale\s+2\s+inputs changed since publish/);
      expect(human.text).toMatch(/dt=2026-01-05\s+invalid\s+2\s+summary object changed since it was published/);
      expect(human.text).toMatch(/5 partitions: 3 published, 0 missing, 1 stale, 1 invalid/);
      expect(human.stdout.at(-1)).toMatch(/^SUMMARY \{"from":"2026-01-01","to":"2026-01-05","published":3/);
      expect(human.stderr).not.toMatch(/dt=2026-01-03/);

      const dry = await rerunCli(['backfill', '--from', from, '--to', to, '--dry-run', ...app(p)]);
      expect(dry.json<{ tasks: { day: string }[]; enqueued: number }>()).toMatchObject({
        enqueued: 0,
        tasks: [{ day: days[2] }, { day: days[4] }],
      });
      expect(await queueDepth(clients, p.summary.queueUrl)).toBe(0);

      const fix = await rerunCli(['backfill', '--from', from, '--to', to, ...FAST_WAIT, ...app(p)]);
      expect(fix.json()).toMatchObject({ planned: 2, enqueued: 2, waited: 'complete' });
      const after = await rerunCli(['status', '--from', from, '--to', to, ...app(p)]);
      expect(after.json()).toMatchObject({ counts: { published: 5, missing: 0, stale: 0, invalid: 0 } });
      const corrected = JSON.parse(
        await readText(
          clients.s3,
          p.stack.outputBucket,
          summaryKey(summaryLayout(p.stack.inputBucket), days[2] as string),
        ),
      );
      expect(corrected).toMatchObject({ files: 2, records: 5, quarantined: 0 }); // 4 corrected rows + more.ndjson
    } finally {
      await summarizer.stop();
    }
  }, 180_000);

  it('a backfill running while new uploads arrive for the same days ends equal to a clean sequential run', async () => {
    const days = DAYS.slice(0, 8);
    const [from, to] = [days[0] as string, days[7] as string];
    // Clean, sequential: every input first, normalize, then one backfill.
    const clean = await provisionTwoStagePipeline(clients);
    await uploadDays(clean, days);
    await uploadDays(
      clean,
      days.filter((_, i) => i % 2 === 1),
      '-v2',
    ); // later versions of odd days
    for (const day of days.slice(0, 4)) {
      await upload(
        clients,
        clean.stack.inputBucket,
        `incoming/dt=${day}/late.csv`,
        ordersCsv(`${day}-late`, 1, { amount: 3 }),
      );
    }
    await normalizeStageRunner(clients, clean).runUntilDrained({ timeoutMs: 60_000 });
    const cleanSummarizer = summarizeStageRunner(clients, clean);
    cleanSummarizer.start();
    expect((await rerunCli(['backfill', '--from', from, '--to', to, ...FAST_WAIT, ...app(clean)])).code).toBe(0);
    await cleanSummarizer.stop();

    // Concurrent: the first inputs are summarized while corrections and late files arrive.
    const busy = await provisionTwoStagePipeline(clients);
    await uploadDays(busy, days);
    await normalizeStageRunner(clients, busy).runUntilDrained({ timeoutMs: 60_000 });
    const normalizer = normalizeStageRunner(clients, busy);
    const summarizer = summarizeStageRunner(clients, busy);
    normalizer.start();
    summarizer.start();
    try {
      const backfill = rerunCli(['backfill', '--from', from, '--to', to, ...FAST_WAIT, ...app(busy)]);
      await uploadDays(
        busy,
        days.filter((_, i) => i % 2 === 1),
        '-v2',
      );
      for (const day of days.slice(0, 4)) {
        await upload(
          clients,
          busy.stack.inputBucket,
          `incoming/dt=${day}/late.csv`,
          ordersCsv(`${day}-late`, 1, { amount: 3 }),
        );
      }
      const during = await backfill;
      expect([0, 1]).toContain(during.code); // complete, or incomplete when inputs changed after a task ran
      // Once the uploads are normalized, the operator's catch-up backfill reruns only what changed.
      for (let round = 0; round < 3; round++) {
        while ((await queueDepth(clients, busy.stack.queueUrl)) > 0) await sleep(200);
        const catchUp = await rerunCli(['backfill', '--from', from, '--to', to, ...FAST_WAIT, ...app(busy)]);
        if (catchUp.json<{ planned: number }>().planned === 0) break;
      }
    } finally {
      await Promise.all([normalizer.stop(), summarizer.stop()]);
    }
    const status = await rerunCli(['status', '--from', from, '--to', to, ...app(busy)]);
    expect(status.json()).toMatchObject({ counts: { published: 8, missing: 0, stale: 0, invalid: 0 } });
    expect(await summaries(busy, days)).toEqual(await summaries(clean, days));
    // And byte-equal summaries really differ between days (the comparison is not vacuous).
    expect(new Set(Object.values(await summaries(clean, days))).size).toBe(8);
  }, 180_000);

  it('a backfill killed halfway and run again completes with no duplicates', async () => {
    const p = await provisionTwoStagePipeline(clients);
    await uploadDays(p, DAYS);
    await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });

    // The CLI as a user runs it, slowed to 10 messages/s, SIGKILLed once some tasks are queued.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'app/cli/rerun.ts',
        'backfill',
        '--from',
        FROM,
        '--to',
        TO,
        '--rate',
        '10',
        '--app-name',
        p.appName,
      ],
      {
        env: {
          ...process.env,
          AWS_ENDPOINT_URL: awsEndpoint(),
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
        },
        stdio: 'ignore',
      },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    const deadline = Date.now() + 30_000;
    while ((await queueDepth(clients, p.summary.queueUrl)) < 10 && Date.now() < deadline) await sleep(50);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const queuedByKilledRun = await queueDepth(clients, p.summary.queueUrl);
    expect(queuedByKilledRun).toBeGreaterThanOrEqual(10);
    expect(queuedByKilledRun).toBeLessThan(30);

    // Run again: it plans all 30 (none is published yet) and SQS drops the tasks the killed run sent
    // (same MessageDeduplicationId within 5 minutes): exactly one message per partition.
    const again = await rerunCli(['backfill', '--from', FROM, '--to', TO, ...app(p)]);
    expect(again.json()).toMatchObject({ planned: 30, enqueued: 30 });
    expect(await queueDepth(clients, p.summary.queueUrl)).toBe(30);

    await summarizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });
    const processed = summaryOutcomes.filter((o) => o.status === 'processed').map((o) => o.outputKey);
    expect(processed).toHaveLength(30);
    expect(new Set(processed).size).toBe(30);
    expect(summaryOutcomes.filter((o) => o.status !== 'processed')).toEqual([]);
    const markers = Object.keys(await snapshot(p, 'summaries/')).filter((k) => k.includes('/_manifest/'));
    expect(markers).toHaveLength(30);
    const finalRun = await rerunCli(['backfill', '--from', FROM, '--to', TO, ...app(p)]);
    expect(finalRun.json()).toMatchObject({ planned: 0, enqueued: 0 });
  }, 180_000);

  it('rerun dev runs the summary stage too: a backfill against the local stack completes through it', async () => {
    const appName = uniqueName('dev');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'app/cli/rerun.ts', 'dev', '--no-demo', '--app-name', appName],
      {
        env: {
          ...process.env,
          AWS_ENDPOINT_URL: awsEndpoint(),
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 30_000;
      while (!stdout.includes('READY ') && Date.now() < deadline) await sleep(100);
      const ready = JSON.parse(stdout.slice(stdout.indexOf('READY ') + 6).split('\n')[0] as string);
      expect(stderr).toMatch(new RegExp(`created\\s+queue ${appName}-summarize-queue\\.fifo`));
      await upload(clients, ready.inputBucket, 'incoming/dt=2026-02-01/a.csv', ordersCsv('a', 2));
      await upload(clients, ready.inputBucket, 'incoming/dt=2026-02-02/b.csv', ordersCsv('b', 3, { bad: true }));
      const normalized = async () =>
        (await new S3PartitionStore(clients.s3).listAll(ready.outputBucket, { prefix: 'normalized/' })).length;
      while ((await normalized()) < 2 && Date.now() < deadline) await sleep(100);

      const backfill = await rerunCli([
        'backfill',
        '--from',
        '2026-02-01',
        '--to',
        '2026-02-02',
        ...FAST_WAIT,
        '--app-name',
        appName,
        '--json',
      ]);
      expect(backfill.code, backfill.stderr).toBe(0);
      expect(backfill.json()).toMatchObject({ planned: 2, waited: 'complete', published: 2 });
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    }
    const summary = JSON.parse(stdout.slice(stdout.indexOf('SUMMARY ') + 8).split('\n')[0] as string);
    expect(summary).toMatchObject({ processed: 4, failed: 0, deadLettered: 0 }); // 2 uploads + 2 partitions
    expect(stderr).toMatch(
      /processed\s+1\s+s3:\/\/\S+\/normalized\/\S+\/dt=2026-02-02\/\s+summaries\/\S+\/dt=2026-02-02\/summary\.json/,
    );
  }, 120_000);
});
