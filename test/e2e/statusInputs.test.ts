import { describe, expect, it } from 'vitest';
import { summaryKey, summaryLayout } from '../../app/partition/summaryLayout.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { testClients } from '../support/aws.js';
import { upload } from '../support/pipeline.js';
import { readText } from '../support/s3.js';
import {
  normalizeStageRunner,
  ordersCsv,
  provisionTwoStagePipeline,
  rerunCli,
  summarizeStageRunner,
} from '../support/summaryPipeline.js';

const DAY = '2026-02-03';

interface StatusJson {
  counts: Record<string, number>;
  requests: { list: number; head: number };
  partitions: {
    day: string;
    status: string;
    reason: string;
    coverage?: { inputs: number; covered: number; pending: { count: number; first: string[] } };
  }[];
}

describe('status and backfill judge a day by its inputs as well as its outputs', () => {
  const clients = testClients();

  it('a day with an input that has no output is stale, then incomplete once its summary records that input (counted and named), and published once that input is dead-lettered with a record', async () => {
    const p = await provisionTwoStagePipeline(clients);
    const app = ['--app-name', p.appName, '--json'];
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/a.csv`, ordersCsv(`${DAY}a`, 2));
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/b.csv`, ordersCsv(`${DAY}b`, 2));
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/notes.txt`, 'not a supported type\n');
    await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });
    /** `rerun backfill --wait` of the day, with the summarize worker running; its JSON summary. */
    const backfillDay = async (expectedCode = 0) => {
      const summarizer = summarizeStageRunner(clients, p);
      summarizer.start();
      try {
        const backfill = await rerunCli([
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
        expect(backfill.code, backfill.stderr).toBe(expectedCode);
        return backfill.json<{ waited: string; published: number; notPublished: number }>();
      } finally {
        await summarizer.stop();
      }
    };
    const summaryCoverage = async () =>
      JSON.parse(await readText(clients.s3, p.stack.outputBucket, summaryKey(summaryLayout(p.stack.inputBucket), DAY)))
        .manifest.coverage;
    await backfillDay();
    const published = await rerunCli(['status', '--from', DAY, '--to', DAY, ...app]);
    expect(published.json<StatusJson>().partitions[0]).toMatchObject({
      status: 'published',
      reason: 'up to date (3 inputs: 2 with outputs, 1 skipped)',
    });

    // A third input arrives and is not processed (its worker is down, or it keeps failing): the
    // outputs are unchanged, so a check of outputs alone would still say "published"; but the summary
    // records 3 inputs, and the day has 4.
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/c.csv`, ordersCsv(`${DAY}c`, 2));
    const stale = await rerunCli(['status', '--from', DAY, '--to', DAY, '--no-validate', ...app]);
    const report = stale.json<StatusJson>();
    expect(report.partitions[0]).toMatchObject({
      status: 'stale',
      reason: `inputs changed since publish, not their outputs (4 inputs: 2 with outputs, 1 skipped, 1 pending (incoming/dt=${DAY}/c.csv) now)`,
      coverage: { inputs: 4, covered: 2, pending: { count: 1, first: [`incoming/dt=${DAY}/c.csv`] } },
    });
    expect(report.counts).toMatchObject({ published: 0, stale: 1 });
    // Still a bulk check: listings only (inputs, outputs, quarantine, summaries, failure index), no HEAD.
    expect(report.requests).toEqual({ list: 5, head: 0 });

    const plan = await rerunCli(['backfill', '--from', DAY, '--to', DAY, '--dry-run', ...app]);
    expect(plan.json()).toMatchObject({ planned: 1 });
    // The backfill's summary records c.csv as not covered: current, and the day incomplete (so the
    // backfill exits 1: not every day it waited for is published).
    expect(await backfillDay(1)).toMatchObject({ waited: 'incomplete', published: 0, notPublished: 1 });
    const incomplete = await rerunCli(['status', '--from', DAY, '--to', DAY, '--no-validate', ...app]);
    expect(incomplete.json<StatusJson>().partitions[0]).toMatchObject({
      status: 'incomplete',
      reason: `summary current, but not every input is covered (4 inputs: 2 with outputs, 1 skipped, 1 pending (incoming/dt=${DAY}/c.csv))`,
    });
    expect((await summaryCoverage()).notCovered.pending).toEqual({ count: 1, keys: [`incoming/dt=${DAY}/c.csv`] });

    // The worker gives up on c.csv and records why: a classified outcome. The summary's record is
    // untrue again (stale) until a backfill rebuilds it; then the day is published, and its summary
    // says which input it does not cover. A non-retryable failure, on its first receive: rerun status
    // and the summary's manifest call it by one name, dead-lettered (its message goes to the DLQ
    // after the queue's receives; the worker never deletes it).
    const queueArn = `arn:aws:sqs:us-east-1:123456789012:${p.appName}-normalize-queue`;
    await new S3FailureRecorder({
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      bucket: p.stack.outputBucket,
      maxReceiveCount: 2,
    }).record({
      queueArn,
      messageId: 'm-c',
      receiveCount: 1,
      subject: `s3://${p.stack.inputBucket}/incoming/dt=${DAY}/c.csv`,
      outcome: { messageId: 'm-c', status: 'failed', retryable: false, reason: 'EventParseError: not an S3 event' },
    });
    const deadLettered = await rerunCli(['status', '--from', DAY, '--to', DAY, '--no-validate', ...app]);
    expect(deadLettered.json<StatusJson>().partitions[0]).toMatchObject({ status: 'stale' });
    await backfillDay();
    const republished = await rerunCli(['status', '--from', DAY, '--to', DAY, '--no-validate', ...app]);
    expect(republished.json<StatusJson>().partitions[0]).toMatchObject({
      status: 'published',
      reason: `up to date (4 inputs: 2 with outputs, 1 skipped, 1 dead-lettered (incoming/dt=${DAY}/c.csv))`,
    });
    const recorded = await summaryCoverage();
    expect(recorded).toMatchObject({
      inputs: 4,
      covered: { withOutput: { count: 2 } },
      notCovered: {
        pending: { count: 0, keys: [] },
        deadLettered: { count: 1, keys: [`incoming/dt=${DAY}/c.csv`] },
        skipped: { count: 1, keys: [`incoming/dt=${DAY}/notes.txt`] },
      },
    });
    expect(recorded.notCovered).not.toHaveProperty('failing');
  }, 180_000);
});
