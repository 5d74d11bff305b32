import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { topology } from '../../app/topology.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';
import { failureIndexKey } from '../../src/failures/failureIndex.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline, type PipelineDefinition } from '../../src/pipeline/pipelineDescription.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';
import { rerunCli } from '../support/summaryPipeline.js';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;
const DAILY = { kind: 'time', grain: 'daily', template: '{yyyy}/{MM}/{dd}' } as const;

/**
 * A user's pipeline, described in the test only: an object stage writing hourly-keyed outputs
 * (`hourly/{bucket}/year=.../hour=HH/...`), a daily window stage over them (`daily/2026/12/05/counts.json`)
 * and a weekly window stage over the days.
 */
const pipeline: PipelineDefinition = definePipeline({
  name: 'events',
  stages: {
    hourly: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'hourly/', stripPrefix: 'incoming/' },
      partitions: HOURLY,
      codeVersion: 'hourly@1',
    },
    daily: {
      kind: 'window',
      input: { stage: 'hourly' },
      partitions: DAILY,
      outputPrefix: 'daily/',
      fileName: 'counts.json',
      codeVersion: 'daily@1',
    },
    weekly: {
      kind: 'window',
      input: { stage: 'daily' },
      partitions: { kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' },
      outputPrefix: 'weekly/',
      fileName: 'counts.json',
      codeVersion: 'weekly@1',
    },
  },
});

/** The file `--pipeline` reads, holding `description` as JSON. */
function pipelineFile(description: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rerun-winstatus-')), 'pipeline.json');
  writeFileSync(file, JSON.stringify(description));
  return file;
}

/** The user's daily window task, as their deployed function would define it: its input named after the upstream stage. */
function dailyTask(inputBucket: string, outputBucket: string) {
  return defineWindowTask({
    name: 'daily',
    codeVersion: 'daily@1',
    partitions: DAILY,
    inputs: [{ name: 'hourly', bucket: outputBucket, prefix: `hourly/${inputBucket}/`, partitions: HOURLY }],
    output: { bucket: outputBucket, prefix: 'daily/', fileName: 'counts.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      let files = 0;
      for await (const input of inputs) {
        files++;
        input.body.resume();
      }
      writer.write(`${JSON.stringify({ day: context.window.name, files })}\n`);
      return { files };
    },
  });
}

interface StatusJson {
  stage: string;
  grain: string;
  windows: { window: string; status: string; reason: string; inputs: number; outputKey: string; skipped: number }[];
  counts: Record<string, number>;
  skipped: { count: number; first: { source: string; key: string; reason: string }[] };
  requests: { list: number; head: number };
}

describe("rerun status --stage on a user's window stage (moto)", () => {
  const clients = testClients();
  let inputBucket: string;
  let outputBucket: string;
  let file: string;
  let env: Record<string, string>;
  const options = () => ({ store: new S3ObjectStore(clients.s3), reader: new S3PartitionStore(clients.s3) });

  /** The object stage's output of an input key, written as its worker would (deterministicKey). */
  const outputKeyOf = (inputKey: string) =>
    deterministicKey({ prefix: 'hourly/', source: { bucket: inputBucket, key: inputKey }, stripPrefix: 'incoming/' });
  const writeInput = async (inputKey: string) => {
    const put = await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: inputKey, Body: inputKey }));
    return (put.ETag as string).replaceAll('"', '');
  };
  /** The input (its bytes are its key), then its output recording the input's ETag as its source, as the worker writes it. */
  const writeOutput = async (inputKey: string, body: string) => {
    const etag = await writeInput(inputKey);
    const sha256Base64 = createHash('sha256').update(body).digest('base64');
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: outputBucket,
        Key: outputKeyOf(inputKey),
        Body: body,
        Metadata: buildOutputMetadata({
          source: { bucket: inputBucket, key: inputKey, etag },
          codeVersion: 'hourly@1',
          integrity: { kind: 'sha256', sha256Base64, bytes: Buffer.byteLength(body) },
        }),
      }),
    );
  };
  const hour = (day: string, h: string, name: string) => `incoming/year=2026/month=12/day=${day}/hour=${h}/${name}`;
  const status = (args: string[]) =>
    rerunCli(['status', '--pipeline', file, '--stage', 'daily', ...args], { env }).then((run) => ({
      ...run,
      report: () => run.json<StatusJson>(),
    }));

  beforeEach(async () => {
    inputBucket = await createBucket(clients.s3, uniqueName('winst-in'));
    outputBucket = await createBucket(clients.s3, uniqueName('winst-out'));
    env = { RERUN_INPUT_BUCKET: inputBucket, RERUN_OUTPUT_BUCKET: outputBucket };
    file = pipelineFile(describePipeline(pipeline));
    for (const [day, h, name] of [
      ['04', '23', 'a.json'],
      ['05', '00', 'b.json'],
      ['05', '13', 'c.json'],
      ['06', '02', 'd.json'],
    ] as const) {
      await writeOutput(hour(day, h, name), `{"hour":"${h}"}\n`);
    }
    // The days 12-04 and 12-05 built by the user's window task, in process; 12-06 never built.
    const task = dailyTask(inputBucket, outputBucket);
    for (const day of ['2026-12-04', '2026-12-05']) {
      expect(await task.run(day, options())).toMatchObject({ status: 'processed' });
    }
  });

  it("calls each built day published and the unbuilt one missing, by the stage's own daily scheme", async () => {
    const run = await status(['--from', '2026-12-04', '--to', '2026-12-06', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = run.report();
    expect(report.windows.map((w) => [w.window, w.status, w.inputs, w.outputKey])).toEqual([
      ['2026-12-04', 'published', 1, 'daily/2026/12/04/counts.json'],
      ['2026-12-05', 'published', 2, 'daily/2026/12/05/counts.json'],
      ['2026-12-06', 'missing', 1, 'daily/2026/12/06/counts.json'],
    ]);
    expect(report).toMatchObject({ stage: 'daily', grain: 'daily', skipped: { count: 0 } });
    expect(report.counts).toEqual({ published: 2, missing: 1, stale: 0, invalid: 0, incomplete: 0 });
    // Per day: one listing of its hours, one of its output folder; per published day one listing of
    // its upstream inputs; a HEAD of each published output.
    expect(report.requests).toEqual({ list: 8, head: 2 });

    const text = await status(['--from', '2026-12-04', '--to', '2026-12-06']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.text).toMatch(/^WINDOW +STATUS +INPUTS +REASON\n2026-12-04 +published +1 +up to date \(1 input\)/);
    expect(text.text).toContain('3 partitions: 2 published, 1 missing, 0 stale, 0 invalid');
    expect(text.stdout.at(-1)).toBe(
      `SUMMARY ${JSON.stringify({ stage: 'daily', from: '2026-12-04', to: '2026-12-06', published: 2, missing: 1, stale: 0, invalid: 0, incomplete: 0, skipped: 0, requests: { list: 8, head: 2 } })}`,
    );
  });

  it('propagates downstream: an upstream output rebuilt or added after the publish makes that day stale', async () => {
    await writeOutput(hour('05', '13', 'c.json'), '{"hour":"13","rebuilt":true}\n');
    await writeOutput(hour('04', '07', 'late.json'), '{"hour":"07"}\n');
    const report = (await status(['--from', '2026-12-04', '--to', '2026-12-05', '--json'])).report();
    expect(report.windows.map((w) => [w.window, w.status, w.reason])).toEqual([
      ['2026-12-04', 'stale', 'inputs changed since publish (2 inputs now)'],
      ['2026-12-05', 'stale', 'inputs changed since publish (2 inputs now)'],
    ]);
    // The window task agrees: it rebuilds the day, and status then calls it published.
    expect(await dailyTask(inputBucket, outputBucket).run('2026-12-05', options())).toMatchObject({
      status: 'processed',
    });
    const after = (await status(['--from', '2026-12-05', '--to', '2026-12-05', '--json'])).report();
    expect(after.windows.map((w) => w.status)).toEqual(['published']);
  });

  it('an upstream output removed after the publish makes its day stale too', async () => {
    await clients.s3.send(
      new DeleteObjectCommand({ Bucket: outputBucket, Key: outputKeyOf(hour('05', '00', 'b.json')) }),
    );
    const report = (await status(['--from', '2026-12-05', '--to', '2026-12-05', '--json'])).report();
    expect(report.windows.map((w) => [w.status, w.reason])).toEqual([
      ['stale', 'inputs changed since publish (1 input now)'],
    ]);
  });

  it('an upstream input without its output makes its day incomplete; once dead-lettered with a failure record, it is classified', async () => {
    const late = hour('05', '09', 'late.json');
    await writeInput(late);
    const report = (await status(['--from', '2026-12-05', '--to', '2026-12-05', '--json'])).report();
    expect(report.windows.map((w) => [w.status, w.reason])).toEqual([
      [
        'incomplete',
        `output current, but not every upstream input has a current output (3 inputs: 2 with outputs, 1 pending (${late}))`,
      ],
    ]);
    // Its output is still checked (one HEAD): an incomplete day's output may be invalid too.
    expect(report.requests.head).toBe(1);
    // The worker gave up on it: its failure index entry makes it a classified outcome, the day published.
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: outputBucket,
        Key: failureIndexKey(topology.failurePrefix, { bucket: inputBucket, key: late }, 'q', 'm-1', 'non-retryable'),
        Body: '',
      }),
    );
    const after = (await status(['--from', '2026-12-05', '--to', '2026-12-05', '--json'])).report();
    expect(after.windows.map((w) => w.status)).toEqual(['published']);
  });

  it('an upstream input uploaded again with identical bytes leaves its day published (its output records that ETag)', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100)); // LastModified has a one-second grain
    await writeInput(hour('05', '13', 'c.json'));
    const report = (await status(['--from', '2026-12-05', '--to', '2026-12-05', '--json'])).report();
    expect(report.windows.map((w) => [w.status, w.reason])).toEqual([['published', 'up to date (2 inputs)']]);
    // The listings nominate the older output; one HEAD of it reads its recorded source (plus the done-check).
    expect(report.requests.head).toBe(2);
  });

  it("a deleted window output is missing; one overwritten behind rerun's back is invalid", async () => {
    await clients.s3.send(new DeleteObjectCommand({ Bucket: outputBucket, Key: 'daily/2026/12/04/counts.json' }));
    await clients.s3.send(
      new PutObjectCommand({ Bucket: outputBucket, Key: 'daily/2026/12/05/counts.json', Body: '{"day":"forged"}\n' }),
    );
    const report = (await status(['--from', '2026-12-04', '--to', '2026-12-05', '--json'])).report();
    expect(report.windows.map((w) => [w.window, w.status])).toEqual([
      ['2026-12-04', 'missing'],
      ['2026-12-05', 'invalid'],
    ]);
    expect(report.windows[0]?.reason).toBe(
      'no output published (1 input; a marker remains from an interrupted publish)',
    );
    expect(report.windows[1]?.reason).toMatch(/^output object changed since it was published/);
  });

  it('counts an upstream key outside the scheme as skipped, with its reason, and judges the day without it', async () => {
    const stray = `hourly/${inputBucket}/year=2026/month=12/day=05/hour=7/stray.json`;
    await clients.s3.send(new PutObjectCommand({ Bucket: outputBucket, Key: stray, Body: '{}\n' }));
    const run = await status(['--from', '2026-12-05', '--to', '2026-12-05', '--json']);
    const report = run.report();
    expect(report.windows.map((w) => [w.status, w.inputs, w.skipped])).toEqual([['published', 2, 1]]);
    expect(report.skipped).toEqual({
      count: 1,
      first: [
        {
          source: 'hourly',
          key: stray,
          reason:
            'not in any hourly window of year={yyyy}/month={MM}/day={dd}/hour={HH}: the key does not start with ' +
            'year={yyyy}/month={MM}/day={dd}/hour={HH}/',
        },
      ],
    });
    const text = await status(['--from', '2026-12-05', '--to', '2026-12-05']);
    expect(text.text).toContain('Skipped, in no window (1):');
    expect(text.text).toContain(stray);
    expect(text.text).toContain(
      '1 partition: 1 published, 0 missing, 0 stale, 0 invalid, 1 key(s) in no window skipped',
    );
  });

  it("reads a window stage over another window stage's outputs by ISO week, and a rebuilt day makes its week stale", async () => {
    const weekly = defineWindowTask({
      name: 'weekly',
      codeVersion: 'weekly@1',
      partitions: { kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' },
      inputs: [{ name: 'daily', outputsOf: dailyTask(inputBucket, outputBucket) }],
      output: { bucket: outputBucket, prefix: 'weekly/', fileName: 'counts.json' },
      async build(inputs, writer) {
        let days = 0;
        for await (const input of inputs) {
          days++;
          input.body.resume();
        }
        writer.write(`{"days":${days}}\n`);
        return { days };
      },
    });
    await weekly.run('2026-W49', options());
    const week = (args: string[]) => rerunCli(['status', '--pipeline', file, '--stage', 'weekly', ...args], { env });
    const before = await week(['--from', '2026-W49', '--to', '2026-W50', '--json']);
    expect(before.code, before.stderr).toBe(0);
    expect(before.json<StatusJson>().windows.map((w) => [w.window, w.status, w.inputs])).toEqual([
      ['2026-W49', 'published', 2],
      ['2026-W50', 'missing', 0],
    ]);
    // A new hour changes the day's bytes (its count), so its rebuilt output has another ETag. (A day
    // rebuilt to the same bytes keeps its ETag, and its week rightly stays published.)
    await writeOutput(hour('05', '20', 'e.json'), '{"hour":"20"}\n');
    expect(await dailyTask(inputBucket, outputBucket).run('2026-12-05', options())).toMatchObject({
      status: 'processed',
      result: { files: 3 },
    });
    const after = await week(['--from', '2026-W49', '--to', '2026-W49', '--json']);
    expect(after.json<StatusJson>().windows.map((w) => w.status)).toEqual(['stale']);
  });

  it('refuses a window name of another grain or a reversed range with the accepted form (exit 2), nothing on stdout', async () => {
    for (const [stage, from, form] of [
      ['daily', '2026-12-05T13', /"2026-12-05T13" is not a daily window: expected YYYY-MM-DD/],
      ['daily', '2026-W49', /"2026-W49" is not a daily window/],
      ['weekly', '2026-12-05', /"2026-12-05" is not a weekly window: expected YYYY-Www, an ISO week/],
    ] as const) {
      const run = await rerunCli(['status', '--pipeline', file, '--stage', stage, '--from', from, '--to', from], {
        env,
      });
      expect(run.code, `${stage} ${from}`).toBe(2);
      expect(run.stderr).toMatch(form);
      expect(run.stdout).toEqual([]);
    }
    const reversed = await status(['--from', '2026-12-05', '--to', '2026-12-04']);
    expect(reversed.code).toBe(2);
    expect(reversed.stderr).toMatch(/ends \(2026-12-04\) before it starts/);
    const none = await status([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--from and --to are required: the windows of stage "daily" are daily: YYYY-MM-DD/);
  });

  it('refuses a stage it cannot know the keys of, saying why: no fileName, or an upstream key rule in code', async () => {
    const described = describePipeline(pipeline);
    const noFileName = pipelineFile({
      ...described,
      stages: { ...described.stages, daily: { ...described.stages.daily, fileName: undefined } },
    });
    const run = await rerunCli(
      ['status', '--pipeline', noFileName, '--stage', 'daily', '--from', '2026-12-05', '--to', '2026-12-05'],
      { env },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Window stage "daily" of .* declares no fileName: .* Add fileName/);
    const custom = pipelineFile({
      ...described,
      stages: { ...described.stages, hourly: { ...described.stages.hourly, outputKey: { custom: true } } },
    });
    const refused = await rerunCli(
      ['status', '--pipeline', custom, '--stage', 'daily', '--from', '2026-12-05', '--to', '2026-12-05'],
      { env },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /reads the outputs of stage "hourly", whose key rule is custom \(functions in code\)/,
    );
    expect(refused.stdout).toEqual([]);
  });
});
