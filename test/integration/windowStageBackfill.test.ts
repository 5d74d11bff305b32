import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, it } from 'vitest';
import { readRuns } from '../../app/runs/runProgressFile.js';
import { StackOutput } from '../../app/stackOutputs.js';
import { ensureQueue } from '../../local/provision.js';
import { toSqsRecord } from '../../local/runner/sqsRecord.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline } from '../../src/pipeline/pipelineDescription.js';
import { createWindowTaskHandler } from '../../src/window/createWindowTaskHandler.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { awsEndpoint, RequestLog, testClients, uniqueName } from '../support/aws.js';
import { OFFLINE_CONTEXT } from '../support/offlineBatch.js';
import { createBucket, readText } from '../support/s3.js';
import { type CliResult, rerunCli } from '../support/summaryPipeline.js';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;
const DAILY = { kind: 'time', grain: 'daily', template: '{yyyy}/{MM}/{dd}' } as const;
const WEEKLY = { kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' } as const;

/**
 * A user's pipeline, described in the test only: an object stage writing hourly-keyed outputs, a
 * daily window stage over them and a weekly window stage over the days.
 */
const pipeline = definePipeline({
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
      partitions: WEEKLY,
      outputPrefix: 'weekly/',
      fileName: 'counts.json',
      codeVersion: 'weekly@1',
    },
  },
});

/** The user's deployed window tasks, as their functions define them. */
function userTasks(inputBucket: string, outputBucket: string) {
  const daily = defineWindowTask({
    name: 'daily',
    codeVersion: 'daily@1',
    partitions: DAILY,
    inputs: [{ name: 'hourly', bucket: outputBucket, prefix: `hourly/${inputBucket}/`, partitions: HOURLY }],
    output: { bucket: outputBucket, prefix: 'daily/', fileName: 'counts.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      const bodies: string[] = [];
      for await (const input of inputs) bodies.push(await readAll(input.body));
      writer.write(`${JSON.stringify({ day: context.window.name, files: bodies.length, bodies })}\n`);
      return { files: bodies.length };
    },
  });
  const weekly = defineWindowTask({
    name: 'weekly',
    codeVersion: 'weekly@1',
    partitions: WEEKLY,
    inputs: [{ name: 'daily', outputsOf: daily }],
    output: { bucket: outputBucket, prefix: 'weekly/', fileName: 'counts.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      const days: unknown[] = [];
      for await (const input of inputs) {
        days.push(JSON.parse(await readAll(input.body)));
      }
      writer.write(`${JSON.stringify({ week: context.window.name, days })}\n`);
      return { days: days.length };
    },
  });
  return { daily, weekly };
}

interface StageJson {
  stage: string;
  windows: { window: string; status: string }[];
  tasks: { window: string; status: string; reason: string; cascade: boolean }[];
  enqueued: number;
  sendRequests: number;
  requests: { list: number; head: number };
  notSent?: string;
  wait?: { ended: string; published: number; total: number; polls: number; requests: { list: number; head: number } };
}
interface BackfillJson {
  planned: number;
  enqueued: number;
  token: string;
  stages: StageJson[];
}

describe("rerun backfill --stage on a user's window stages (moto)", () => {
  const handlerLog = new RequestLog();
  const clients = testClients();
  const handlerClients = testClients(handlerLog);
  let inputBucket: string;
  let outputBucket: string;
  let file: string;
  let env: Record<string, string>;
  const queues: Record<'daily' | 'weekly', { url: string; arn: string }> = {} as never;
  /** What the in-process "Lambda" did, in order: `received <stage> <window>`. */
  let events: string[];

  const outputKeyOf = (inputKey: string) =>
    deterministicKey({ prefix: 'hourly/', source: { bucket: inputBucket, key: inputKey }, stripPrefix: 'incoming/' });
  /** The object stage's work for one input, as its worker writes it: the input, then its output recording its ETag. */
  const writeOutput = async (inputKey: string, body: string) => {
    const put = await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: inputKey, Body: inputKey }));
    const etag = (put.ETag as string).replaceAll('"', '');
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: outputBucket,
        Key: outputKeyOf(inputKey),
        Body: body,
        Metadata: buildOutputMetadata({
          source: { bucket: inputBucket, key: inputKey, etag },
          codeVersion: 'hourly@1',
          integrity: {
            kind: 'sha256',
            sha256Base64: createHash('sha256').update(body).digest('base64'),
            bytes: Buffer.byteLength(body),
          },
        }),
      }),
    );
  };
  const hour = (day: string, h: string, name: string) => `incoming/year=2026/month=12/day=${day}/hour=${h}/${name}`;

  /** Receives what each window queue holds and runs it through the user's handler, as Lambda would. */
  async function drainOnce(): Promise<number> {
    const tasks = userTasks(inputBucket, outputBucket);
    let handled = 0;
    // The weekly queue first: a week sent beside its days would be received before them.
    for (const stage of ['weekly', 'daily'] as const) {
      const queue = queues[stage];
      const received = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queue.url,
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ['All'],
          VisibilityTimeout: 30,
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) continue;
      const records = messages.map((m) => toSqsRecord(m, { queueArn: queue.arn, region: 'us-east-1' }));
      for (const r of records) events.push(`received ${stage} ${JSON.parse(r.body).window}`);
      const handler = createWindowTaskHandler({ task: tasks[stage], clients: handlerClients });
      const response = await handler({ Records: records }, OFFLINE_CONTEXT);
      const failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      expect([...failed]).toEqual([]);
      await clients.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: records.map((r, i) => ({ Id: `d${i}`, ReceiptHandle: r.receiptHandle })),
        }),
      );
      handled += records.length;
    }
    return handled;
  }

  /** A backfill run to its end while the queues are drained beside it (the deployed functions' part). */
  async function backfillWhileDraining(args: string[]): Promise<CliResult> {
    let done = false;
    const cli = backfill(args).finally(() => {
      done = true;
    });
    while (!done) {
      await drainOnce();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return cli;
  }

  const backfill = (args: string[]) => rerunCli(['backfill', '--pipeline', file, ...args], { env });
  const queueArgs = () => ['--queue-url', queues.daily.url, '--downstream-queue', `weekly=${queues.weekly.url}`];
  const status = async (stage: string, from: string, to: string) => {
    const run = await rerunCli(['status', '--pipeline', file, '--stage', stage, '--from', from, '--to', to, '--json'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    return run.json<{ windows: { window: string; status: string }[] }>().windows.map((w) => [w.window, w.status]);
  };

  beforeEach(async () => {
    events = [];
    inputBucket = await createBucket(clients.s3, uniqueName('winbf-in'));
    outputBucket = await createBucket(clients.s3, uniqueName('winbf-out'));
    env = { RERUN_INPUT_BUCKET: inputBucket, RERUN_OUTPUT_BUCKET: outputBucket };
    file = join(mkdtempSync(join(tmpdir(), 'rerun-winbf-')), 'pipeline.json');
    writeFileSync(file, JSON.stringify(describePipeline(pipeline)));
    for (const stage of ['daily', 'weekly'] as const) {
      const name = uniqueName(`winbf-${stage}`);
      const dlq = await ensureQueue(clients, `${name}-dlq.fifo`, { FifoQueue: 'true' });
      queues[stage] = await ensureQueue(clients, `${name}.fifo`, {
        FifoQueue: 'true',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 3 }),
      });
    }
    // Three days of hourly outputs in ISO week 2026-W49 (Monday 11-30 to Sunday 12-06).
    for (const [day, h, name] of [
      ['01', '00', 'a.json'],
      ['01', '13', 'b.json'],
      ['02', '05', 'c.json'],
      ['03', '23', 'd.json'],
    ] as const) {
      await writeOutput(hour(day, h, name), `{"hour":"${h}"}\n`);
    }
  });

  it('plans the missing days, publishes them stage by stage with --wait, then plans nothing; a rebuilt hour cascades to its day and week', async () => {
    const range = ['--stage', 'daily', '--from', '2026-12-01', '--to', '2026-12-03'];

    // 1. Dry run: the three days are missing; nothing is sent.
    const dry = await backfill([...range, '--mode', 'missing', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = dry.json<BackfillJson>();
    expect(planned.stages.map((s) => [s.stage, s.tasks.map((t) => [t.window, t.status])])).toEqual([
      [
        'daily',
        [
          ['2026-12-01', 'missing'],
          ['2026-12-02', 'missing'],
          ['2026-12-03', 'missing'],
        ],
      ],
    ]);
    // Per missing day: one listing of its hours (its 24 hours share the day's prefix) and one of its output folder.
    expect(planned.stages[0]?.requests).toEqual({ list: 6, head: 0 });
    expect(planned).toMatchObject({ planned: 3, enqueued: 0 });
    expect(await drainOnce()).toBe(0);

    // 2. --wait --downstream: the days, then (once they are published) their week.
    const run = await backfillWhileDraining([
      ...range,
      '--downstream',
      '--wait',
      '--poll-interval',
      '100',
      '--timeout',
      '60',
      ...queueArgs(),
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // Its run file (what rerun ui's Runs show of it): what was asked, ended with 0, the last stage's count.
    const [newest] = readRuns({ where: awsEndpoint(), inputBucket, outputBucket });
    expect(newest).toMatchObject({
      command: 'backfill',
      label: 'backfill --stage daily 2026-12-01..2026-12-03 (mode stale, downstream weekly)',
      state: 'ended',
      ended: { code: 0 },
      progress: { phase: 'waiting', done: 1, total: 1, unit: 'weekly windows published' },
    });
    const sent = run.json<BackfillJson>();
    expect(sent.stages.map((s) => [s.stage, s.tasks.map((t) => t.window), s.enqueued, s.wait?.ended])).toEqual([
      ['daily', ['2026-12-01', '2026-12-02', '2026-12-03'], 3, 'complete'],
      ['weekly', ['2026-W49'], 1, 'complete'],
    ]);
    expect(sent.stages.map((s) => s.sendRequests)).toEqual([1, 1]);
    // The week was sent only after every planned day was published: no weekly delivery before the last daily one.
    const lastDaily = events.findLastIndex((e) => e.startsWith('received daily'));
    const firstWeekly = events.findIndex((e) => e.startsWith('received weekly'));
    expect(lastDaily).toBeGreaterThanOrEqual(0);
    expect(firstWeekly).toBeGreaterThan(lastDaily);
    expect(JSON.parse(await readText(clients.s3, outputBucket, 'weekly/2026-W49/counts.json'))).toMatchObject({
      week: '2026-W49',
      days: [{ files: 2 }, { files: 1 }, { files: 1 }],
    });
    console.info(`[figures] backfill --wait --downstream: ${JSON.stringify(run.stdout.length ? summarize(sent) : {})}`);
    console.info(`[figures] handler requests for 3 days + 1 week: ${JSON.stringify(countOps(handlerLog))}`);

    // 3. The same backfill again: every window published, nothing planned, nothing sent.
    events = [];
    const again = await backfillWhileDraining([...range, '--downstream', '--wait', ...queueArgs(), '--json']);
    expect(again.code, again.stderr).toBe(0);
    const nothing = again.json<BackfillJson>();
    expect(nothing.stages.map((s) => [s.stage, s.tasks.length, s.enqueued, s.sendRequests])).toEqual([
      ['daily', 0, 0, 0],
      ['weekly', 0, 0, 0],
    ]);
    expect(events).toEqual([]);
    console.info(`[figures] second backfill: ${JSON.stringify(summarize(nothing))}`);

    // 4. An hour of 12-02 rebuilt (new bytes): the day is stale, its week still published by its own status.
    await writeOutput(hour('02', '05', 'c.json'), '{"hour":"05","rebuilt":true}\n');
    expect(await status('daily', '2026-12-01', '2026-12-03')).toEqual([
      ['2026-12-01', 'published'],
      ['2026-12-02', 'stale'],
      ['2026-12-03', 'published'],
    ]);
    expect(await status('weekly', '2026-W49', '2026-W49')).toEqual([['2026-W49', 'published']]);
    const cascade = await backfill([...range, '--downstream', '--dry-run', '--json']);
    expect(cascade.code, cascade.stderr).toBe(0);
    const plan = cascade.json<BackfillJson>();
    expect(plan.stages.map((s) => s.tasks.map((t) => [t.window, t.status, t.cascade]))).toEqual([
      [['2026-12-02', 'stale', false]],
      [['2026-W49', 'published', true]],
    ]);
    expect(plan.stages[1]?.tasks[0]?.reason).toMatch(/rebuilt for daily 2026-12-02 \(planned\)$/);

    events = [];
    const rebuilt = await backfillWhileDraining([
      ...range,
      '--downstream',
      '--wait',
      '--poll-interval',
      '100',
      '--timeout',
      '60',
      ...queueArgs(),
      '--json',
    ]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(events).toEqual(['received daily 2026-12-02', 'received weekly 2026-W49']);
    const week = JSON.parse(await readText(clients.s3, outputBucket, 'weekly/2026-W49/counts.json'));
    expect(week.days[1].bodies).toEqual(['{"hour":"05","rebuilt":true}\n']);
    expect(await status('weekly', '2026-W49', '2026-W49')).toEqual([['2026-W49', 'published']]);
    console.info(`[figures] cascade backfill: ${JSON.stringify(summarize(rebuilt.json<BackfillJson>()))}`);
  });

  it('without --wait sends every stage at once and says so; a week built before its day is stale afterwards', async () => {
    const range = ['--stage', 'daily', '--from', '2026-12-01', '--to', '2026-12-03', '--downstream'];
    const run = await backfill([...range, ...queueArgs()]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/without --wait every stage is sent at once/);
    expect(run.stdout.at(-1)).toMatch(/^SUMMARY .*"planned":4,"enqueued":4/);
    // The weekly queue is drained first: the week is built while no day is published yet.
    const tasks = userTasks(inputBucket, outputBucket);
    const weekly = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queues.weekly.url,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    const records = (weekly.Messages ?? []).map((m) =>
      toSqsRecord(m, { queueArn: queues.weekly.arn, region: 'us-east-1' }),
    );
    expect(records).toHaveLength(1);
    await createWindowTaskHandler({ task: tasks.weekly, clients: handlerClients })(
      { Records: records },
      OFFLINE_CONTEXT,
    );
    await clients.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queues.weekly.url,
        Entries: records.map((r, i) => ({ Id: `d${i}`, ReceiptHandle: r.receiptHandle })),
      }),
    );
    while ((await drainOnce()) > 0) {}
    expect(await status('daily', '2026-12-01', '2026-12-03')).toEqual([
      ['2026-12-01', 'published'],
      ['2026-12-02', 'published'],
      ['2026-12-03', 'published'],
    ]);
    expect(await status('weekly', '2026-W49', '2026-W49')).toEqual([['2026-W49', 'stale']]);
    // The next backfill rebuilds it.
    const next = await backfill([...range, '--dry-run', '--json']);
    expect(next.json<BackfillJson>().stages.map((s) => s.tasks.map((t) => [t.window, t.status]))).toEqual([
      [],
      [['2026-W49', 'stale']],
    ]);
  });

  it("--stack: finds each stage's queue by its <Stage>WindowQueueUrl output; a wait that times out leaves the downstream stage unsent (exit 1)", async () => {
    const outputs: Record<string, string> = {
      [StackOutput.INPUT_BUCKET]: inputBucket,
      [StackOutput.OUTPUT_BUCKET]: outputBucket,
      [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(describePipeline(pipeline)),
      [StackOutput.PIPELINE_STAGE]: 'hourly',
      DailyWindowQueueUrl: queues.daily.url,
      WeeklyWindowQueueUrl: queues.weekly.url,
    };
    const stackName = uniqueName('Events');
    await new CloudFormationClient({ endpoint: awsEndpoint(), region: 'us-east-1' }).send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::SQS::Queue' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
        }),
      }),
    );
    // Nothing drains the queues: the days are sent, the wait times out, the week is not sent.
    const run = await rerunCli(
      [
        'backfill',
        '--stack',
        stackName,
        '--stage',
        'daily',
        '--from',
        '2026-12-01',
        '--to',
        '2026-12-02',
        '--downstream',
        '--wait',
        '--timeout',
        '1',
        '--poll-interval',
        '200',
      ],
      {},
    );
    expect(run.code, run.stderr).toBe(1);
    // Its run file ends with the same code, in the phase it stopped in: waiting on the days.
    const [newest] = readRuns({ where: awsEndpoint(), inputBucket, outputBucket });
    expect(newest).toMatchObject({
      command: 'backfill',
      label: 'backfill --stage daily 2026-12-01..2026-12-02 (mode stale, downstream weekly)',
      state: 'ended',
      ended: { code: 1 },
      progress: { phase: 'waiting', done: 0, total: 2, unit: 'daily windows published' },
    });
    expect(run.text).toMatch(/^Stage daily, windows 2026-12-01\.\.2026-12-02: 2 partitions: 0 published, 2 missing/);
    expect(run.text).toMatch(/WINDOW +STATUS +INPUTS +REASON\n2026-12-01 +missing +2 /);
    expect(run.text).toContain('daily: enqueued 2/2. Timed out with 0/2 published; the tasks keep running.');
    expect(run.text).toContain(
      'weekly: not sent: stage "daily" ended its wait timeout with 2 window(s) not published; run the same backfill again once it is.',
    );
    const summary = JSON.parse((run.stdout.at(-1) as string).replace(/^SUMMARY /, ''));
    expect(summary).toMatchObject({ stage: 'daily', planned: 2, enqueued: 2, mode: 'stale' });
    expect(summary.stages.map((s: { stage: string; notSent?: string }) => [s.stage, s.notSent !== undefined])).toEqual([
      ['daily', false],
      ['weekly', true],
    ]);
    // What was sent: one window task message per day, in a group per window, deduplicated by window and run token.
    const received = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queues.daily.url,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId'],
      }),
    );
    const sent = (received.Messages ?? []).map((m) => [
      JSON.parse(m.Body as string).window,
      m.Attributes?.MessageGroupId,
      m.Attributes?.MessageDeduplicationId,
    ]);
    sent.sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    expect(sent).toEqual([
      ['2026-12-01', 'daily/2026-12-01', `daily/2026-12-01:${summary.token}`],
      ['2026-12-02', 'daily/2026-12-02', `daily/2026-12-02:${summary.token}`],
    ]);
    expect(summary.token).toMatch(/^backfill-\d{8}T\d{9}Z$/);
    expect(
      (await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queues.weekly.url }))).Messages,
    ).toBeUndefined();
  });

  it('refuses an object stage, a window stage without a queue, and --downstream without --stage', async () => {
    const object = await backfill(['--stage', 'hourly', '--from', '2026-12-01', '--to', '2026-12-01']);
    expect(object.code).toBe(2);
    expect(object.stderr).toMatch(/stage "hourly" .* is an object stage: .* rerun reprocess --stage hourly/);
    const noQueue = await backfill(['--stage', 'daily', '--from', '2026-12-01', '--to', '2026-12-01']);
    expect(noQueue.code).toBe(2);
    expect(noQueue.stderr).toMatch(/No queue for window stage "daily": pass --stack NAME .* DailyWindowQueueUrl/);
    const noStage = await rerunCli(['backfill', '--downstream', '--from', '2026-12-01', '--to', '2026-12-01'], {
      env,
    });
    expect(noStage.code).toBe(2);
    expect(noStage.stderr).toMatch(/--downstream needs --stage/);
    const badQueue = await backfill([
      '--stage',
      'daily',
      '--from',
      '2026-12-01',
      '--to',
      '2026-12-01',
      '--downstream',
      '--downstream-queue',
      queues.weekly.url,
    ]);
    expect(badQueue.code).toBe(2);
    expect(badQueue.stderr).toMatch(/--downstream-queue takes STAGE=URL/);
    const wrongGrain = await backfill(['--stage', 'weekly', '--from', '2026-12-01', '--to', '2026-12-01', '--dry-run']);
    expect(wrongGrain.code).toBe(2);
    expect(wrongGrain.stderr).toMatch(/"2026-12-01" is not a weekly window/);
  });
});

async function readAll(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

/** Requests per stage of a backfill, for the report. */
function summarize(result: BackfillJson) {
  return result.stages.map((s) => ({
    stage: s.stage,
    windows: s.windows.length,
    planned: s.tasks.length,
    plan: s.requests,
    send: s.sendRequests,
    ...(s.wait ? { polls: s.wait.polls, wait: s.wait.requests } : {}),
  }));
}

function countOps(log: RequestLog): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const op of log.operations()) counts[op] = (counts[op] ?? 0) + 1;
  return counts;
}
