import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../app/cli/dispatch.js';
import { publishDevSession } from '../../app/common/devSessionFile.js';
import { StackOutput } from '../../app/stackOutputs.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline, type PipelineDefinition } from '../../src/pipeline/pipelineDescription.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { withConsoleCli } from '../support/consoleCli.js';
import { createBucket } from '../support/s3.js';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;
const DAILY = { kind: 'time', grain: 'daily', template: '{yyyy}/{MM}/{dd}' } as const;

/** A user's object stage writing hourly-keyed outputs (`hourly/{bucket}/year=.../hour=HH/...`). */
const hourlyStage = {
  kind: 'object',
  input: { prefix: 'incoming/' },
  outputKey: { prefix: 'hourly/', stripPrefix: 'incoming/' },
  partitions: HOURLY,
  codeVersion: 'hourly@1',
} as const;

/** The user's pipeline, described in the test only: the object stage and a daily window stage over it. */
const pipeline: PipelineDefinition = definePipeline({
  name: 'events',
  stages: {
    hourly: hourlyStage,
    daily: {
      kind: 'window',
      input: { stage: 'hourly' },
      partitions: DAILY,
      outputPrefix: 'daily/',
      fileName: 'counts.json',
      codeVersion: 'daily@7',
    },
  },
});

/** The user's daily window task, as their deployed function would define it. */
function dailyTask(inputBucket: string, outputBucket: string) {
  return defineWindowTask({
    name: 'daily',
    codeVersion: 'daily@7',
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

function pipelineFile(description: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rerun-uiuser-')), 'pipeline.json');
  writeFileSync(file, JSON.stringify(description));
  return file;
}

interface DaysJson {
  stage?: { name: string; kind: string; codeVersion?: string };
  partitions: { day: string; status: string; reason: string; inputs: number }[];
  counts: Record<string, number>;
}

describe("rerun ui on a user's described pipeline (moto)", () => {
  const clients = testClients();
  let inputBucket: string;
  let outputBucket: string;

  const outputKeyOf = (inputKey: string) =>
    deterministicKey({ prefix: 'hourly/', source: { bucket: inputBucket, key: inputKey }, stripPrefix: 'incoming/' });
  /** The input, then its output recording the input's ETag as its source, as the user's worker writes it. */
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

  /** `rerun ui` with these arguments, as the operator runs it; gives its API's answers, then stops it. */
  function withConsole<T>(
    args: string[],
    use: (get: (path: string) => Promise<unknown>) => Promise<T>,
    env?: NodeJS.ProcessEnv,
  ): Promise<T> {
    const defaults = {
      AWS_ENDPOINT_URL: awsEndpoint(),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      RERUN_INPUT_BUCKET: inputBucket,
      RERUN_OUTPUT_BUCKET: outputBucket,
    };
    return withConsoleCli(args, env ?? defaults, (api) => use((path) => api.get(path)));
  }

  beforeAll(async () => {
    inputBucket = await createBucket(clients.s3, uniqueName('uiuser-in'));
    outputBucket = await createBucket(clients.s3, uniqueName('uiuser-out'));
    for (const [day, h, name] of [
      ['03', '08', 'a.json'],
      ['04', '23', 'b.json'],
      ['05', '00', 'c.json'],
      ['05', '13', 'd.json'],
      ['06', '02', 'e.json'],
    ] as const) {
      await writeOutput(hour(day, h, name), `{"hour":"${h}"}\n`);
    }
    // The user's window task builds 12-03..12-05; 12-06 is never built (missing).
    const task = dailyTask(inputBucket, outputBucket);
    const options = { store: new S3ObjectStore(clients.s3), reader: new S3PartitionStore(clients.s3) };
    for (const day of ['2026-12-03', '2026-12-04', '2026-12-05']) {
      expect(await task.run(day, options)).toMatchObject({ status: 'processed' });
    }
    // An upstream output of 12-05 rebuilt after its publish: the day is stale.
    await writeOutput(hour('05', '13', 'd.json'), '{"hour":"13","rebuilt":true}\n');
  });

  it("judges each day by the user's daily window stage, as rerun status --stage does, and names the stage and its code version", async () => {
    const file = pipelineFile(describePipeline(pipeline));
    await withConsole(['--pipeline', file, '--from', '2026-12-03', '--to', '2026-12-06'], async (get) => {
      const overview = (await get('/api/overview')) as Record<string, unknown>;
      expect(overview).toMatchObject({
        codeVersion: 'daily@7',
        stage: { name: 'daily', kind: 'window', from: file },
        window: { from: '2026-12-03', to: '2026-12-06' },
      });
      const days = (await get('/api/days?from=2026-12-03&to=2026-12-06')) as DaysJson;
      expect(days.stage).toEqual({ name: 'daily', kind: 'window', codeVersion: 'daily@7' });
      expect(days.partitions.map((p) => [p.day, p.status, p.inputs])).toEqual([
        ['2026-12-03', 'published', 1],
        ['2026-12-04', 'published', 1],
        ['2026-12-05', 'stale', 2],
        ['2026-12-06', 'missing', 1],
      ]);
      expect(days.partitions.map((p) => p.reason)).toEqual([
        'up to date (1 input)',
        'up to date (1 input)',
        'inputs changed since publish (2 inputs now)',
        'no output published (1 input)',
      ]);
      expect(days.counts).toEqual({ published: 2, missing: 1, stale: 1, invalid: 0, incomplete: 0 });
    });
    // The same days as rerun status --stage daily judges them.
    const status: string[] = [];
    const code = await runCli(
      ['status', '--pipeline', file, '--stage', 'daily', '--from', '2026-12-03', '--to', '2026-12-06', '--json'],
      {
        stdout: (line) => void status.push(line),
        stderr: () => {},
        env: {
          AWS_ENDPOINT_URL: awsEndpoint(),
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          RERUN_INPUT_BUCKET: inputBucket,
          RERUN_OUTPUT_BUCKET: outputBucket,
        },
        isTTY: false,
        signal: new AbortController().signal,
      },
    );
    expect(code).toBe(0);
    const report = JSON.parse(status.join('')) as { windows: { window: string; status: string }[] };
    expect(report.windows.map((w) => [w.window, w.status])).toEqual([
      ['2026-12-03', 'published'],
      ['2026-12-04', 'published'],
      ['2026-12-05', 'stale'],
      ['2026-12-06', 'missing'],
    ]);
  });

  it('--stage naming the daily window stage judges it too', async () => {
    const file = pipelineFile(describePipeline(pipeline));
    await withConsole(
      ['--pipeline', file, '--stage', 'daily', '--from', '2026-12-05', '--to', '2026-12-06'],
      async (get) => {
        expect(await get('/api/overview')).toMatchObject({ codeVersion: 'daily@7', stage: { name: 'daily' } });
        const days = (await get('/api/days?from=2026-12-05&to=2026-12-06')) as DaysJson;
        expect(days.partitions.map((p) => p.status)).toEqual(['stale', 'missing']);
      },
    );
  });

  it('reads the pipeline a running rerun dev --pipeline recorded in its session file, with nothing else given', async () => {
    const state = mkdtempSync(join(tmpdir(), 'rerun-uiuser-state-')); // 0700, the user's own
    // The user's environment: no endpoint, no buckets, no credentials, no --pipeline: all from the session.
    const env: NodeJS.ProcessEnv = { XDG_RUNTIME_DIR: state, PATH: process.env.PATH ?? '' };
    const app = uniqueName('uiuser');
    const endpoint = awsEndpoint();
    const session = publishDevSession(
      {
        appName: app,
        endpoint,
        region: 'us-east-1',
        emulator: 'embedded',
        inputBucket,
        outputBucket,
        queueUrl: `${endpoint}/123456789012/${app}-normalize-queue`,
        dlqUrl: `${endpoint}/123456789012/${app}-normalize-dlq`,
        summaryQueueUrl: `${endpoint}/123456789012/${app}-summarize-queue.fifo`,
        summaryDlqUrl: `${endpoint}/123456789012/${app}-summarize-dlq.fifo`,
        pipeline: describePipeline(pipeline),
        windowStages: {
          daily: {
            queueUrl: `${endpoint}/123456789012/${app}-daily-queue.fifo`,
            dlqUrl: `${endpoint}/123456789012/${app}-daily-dlq.fifo`,
          },
        },
      },
      // This test's own process is the session's: a running process, as rerun dev's is.
      { env, pid: process.pid },
    );
    try {
      await withConsole(
        ['--app-name', app, '--from', '2026-12-03', '--to', '2026-12-06'],
        async (get) => {
          expect(await get('/api/overview')).toMatchObject({
            kind: 'dev',
            codeVersion: 'daily@7',
            stage: { name: 'daily', kind: 'window', from: `the running rerun dev of app ${app}` },
          });
          const days = (await get('/api/days?from=2026-12-03&to=2026-12-06')) as DaysJson;
          expect(days.partitions.map((p) => [p.day, p.status])).toEqual([
            ['2026-12-03', 'published'],
            ['2026-12-04', 'published'],
            ['2026-12-05', 'stale'],
            ['2026-12-06', 'missing'],
          ]);
        },
        env,
      );
    } finally {
      session.close();
    }
  });

  it("with --stack alone, judges the daily window stage of the stack's published PipelineDescription", async () => {
    const stackName = uniqueName('uiuser');
    const outputs = {
      [StackOutput.INPUT_BUCKET]: inputBucket,
      [StackOutput.OUTPUT_BUCKET]: outputBucket,
      [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(describePipeline(pipeline)),
      [StackOutput.PIPELINE_STAGE]: 'hourly',
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
    await withConsole(['--stack', stackName, '--from', '2026-12-05', '--to', '2026-12-06'], async (get) => {
      expect(await get('/api/overview')).toMatchObject({
        kind: 'stack',
        codeVersion: 'daily@7',
        stage: { name: 'daily', kind: 'window', from: `the stack "${stackName}"` },
      });
      const days = (await get('/api/days?from=2026-12-05&to=2026-12-06')) as DaysJson;
      expect(days.partitions.map((p) => [p.day, p.status])).toEqual([
        ['2026-12-05', 'stale'],
        ['2026-12-06', 'missing'],
      ]);
    });
  });

  it('refuses, by name, a --stage not partitioned by time and a pipeline of several daily stages without --stage', async () => {
    const refused = async (args: string[]) => {
      let stderr = '';
      const code = await runCli(['ui', ...args], {
        stdout: () => {},
        stderr: (text) => {
          stderr += text;
        },
        env: {
          AWS_ENDPOINT_URL: awsEndpoint(),
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          RERUN_INPUT_BUCKET: inputBucket,
          RERUN_OUTPUT_BUCKET: outputBucket,
        },
        isTTY: false,
        signal: new AbortController().signal,
      });
      return { code, stderr };
    };
    const daily = pipeline.stages.daily as NonNullable<PipelineDefinition['stages'][string]>;
    // A window stage of any time grain is judged by its windows (consoleWindowStages.test.ts); one of
    // named partitions has no days to show.
    const regions = {
      kind: 'window',
      input: { stage: 'daily' },
      partitions: { kind: 'static', keys: ['eu', 'us'] },
      outputPrefix: 'regions/',
      fileName: 'counts.json',
      codeVersion: 'regions@1',
    } as const;
    const withRegions = pipelineFile(
      describePipeline(definePipeline({ name: 'events', stages: { hourly: hourlyStage, daily, regions } })),
    );
    const wrongKind = await refused(['--pipeline', withRegions, '--stage', 'regions']);
    expect(wrongKind.code).toBe(1);
    expect(wrongKind.stderr).toContain(`"regions" of ${withRegions} has static partitions`);
    const twoDaily = pipelineFile(
      describePipeline(
        definePipeline({
          name: 'events',
          stages: { hourly: hourlyStage, daily, again: { ...daily, outputPrefix: 'again/' } },
        }),
      ),
    );
    const several = await refused(['--pipeline', twoDaily]);
    expect(several.code).toBe(1);
    expect(several.stderr).toContain('has 2 daily window stages (daily, again): pass --stage NAME');
  });

  it("a user pipeline with no window stage shows days by their inputs, never the reference summary's verdict", async () => {
    const file = pipelineFile(
      describePipeline(definePipeline({ name: 'plain', stages: { hourly: hourlyStage } }) as PipelineDefinition),
    );
    await withConsole(['--pipeline', file, '--from', '2026-12-05', '--to', '2026-12-06'], async (get) => {
      const overview = (await get('/api/overview')) as Record<string, unknown>;
      expect(overview).toMatchObject({ stage: { name: 'hourly', kind: 'inputs' } });
      expect(overview.codeVersion).toBeUndefined();
      const days = (await get('/api/days?from=2026-12-05&to=2026-12-06')) as DaysJson;
      expect(days.stage).toEqual({ name: 'hourly', kind: 'inputs' });
      expect(days.partitions.map((p) => p.status)).toEqual(['unjudged', 'unjudged']);
      expect(days.partitions[0]?.reason).toContain('not judged');
      expect(days.counts).toEqual({ unjudged: 2 });
    });
  });
});
