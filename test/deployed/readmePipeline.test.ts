import { CloudFormationClient, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { readText } from '../support/s3.js';
import { deployedClients, drained, ROOT_KEY, rerunOnStack, waitFor } from './support/deployedStack.js';

/**
 * The README's own pipeline: its "Usage" worker.mjs and its "In your CDK app" call, both taken
 * verbatim from README.md (support/readmeApp.ts) and deployed to MiniStack with IAM enforced. Its
 * worker writes under upper/, which only `outputPrefixes: ['upper/']` lets its role do: before that
 * prop existed, every message of this pipeline met an AccessDenied on AWS.
 */
describe("the README's worker and RerunPipeline call, deployed with IAM enforced", () => {
  const clients = deployedClients();
  const stack = inject('readmeStack');

  it('deploys no ledger table: its worker uses none (RerunPipeline creates one only with `ledger`)', async () => {
    const aws = { endpoint: inject('ministackEndpoint'), region: 'us-east-1', credentials: ROOT_KEY };
    const resources =
      (await new CloudFormationClient(aws).send(new ListStackResourcesCommand({ StackName: stack.stackName })))
        .StackResourceSummaries ?? [];
    expect(resources.filter((r) => r.ResourceType === 'AWS::Lambda::Function').length).toBeGreaterThan(0);
    expect(resources.filter((r) => r.ResourceType === 'AWS::DynamoDB::Table')).toEqual([]);
  });

  it('processes an upload: the output is the upper-cased text at its deterministic key under upper/, with its code version', async () => {
    const key = 'incoming/greeting.txt';
    await clients.s3.send(new PutObjectCommand({ Bucket: stack.inputBucket, Key: key, Body: 'hello, rerun é\n' }));

    const outputKey = deterministicKey({
      prefix: 'upper/',
      source: { bucket: stack.inputBucket, key },
      stripPrefix: 'incoming/',
    });
    await waitFor(`the README worker's output ${outputKey}`, async () => {
      try {
        return await clients.s3.send(new HeadObjectCommand({ Bucket: stack.outputBucket, Key: outputKey }));
      } catch {
        return undefined;
      }
    });
    expect(await readText(clients.s3, stack.outputBucket, outputKey)).toBe('HELLO, RERUN É\n');
    const object = await clients.s3.send(new GetObjectCommand({ Bucket: stack.outputBucket, Key: outputKey }));
    // Built by the stage's code version from pipeline.mjs, recorded with the output (what the done-check reads).
    expect(object.Metadata?.['rerun-code-version']).toBe('upper@1');
    // Its message is consumed (a failure would leave it in flight for the queue's visibility timeout).
    await drained(clients, stack.queueUrl);
  });

  it('the daily window stage: a backfill --wait publishes the day and status shows it published; a new upload makes it stale, and a backfill republishes it', async () => {
    const operator = { stackName: stack.stackName, operator: inject('readmeOperator') };
    const day = '2026-12-01';
    const dailyKey = `daily/dt=${day}/counts.json`;
    /** An upload of the day, through the upper stage: done once its upper/ output is there. */
    const upload = async (name: string, body: string) => {
      const key = `incoming/dt=${day}/${name}`;
      await clients.s3.send(new PutObjectCommand({ Bucket: stack.inputBucket, Key: key, Body: body }));
      const outputKey = deterministicKey({
        prefix: 'upper/',
        source: { bucket: stack.inputBucket, key },
        stripPrefix: 'incoming/',
      });
      await waitFor(`the upper output ${outputKey}`, async () => {
        try {
          return await clients.s3.send(new HeadObjectCommand({ Bucket: stack.outputBucket, Key: outputKey }));
        } catch {
          return undefined;
        }
      });
      await drained(clients, stack.queueUrl);
    };
    const status = async () => {
      const run = await rerunOnStack(['status', '--stage', 'daily', '--from', day, '--to', day, '--json'], operator);
      expect(run.code, run.stderr).toBe(0);
      return run.json<{ windows: { window: string; status: string }[] }>().windows.map((w) => [w.window, w.status]);
    };
    const backfill = async (args: string[]) => {
      const run = await rerunOnStack(
        ['backfill', ...args, '--from', day, '--to', day, '--wait', '--timeout', '90', '--poll-interval', '500'],
        operator,
      );
      expect(run.code, `${run.stdout.join('\n')}\n${run.stderr}`).toBe(0);
      return run;
    };

    await upload('a.txt', 'one\n');
    expect(await status()).toEqual([[day, 'missing']]);
    const first = await backfill(['--stage', 'daily', '--json']);
    const planned = first.json<{
      stages: { stage: string; tasks: { window: string }[]; wait?: { ended: string } }[];
    }>();
    expect(planned.stages.map((s) => [s.stage, s.tasks.map((t) => t.window), s.wait?.ended])).toEqual([
      ['daily', [day], 'complete'],
    ]);
    // Built by the deployed daily.mjs from the day's upper/ outputs (the upper-cased bytes).
    expect(JSON.parse(await readText(clients.s3, stack.outputBucket, dailyKey))).toEqual({ day, files: 1, bytes: 4 });
    expect(await status()).toEqual([[day, 'published']]);

    // A second upload of the day: its upper/ output is newer than the day's publish.
    await upload('b.txt', 'two!\n');
    expect(await status()).toEqual([[day, 'stale']]);
    // Without --stage: the stack's only window stage, said so on stderr.
    const second = await backfill([]);
    expect(second.stderr).toMatch(/the stack "Uploads" has one window stage, daily: backfilling it/);
    expect(JSON.parse(await readText(clients.s3, stack.outputBucket, dailyKey))).toEqual({ day, files: 2, bytes: 9 });
    expect(await status()).toEqual([[day, 'published']]);
  });

  it("rerun redrive --stack finds every stage's DLQ from the published description, named by its stage", async () => {
    const on = { stackName: stack.stackName, operator: inject('readmeOperator') };
    const run = await rerunOnStack(['redrive', '--dry-run', '--json'], on);
    expect(run.code, run.stderr).toBe(0);
    const result = run.json<{ dryRun: boolean; inspected: number; queues: { dlqUrl: string }[] }>();
    expect(result).toMatchObject({ dryRun: true, inspected: 0 });
    // The stages the stack has: upper's DLQ (DeadLetterQueueUrl) and daily's (DailyWindowDeadLetterQueueUrl).
    expect(result.queues.map((q) => q.dlqUrl)).toEqual([stack.dlqUrl, stack.outputs.DailyWindowDeadLetterQueueUrl]);
    const text = await rerunOnStack(['redrive', '--dry-run'], on);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.join('\n')).toContain(`upper DLQ (object stage): ${stack.dlqUrl}`);
    expect(text.stdout.join('\n')).toContain(
      `daily DLQ (window stage): ${stack.outputs.DailyWindowDeadLetterQueueUrl}`,
    );
  });
});
