import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { testClients } from '../support/aws.js';
import { upload } from '../support/pipeline.js';
import { listKeys, readText } from '../support/s3.js';
import { ordersCsv, provisionTwoStagePipeline, rerunCli, type TwoStagePipeline } from '../support/summaryPipeline.js';

interface BatchJson {
  engine: string;
  runner: string;
  planned?: number;
  enqueued?: number;
  waited?: string;
  done?: number;
  remaining?: number;
  gone?: number;
  deadLettered?: number;
  job?: {
    id: string;
    token: string;
    ranBefore?: boolean;
    manifest: string;
    status: string;
    tasks: number;
    succeeded: number;
    failed: number;
    report?: string;
    failures: { key: string; resultCode: string; reason: string }[];
  };
}

describe('rerun reprocess --engine batch-operations against the emulator (the local stand-in runs the job)', () => {
  const clients = testClients();
  const store = new S3ObjectStore(clients.s3);
  const run = (p: TwoStagePipeline, ...args: string[]) =>
    rerunCli(['reprocess', '--engine', 'batch-operations', ...args, '--app-name', p.appName]);
  const outputKey = (p: TwoStagePipeline, key: string) =>
    `normalized/${p.stack.inputBucket}/${key.slice('incoming/'.length)}.ndjson`;

  it('writes the plan as a manifest, runs it as one job, prints the SQS summary from the report, and the same plan again is nothing to do', async () => {
    const p = await provisionTwoStagePipeline(clients);
    const keys = ['incoming/dt=2026-02-01/a b.csv', 'incoming/dt=2026-02-01/c+d.csv', 'incoming/dt=2026-02-02/e.csv'];
    for (const [i, key] of keys.entries()) await upload(clients, p.stack.inputBucket, key, ordersCsv(`b${i}`, 2));
    // The events are dropped: only the job builds the outputs.
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: p.stack.queueUrl }));

    // A dry run plans and writes nothing.
    const dry = await run(p, '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json<BatchJson>()).toMatchObject({ engine: 'batch-operations', planned: 3, enqueued: 0 });
    expect(dry.json<BatchJson>().job).toBeUndefined();
    expect(await listKeys(clients.s3, p.stack.outputBucket, 'batch-operations/')).toEqual([]);

    const first = await run(p, '--wait');
    expect(first.code, first.stderr).toBe(0);
    // The choice is said, with its reason, and so is the job.
    expect(first.stderr).toContain('engine: batch-operations (local stand-in: AWS_ENDPOINT_URL=');
    // The result on stdout, then its SUMMARY line last (progress stays on stderr).
    expect(first.stdout.join('\n')).toMatch(/All 3 task\(s\) of job \S+ succeeded\./);
    expect(first.stdout.at(-1)).toMatch(/^SUMMARY /);
    const summary = JSON.parse((first.stdout.at(-1) ?? '').replace(/^SUMMARY /, '')) as BatchJson;
    expect(summary).toMatchObject({
      engine: 'batch-operations',
      runner: 'local',
      planned: 3,
      enqueued: 3,
      waited: 'complete',
      done: 3,
      remaining: 0,
      gone: 0,
      deadLettered: 0,
    });
    expect(summary.job).toMatchObject({ status: 'Complete', tasks: 3, succeeded: 3, failed: 0, failures: [] });
    expect(summary.job?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // The manifest: content-addressed, keys URL-encoded (a space as %20, a plus as %2B), in plan order.
    const manifestKey = (summary.job?.manifest ?? '').replace(`s3://${p.stack.outputBucket}/`, '');
    expect(manifestKey).toMatch(/^batch-operations\/manifests\/[0-9a-f]{64}\.csv$/);
    expect(await readText(clients.s3, p.stack.outputBucket, manifestKey)).toBe(
      `${p.stack.inputBucket},incoming/dt%3D2026-02-01/a%20b.csv\n` +
        `${p.stack.inputBucket},incoming/dt%3D2026-02-01/c%2Bd.csv\n` +
        `${p.stack.inputBucket},incoming/dt%3D2026-02-02/e.csv\n`,
    );
    for (const key of keys) expect(await store.head(p.stack.outputBucket, outputKey(p, key)), key).toBeDefined();
    // The report of failed tasks only: a manifest.json with no results file.
    expect(
      await listKeys(clients.s3, p.stack.outputBucket, `batch-operations/reports/job-${summary.job?.id}/`),
    ).toEqual([`batch-operations/reports/job-${summary.job?.id}/manifest.json`]);

    const again = await run(p, '--wait', '--json');
    expect(again.code, again.stderr).toBe(0);
    const second = again.json<BatchJson>();
    expect(second).toMatchObject({ planned: 0, enqueued: 0 });
    expect(second.job).toBeUndefined();

    // The same manifest as a job of its own (--manifest: no planning): every task a skip, all Succeeded.
    const rerunManifest = await run(p, '--manifest', `s3://${p.stack.outputBucket}/${manifestKey}`, '--wait', '--json');
    expect(rerunManifest.code, rerunManifest.stderr).toBe(0);
    const third = rerunManifest.json<BatchJson>();
    expect(third).toMatchObject({ waited: 'complete', done: 3, remaining: 0 });
    expect(third.job).toMatchObject({ tasks: 3, succeeded: 3, failed: 0 });
    // Submitted again, the same request is the same job: its report is read, nothing runs.
    const repeat = await run(p, '--manifest', `s3://${p.stack.outputBucket}/${manifestKey}`, '--wait', '--json');
    expect(repeat.code, repeat.stderr).toBe(0);
    expect(repeat.json<BatchJson>().job).toMatchObject({ id: third.job?.id, ranBefore: true, succeeded: 3 });
  }, 120_000);

  it('reads failed tasks from the completion report: exit 1, the result code and reason of each', async () => {
    const p = await provisionTwoStagePipeline(clients);
    await upload(clients, p.stack.inputBucket, 'incoming/ok.csv', ordersCsv('ok', 1));
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: p.stack.queueUrl }));
    // A hand-written manifest with a key that is not URL-encoded as manifests must be: a PermanentFailure.
    await upload(
      clients,
      p.stack.outputBucket,
      'ops/manual.csv',
      `${p.stack.inputBucket},incoming/ok.csv\n${p.stack.inputBucket},incoming/100%.csv\n`,
    );
    const result = await run(p, '--manifest', `s3://${p.stack.outputBucket}/ops/manual.csv`, '--wait');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout.at(-1)).toMatch(/^SUMMARY /);
    const summary = JSON.parse((result.stdout.at(-1) ?? '').slice('SUMMARY '.length)) as BatchJson;
    expect(summary).toMatchObject({ waited: 'incomplete', done: 1, remaining: 1 });
    expect(summary.job).toMatchObject({ tasks: 2, succeeded: 1, failed: 1 });
    expect(summary.job?.failures).toEqual([
      { key: 'incoming/100%.csv', resultCode: 'PermanentFailure', reason: expect.stringMatching(/not URL-encoded/) },
    ]);
    expect(result.stdout.join('\n')).toContain('ended Complete: 1 succeeded, 1 failed');
  }, 120_000);
});

describe('rerun reprocess --engine auto', () => {
  const clients = testClients();

  it('chooses SQS messages for a plan below the threshold, and says so', async () => {
    const p = await provisionTwoStagePipeline(clients);
    await upload(clients, p.stack.inputBucket, 'incoming/one.csv', ordersCsv('one', 1));
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: p.stack.queueUrl }));
    const result = await rerunCli(['reprocess', '--engine', 'auto', '--app-name', p.appName]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('engine: auto chose sqs for 1 planned input(s) (batch-operations from 1,000,000)');
    const summary = JSON.parse((result.stdout.at(-1) ?? '').replace(/^SUMMARY /, '')) as BatchJson;
    expect(summary).toMatchObject({ engine: 'sqs', planned: 1, enqueued: 1 });
    expect(await listKeys(clients.s3, p.stack.outputBucket, 'batch-operations/')).toEqual([]);
  }, 120_000);
});
