import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../app/cli/dispatch.js';
import { publishDevSession } from '../../app/common/devSessionFile.js';
import { StackOutput } from '../../app/stackOutputs.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline, type PipelineDefinition } from '../../src/pipeline/pipelineDescription.js';
import { windowStageOutputKeys } from '../../src/window/windowStageOutputKeys.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { withConsoleCli } from '../support/consoleCli.js';
import { createBucket } from '../support/s3.js';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;

/**
 * A user's pipeline of two object stages and a window stage over each: `hourly` windows over clicks
 * keyed `year=/month=/day=/hour=/`, `monthly` windows over orders keyed `YYYY/MM/DD/`.
 */
const pipeline: PipelineDefinition = definePipeline({
  name: 'shop',
  stages: {
    clicks: {
      kind: 'object',
      input: { prefix: 'clicks/' },
      outputKey: { prefix: 'clicks-out/', stripPrefix: 'clicks/' },
      partitions: HOURLY,
      codeVersion: 'clicks@1',
    },
    orders: {
      kind: 'object',
      input: { prefix: 'orders/' },
      outputKey: { prefix: 'orders-out/', stripPrefix: 'orders/' },
      partitions: { kind: 'time', grain: 'daily', template: '{yyyy}/{MM}/{dd}' },
      codeVersion: 'orders@1',
    },
    hourly: {
      kind: 'window',
      input: { stage: 'clicks' },
      partitions: HOURLY,
      outputPrefix: 'hourly/',
      fileName: 'counts.json',
      codeVersion: 'hourly@2',
    },
    monthly: {
      kind: 'window',
      input: { stage: 'orders' },
      partitions: { kind: 'time', grain: 'monthly', template: '{yyyy}/{MM}' },
      outputPrefix: 'monthly/',
      fileName: 'totals.json',
      codeVersion: 'monthly@3',
    },
  },
});

interface QueueRow {
  name: string;
  stage?: string;
  url: string;
  visible: number;
}

describe("rerun ui on a user's pipeline of hourly and monthly window stages (moto)", () => {
  const clients = testClients();
  let inputBucket: string;
  let outputBucket: string;
  const queues: Record<string, string> = {};

  /** An input and the output its object stage wrote for it (the window stages' inputs). */
  const upload = async (stagePrefix: string, outputPrefix: string, path: string) => {
    const key = `${stagePrefix}${path}`;
    await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: key, Body: key }));
    const output = deterministicKey({
      prefix: outputPrefix,
      source: { bucket: inputBucket, key },
      stripPrefix: stagePrefix,
    });
    await clients.s3.send(new PutObjectCommand({ Bucket: outputBucket, Key: output, Body: `${path}\n` }));
    return output;
  };

  /** `rerun ui` with these arguments in this environment; gives its API's answers, then stops it. */
  function withConsole<T>(
    args: string[],
    env: NodeJS.ProcessEnv,
    use: (get: (path: string, status?: number) => Promise<unknown>) => Promise<T>,
  ): Promise<T> {
    return withConsoleCli(args, env, (api) => use(api.get));
  }

  beforeAll(async () => {
    inputBucket = await createBucket(clients.s3, uniqueName('uiwin-in'));
    outputBucket = await createBucket(clients.s3, uniqueName('uiwin-out'));
    const app = uniqueName('uiwin');
    for (const name of ['normalize', 'summarize', 'hourly', 'monthly']) {
      for (const role of ['queue', 'dlq']) {
        const out = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${app}-${name}-${role}` }));
        queues[`${name}-${role}`] = out.QueueUrl as string;
      }
    }
    for (const path of [
      'year=2026/month=12/day=05/hour=13/a.json',
      'year=2026/month=12/day=05/hour=13/b.json',
      'year=2026/month=12/day=05/hour=14/c.json',
    ]) {
      await upload('clicks/', 'clicks-out/', path);
    }
    for (const path of ['2026/11/30/z.csv', '2026/12/05/x.csv', '2026/12/20/y.csv']) {
      await upload('orders/', 'orders-out/', path);
    }
    // An object under December's listing that is in no day of the orders' scheme: skipped, with its reason.
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: outputBucket,
        Key: `orders-out/${inputBucket}/2026/12/misc/notes.txt`,
        Body: 'x',
      }),
    );
    // An object directly under the clicks' output root, outside any hour's folder: in no window.
    for (const name of ['stray.json', 'strayer.json']) {
      await clients.s3.send(
        new PutObjectCommand({ Bucket: outputBucket, Key: `clicks-out/${inputBucket}/${name}`, Body: '{}' }),
      );
    }
    // A dead letter of the hourly window stage: the console counts it and never receives it.
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: queues['hourly-dlq'], MessageBody: '{"window":"2026-12-05T13"}' }),
    );
  });

  /** A running rerun dev of the pipeline, as its session file records it (this process is the session's). */
  function devSession() {
    const state = mkdtempSync(join(tmpdir(), 'rerun-uiwin-state-'));
    const env: NodeJS.ProcessEnv = { XDG_RUNTIME_DIR: state, PATH: process.env.PATH ?? '' };
    const appName = uniqueName('uiwin');
    const session = publishDevSession(
      {
        appName,
        endpoint: awsEndpoint(),
        region: 'us-east-1',
        emulator: 'embedded',
        inputBucket,
        outputBucket,
        queueUrl: queues['normalize-queue'] as string,
        dlqUrl: queues['normalize-dlq'] as string,
        summaryQueueUrl: queues['summarize-queue'] as string,
        summaryDlqUrl: queues['summarize-dlq'] as string,
        pipeline: describePipeline(pipeline),
        windowStages: {
          hourly: { queueUrl: queues['hourly-queue'] as string, dlqUrl: queues['hourly-dlq'] as string },
          monthly: { queueUrl: queues['monthly-queue'] as string, dlqUrl: queues['monthly-dlq'] as string },
        },
      },
      { env, pid: process.pid },
    );
    return { env, appName, session };
  }

  it("lists an hourly window's inputs by the stage's year=/month=/day=/hour=/ keys, page by page", async () => {
    const { env, appName, session } = devSession();
    try {
      await withConsole(['--app-name', appName, '--stage', 'hourly'], env, async (get) => {
        const days = (await get('/api/days?from=2026-12-05&to=2026-12-05')) as {
          stage: Record<string, unknown>;
          partitions: { day: string; status: string; inputs: number }[];
        };
        expect(days.stage).toEqual({ name: 'hourly', kind: 'window', codeVersion: 'hourly@2', grain: 'hourly' });
        expect(days.partitions).toHaveLength(24);
        expect(days.partitions.filter((p) => p.inputs > 0).map((p) => [p.day, p.status, p.inputs])).toEqual([
          ['2026-12-05T13', 'missing', 2],
          ['2026-12-05T14', 'missing', 1],
        ]);
        const first = (await get('/api/inputs?day=2026-12-05T13&limit=1')) as {
          window: string;
          stage: string;
          items: { key: string; class: string; source: string; bucket: string }[];
          next?: string;
        };
        const root = `clicks-out/${inputBucket}/year=2026/month=12/day=05`;
        expect(first).toMatchObject({ window: '2026-12-05T13', stage: 'hourly' });
        expect(first.items).toEqual([
          expect.objectContaining({
            key: `${root}/hour=13/a.json`,
            class: 'input',
            source: 'clicks',
            bucket: outputBucket,
          }),
        ]);
        const second = (await get(
          `/api/inputs?day=2026-12-05T13&limit=1&after=${encodeURIComponent(first.next ?? '')}`,
        )) as typeof first;
        expect(second.items.map((i) => i.key)).toEqual([`${root}/hour=13/b.json`]);
        expect(second.next).toBeUndefined();
        // What is in no window (directly under the root) is the undated tile's, skipped with its reason.
        const undated = (await get('/api/inputs?day=undated&limit=1')) as typeof first;
        expect(undated.items).toEqual([
          expect.objectContaining({
            key: `clicks-out/${inputBucket}/stray.json`,
            class: 'skipped',
            skipReason: `directly under clicks-out/${inputBucket}/, outside any partition folder: in no window of stage hourly`,
          }),
        ]);
        const after = encodeURIComponent(undated.next ?? '');
        const rest = (await get(`/api/inputs?day=undated&limit=1&after=${after}`)) as typeof first;
        expect(rest.items.map((i) => i.key)).toEqual([`clicks-out/${inputBucket}/strayer.json`]);
        expect(rest.next).toBeUndefined();
        // A name of another grain is refused by name, and a request of more hours than a month's too.
        expect(await get('/api/inputs?day=2026-12-05', 400)).toMatchObject({
          error: expect.stringContaining('hourly'),
        });
        expect(await get('/api/days?from=2026-11-01&to=2026-12-05', 400)).toEqual({
          error: 'at most 744 windows per request',
        });
      });
    } finally {
      session.close();
    }
  });

  it("lists a monthly window's inputs by the stage's YYYY/MM/DD/ keys", async () => {
    const { env, appName, session } = devSession();
    try {
      await withConsole(['--app-name', appName, '--stage', 'monthly'], env, async (get) => {
        const days = (await get('/api/days?from=2026-11-29&to=2026-12-02')) as {
          partitions: { day: string; inputs: number; skipped: number }[];
        };
        expect(days.partitions.map((p) => [p.day, p.inputs, p.skipped])).toEqual([
          ['2026-11', 1, 0],
          ['2026-12', 2, 1],
        ]);
        const page = (await get('/api/inputs?day=2026-12')) as {
          items: { key: string; class: string; skipReason?: string }[];
        };
        expect(page.items.map((i) => [i.key, i.class])).toEqual([
          [`orders-out/${inputBucket}/2026/12/05/x.csv`, 'input'],
          [`orders-out/${inputBucket}/2026/12/20/y.csv`, 'input'],
          [`orders-out/${inputBucket}/2026/12/misc/notes.txt`, 'skipped'],
        ]);
        expect(page.items[2]?.skipReason).toBeTruthy();
      });
    } finally {
      session.close();
    }
  });

  it("shows every window stage's queue and DLQ, by stage name, and reads the DLQ without receiving", async () => {
    const { env, appName, session } = devSession();
    try {
      await withConsole(['--app-name', appName, '--stage', 'hourly'], env, async (get) => {
        expect(await get('/api/overview')).toMatchObject({ windowQueues: ['hourly', 'monthly'] });
        const live = (await get('/api/live')) as { queues: QueueRow[] };
        expect(live.queues.filter((q) => q.stage).map((q) => [q.name, q.stage, q.url])).toEqual([
          ['hourly queue', 'hourly', queues['hourly-queue']],
          ['hourly DLQ', 'hourly', queues['hourly-dlq']],
          ['monthly queue', 'monthly', queues['monthly-queue']],
          ['monthly DLQ', 'monthly', queues['monthly-dlq']],
        ]);
        expect(live.queues.find((q) => q.name === 'hourly DLQ')?.visible).toBe(1);
        const dead = (await get('/api/dead-letters?queue=hourly')) as Record<string, unknown>;
        expect(dead).toMatchObject({
          worker: 'hourly',
          stage: 'hourly',
          dlqUrl: queues['hourly-dlq'],
          depth: 1,
          inFlight: 0,
          command: `rerun redrive --queue hourly --app-name ${appName}`,
        });
      });
      // Still there and never received: visible, none in flight.
      const attributes = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queues['hourly-dlq'], AttributeNames: ['All'] }),
      );
      expect(attributes.Attributes?.ApproximateNumberOfMessages).toBe('1');
      expect(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible).toBe('0');
    } finally {
      session.close();
    }
  });

  it('with no daily window stage, judges the only window stage by its own windows, and asks for --stage among several', async () => {
    const env = {
      AWS_ENDPOINT_URL: awsEndpoint(),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      RERUN_INPUT_BUCKET: inputBucket,
      RERUN_OUTPUT_BUCKET: outputBucket,
    };
    const clicks = pipeline.stages.clicks as NonNullable<PipelineDefinition['stages'][string]>;
    const hourly = pipeline.stages.hourly as NonNullable<PipelineDefinition['stages'][string]>;
    const monthly = { ...(pipeline.stages.monthly as object), input: { stage: 'clicks' } } as typeof hourly;
    const file = join(mkdtempSync(join(tmpdir(), 'rerun-uiwin-')), 'pipeline.json');
    writeFileSync(
      file,
      JSON.stringify(describePipeline(definePipeline({ name: 'clicks', stages: { clicks, hourly } }))),
    );
    await withConsole(['--pipeline', file, '--from', '2026-12-05', '--to', '2026-12-05'], env, async (get) => {
      expect(await get('/api/overview')).toMatchObject({
        codeVersion: 'hourly@2',
        stage: { name: 'hourly', kind: 'window' },
      });
    });
    const both = join(mkdtempSync(join(tmpdir(), 'rerun-uiwin-')), 'pipeline.json');
    writeFileSync(
      both,
      JSON.stringify(describePipeline(definePipeline({ name: 'clicks', stages: { clicks, hourly, monthly } }))),
    );
    let stderr = '';
    const code = await runCli(['ui', '--pipeline', both], {
      stdout: () => {},
      stderr: (text) => {
        stderr += text;
      },
      env,
      isTTY: false,
      signal: new AbortController().signal,
    });
    expect(code).toBe(1);
    expect(stderr).toContain('has 2 window stages (hourly, monthly): pass --stage NAME');
  });

  it("with --stack, finds the window stages' queues in the stack's <Stage>Window outputs", async () => {
    const stackName = uniqueName('uiwin');
    const hourly = windowStageOutputKeys('hourly');
    const outputs = {
      [StackOutput.INPUT_BUCKET]: inputBucket,
      [StackOutput.OUTPUT_BUCKET]: outputBucket,
      [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(describePipeline(pipeline)),
      [StackOutput.PIPELINE_STAGE]: 'clicks',
      [StackOutput.QUEUE_URL]: queues['normalize-queue'] as string,
      [StackOutput.DLQ_URL]: queues['normalize-dlq'] as string,
      [hourly.queueUrl]: queues['hourly-queue'] as string,
      [hourly.dlqUrl]: queues['hourly-dlq'] as string,
    };
    await new CloudFormationClient({ endpoint: awsEndpoint(), region: 'us-east-1' }).send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::SQS::Queue' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
        }),
      }),
    );
    const env = {
      AWS_ENDPOINT_URL: awsEndpoint(),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    };
    await withConsole(['--stack', stackName, '--stage', 'hourly'], env, async (get) => {
      const live = (await get('/api/live')) as { queues: QueueRow[]; notes: string[] };
      expect(live.queues.filter((q) => q.stage).map((q) => q.name)).toEqual(['hourly queue', 'hourly DLQ']);
      expect(live.notes.join('\n')).toContain('the queues of stage monthly are not shown');
      expect(await get('/api/dead-letters?queue=hourly')).toMatchObject({ stage: 'hourly', depth: 1 });
    });
  });
});
