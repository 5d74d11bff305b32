import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { StackOutput } from '../../app/stackOutputs.js';
import { ensureQueue } from '../../local/provision.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline } from '../../src/pipeline/pipelineDescription.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';
import { rerunCli } from '../support/summaryPipeline.js';

const DAILY = { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' } as const;
const WEEKLY = { kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' } as const;
const upper = {
  kind: 'object',
  input: { prefix: 'incoming/' },
  outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
  codeVersion: 'upper@1',
} as const;
const daily = {
  kind: 'window',
  input: { stage: 'upper' },
  partitions: DAILY,
  outputPrefix: 'daily/',
  fileName: 'counts.json',
  codeVersion: 'daily@1',
} as const;
const weekly = {
  kind: 'window',
  input: { stage: 'daily' },
  partitions: WEEKLY,
  outputPrefix: 'weekly/',
  fileName: 'counts.json',
  codeVersion: 'weekly@1',
} as const;

/**
 * The rerun tools on a user's stack (RerunPipeline and RerunWindowStage with `outputs: true`), read
 * from the stack's outputs alone: a CloudFormation stack on the emulator whose outputs are what the
 * constructs write (the pipeline description, the buckets, the queues of each stage).
 */
describe("rerun backfill and redrive on a user's stack, from its published description (moto)", () => {
  const clients = testClients();
  let inputBucket: string;
  let outputBucket: string;

  /** A stack whose outputs are the buckets, the description of `stages` and `extra`. */
  async function userStack(stages: Record<string, unknown>, extra: Record<string, string> = {}): Promise<string> {
    const pipeline = definePipeline({ name: 'uploads', stages } as Parameters<typeof definePipeline>[0]);
    const outputs: Record<string, string> = {
      [StackOutput.INPUT_BUCKET]: inputBucket,
      [StackOutput.OUTPUT_BUCKET]: outputBucket,
      [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(describePipeline(pipeline)),
      [StackOutput.PIPELINE_STAGE]: 'upper',
      ...extra,
    };
    const stackName = uniqueName('Uploads');
    await new CloudFormationClient({ endpoint: awsEndpoint(), region: 'us-east-1' }).send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::SQS::Queue' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
        }),
      }),
    );
    return stackName;
  }

  /** A work queue and its DLQ (FIFO for a window stage, as RerunWindowStage deploys them). */
  async function queuePair(name: string, fifo: boolean) {
    const suffix = fifo ? '.fifo' : '';
    const attributes = fifo ? { FifoQueue: 'true' } : {};
    const dlq = await ensureQueue(clients, `${name}-dlq${suffix}`, attributes);
    const queue = await ensureQueue(clients, `${name}${suffix}`, {
      ...attributes,
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 3 }),
    });
    return { queue, dlq };
  }

  beforeAll(async () => {
    inputBucket = await createBucket(clients.s3, uniqueName('userstack-in'));
    outputBucket = await createBucket(clients.s3, uniqueName('userstack-out'));
  });

  describe('rerun backfill --stack without --stage', () => {
    const window = ['--from', '2026-12-01', '--to', '2026-12-02', '--dry-run'];

    it("backfills the stack's only window stage, and says so", async () => {
      const { queue } = await queuePair(uniqueName('us-daily'), true);
      const stackName = await userStack({ upper, daily }, { DailyWindowQueueUrl: queue.url });
      const run = await rerunCli(['backfill', '--stack', stackName, ...window], {});
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(
        `note: the stack "${stackName}" has one window stage, daily: backfilling it (--stage daily says so explicitly).`,
      );
      // The daily stage's windows, judged from the listings (no upper/ output yet: both missing).
      expect(run.text).toMatch(/^Stage daily, windows 2026-12-01\.\.2026-12-02: 2 partitions: 0 published, 2 missing/);
      const summary = JSON.parse((run.stdout.at(-1) as string).replace(/^SUMMARY /, ''));
      expect(summary).toMatchObject({ stage: 'daily', planned: 2, enqueued: 0, dryRun: true });
    });

    it('refuses a stack with several window stages, naming them and --stage', async () => {
      const stackName = await userStack({ upper, daily, weekly });
      const run = await rerunCli(['backfill', '--stack', stackName, ...window], {});
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `The stack "${stackName}" has 2 window stages (daily, weekly): pass --stage NAME with the one to backfill`,
      );
    });

    it('refuses a stack with no window stage, saying so', async () => {
      const stackName = await userStack({ upper });
      const run = await rerunCli(['backfill', '--stack', stackName, ...window], {});
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `The stack "${stackName}" has no window stage (its stages: upper): a backfill reruns the windows of a window ` +
          `stage. Rerun an object stage's inputs with rerun reprocess --stack ${stackName} --stage upper.`,
      );
    });
  });

  describe('rerun redrive --stack', () => {
    it("finds every stage's DLQ from the description, names each by its stage, and moves a window stage's letters back to its queue", async () => {
      const name = uniqueName('us-rd');
      const object = await queuePair(`${name}-upper`, false);
      const window = await queuePair(`${name}-daily`, true);
      const stackName = await userStack(
        { upper, daily },
        {
          [StackOutput.QUEUE_URL]: object.queue.url,
          [StackOutput.DLQ_URL]: object.dlq.url,
          DailyWindowQueueUrl: window.queue.url,
          DailyWindowDeadLetterQueueUrl: window.dlq.url,
        },
      );
      await clients.sqs.send(new SendMessageCommand({ QueueUrl: object.dlq.url, MessageBody: '{"Records":[]}' }));
      await clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: window.dlq.url,
          MessageBody: '{"type":"rerun.window","version":1,"stage":"daily","window":"2026-12-01"}',
          MessageGroupId: 'daily/2026-12-01',
          MessageDeduplicationId: 'daily/2026-12-01',
        }),
      );

      const dry = await rerunCli(['redrive', '--stack', stackName, '--dry-run'], {});
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.text).toContain(`upper DLQ (object stage): ${object.dlq.url}`);
      expect(dry.text).toContain(`daily DLQ (window stage): ${window.dlq.url}`);
      const summary = JSON.parse((dry.stdout.at(-1) as string).replace(/^SUMMARY /, ''));
      expect(summary).toMatchObject({ dryRun: true, inspected: 2, moved: 0, queues: 2 });

      // --queue takes a stage's name: the day goes back to the daily stage's own queue.
      const moved = await rerunCli(['redrive', '--stack', stackName, '--queue', 'daily', '--json'], {});
      expect(moved.code, moved.stderr).toBe(0);
      const result = moved.json<{ moved: number; queues: { dlqUrl: string; sourceQueueUrl?: string }[] }>();
      expect(result.moved).toBe(1);
      expect(result.queues.map((q) => [q.dlqUrl, q.sourceQueueUrl])).toEqual([[window.dlq.url, window.queue.url]]);
      const back = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: window.queue.url, WaitTimeSeconds: 1 }),
      );
      expect(back.Messages?.map((m) => JSON.parse(m.Body as string).window)).toEqual(['2026-12-01']);
    });

    it('names a stage whose DLQ the stack has no output for, and refuses --queue with a stage that is not there', async () => {
      const object = await queuePair(uniqueName('us-nodlq'), false);
      const stackName = await userStack(
        { upper, daily },
        { [StackOutput.QUEUE_URL]: object.queue.url, [StackOutput.DLQ_URL]: object.dlq.url },
      );
      const run = await rerunCli(['redrive', '--stack', stackName, '--dry-run'], {});
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(
        `note: the stack "${stackName}" has no output for the DLQ of stage daily (DailyWindowDeadLetterQueueUrl): not looked at.`,
      );
      expect(run.text).toContain(`upper DLQ (object stage): ${object.dlq.url}`);
      const unknown = await rerunCli(['redrive', '--stack', stackName, '--queue', 'hourly', '--dry-run'], {});
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(
        `--queue "hourly" is neither a stage of the stack "${stackName}" (upper, daily)`,
      );
    });
  });
});
