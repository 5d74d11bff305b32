import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { StackOutput } from '../../app/stackOutputs.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline } from '../../src/pipeline/pipelineDescription.js';
import { windowStageOutputKeys } from '../../src/window/windowStageOutputKeys.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { withConsoleCli } from '../support/consoleCli.js';
import { createBucket } from '../support/s3.js';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;
const DAILY = { kind: 'time', grain: 'daily', template: 'year={yyyy}/month={MM}/day={dd}' } as const;

/** The clicks pipeline of test/support/clicksPipeline.ts, as its stack publishes it. */
const pipeline = definePipeline({
  name: 'clicks',
  stages: {
    clean: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'clean/', stripPrefix: 'incoming/', suffix: '.lines' },
      partitions: HOURLY,
      codeVersion: 'clean@1',
    },
    hourly: {
      kind: 'window',
      input: { stage: 'clean' },
      partitions: HOURLY,
      outputPrefix: 'hourly/',
      fileName: 'count.json',
      codeVersion: 'hourly@1',
    },
    daily: {
      kind: 'window',
      input: { stage: 'hourly' },
      partitions: DAILY,
      outputPrefix: 'daily/',
      fileName: 'total.json',
      codeVersion: 'daily@1',
    },
  },
});

interface QueueRow {
  name: string;
  worker?: string;
  stage?: string;
  url: string;
}

describe("rerun ui on a user's stack of an object stage `clean` and hourly and daily window stages (moto)", () => {
  const clients = testClients();
  let inputBucket: string;
  let outputBucket: string;
  let stackName: string;
  const queues: Record<string, string> = {};
  const env = {
    AWS_ENDPOINT_URL: awsEndpoint(),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
  const put = (bucket: string, key: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));

  /** `rerun ui` with these arguments; gives its API's answers, then stops it. */
  function withConsole<T>(args: string[], use: (get: (path: string) => Promise<unknown>) => Promise<T>): Promise<T> {
    return withConsoleCli(args, env, (api) => use((path) => api.get(path)));
  }

  beforeAll(async () => {
    inputBucket = await createBucket(clients.s3, uniqueName('uiclk-in'));
    outputBucket = await createBucket(clients.s3, uniqueName('uiclk-out'));
    const app = uniqueName('uiclk');
    for (const name of ['clean', 'hourly', 'daily']) {
      for (const role of ['queue', 'dlq']) {
        const out = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${app}-${name}-${role}` }));
        queues[`${name}-${role}`] = out.QueueUrl as string;
      }
    }
    // Inputs of March 2025 (long before any run of this test), keyed by hour, never by dt=.
    for (const key of ['year=2025/month=03/day=14/hour=09/a.json', 'year=2025/month=03/day=15/hour=22/b.json']) {
      await put(inputBucket, `incoming/${key}`);
      await put(outputBucket, `clean/${inputBucket}/${key.replace(/\.json$/, '.json.lines')}`);
      const hour = key.slice(0, key.lastIndexOf('/') + 1);
      await put(outputBucket, `hourly/${hour}count.json`);
    }
    // Later keys in no window of the inputs' scheme: a day folder without hours, and a staging copy.
    await put(outputBucket, `clean/${inputBucket}/year=2025/month=04/day=01/notes.txt`);
    await put(outputBucket, 'hourly/_staging/year=2025/month=05/day=01/hour=00/ab12.json');
    await put(outputBucket, 'hourly/year=2025/month=04/day=01/notes.txt');
    const hourly = windowStageOutputKeys('hourly');
    const daily = windowStageOutputKeys('daily');
    const outputs = {
      [StackOutput.INPUT_BUCKET]: inputBucket,
      [StackOutput.OUTPUT_BUCKET]: outputBucket,
      [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(describePipeline(pipeline)),
      [StackOutput.PIPELINE_STAGE]: 'clean',
      [StackOutput.QUEUE_URL]: queues['clean-queue'] as string,
      [StackOutput.DLQ_URL]: queues['clean-dlq'] as string,
      [hourly.queueUrl]: queues['hourly-queue'] as string,
      [hourly.dlqUrl]: queues['hourly-dlq'] as string,
      [daily.queueUrl]: queues['daily-queue'] as string,
      [daily.dlqUrl]: queues['daily-dlq'] as string,
    };
    stackName = uniqueName('Clicks');
    await new CloudFormationClient({ endpoint: awsEndpoint(), region: 'us-east-1' }).send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::SQS::Queue' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
        }),
      }),
    );
  });

  it("labels the object stage's queue and DLQ by the stage, not by rerun's normalize worker", async () => {
    await withConsole(['--stack', stackName, '--stage', 'daily'], async (get) => {
      const live = (await get('/api/live')) as { queues: QueueRow[] };
      expect(live.queues.map((q) => [q.name, q.worker ?? q.stage, q.url])).toEqual([
        ['clean queue', 'normalize', queues['clean-queue']],
        ['clean DLQ', 'normalize', queues['clean-dlq']],
        ['hourly queue', 'hourly', queues['hourly-queue']],
        ['hourly DLQ', 'hourly', queues['hourly-dlq']],
        ['daily queue', 'daily', queues['daily-queue']],
        ['daily DLQ', 'daily', queues['daily-dlq']],
      ]);
      // The worker's DLQ is asked for by the worker (as rerun redrive --queue takes it), headed by the stage.
      expect(await get('/api/dead-letters?queue=normalize')).toMatchObject({
        worker: 'normalize',
        objectStage: 'clean',
        dlqUrl: queues['clean-dlq'],
        command: `rerun redrive --queue clean --stack ${stackName}`,
      });
    });
  });

  it("opens on the latest window with inputs in the stage's own year=/month=/day=/hour= scheme", async () => {
    // The hourly stage reads the object stage's outputs; the daily one the hourly stage's outputs.
    for (const stage of ['hourly', 'daily']) {
      await withConsole(['--stack', stackName, '--stage', stage], async (get) => {
        expect(await get('/api/overview')).toMatchObject({
          stage: { name: stage, kind: 'window' },
          latestInput: { window: '2025-03-15T22', day: '2025-03-15' },
          window: { from: '2025-03-02', to: '2025-03-15' },
        });
      });
    }
  });
});
