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

  it('rerun redrive --stack finds the pipeline from the outputs the construct writes (outputs: true), no summary stage', async () => {
    const run = await rerunOnStack(['redrive', '--dry-run', '--json'], {
      stackName: stack.stackName,
      operator: inject('readmeOperator'),
    });
    expect(run.code, run.stderr).toBe(0);
    const result = run.json<{ dryRun: boolean; inspected: number; queues: { dlqUrl: string }[] }>();
    expect(result).toMatchObject({ dryRun: true, inspected: 0 });
    // Only the stage the stack has: its worker's DLQ, from the DeadLetterQueueUrl output.
    expect(result.queues.map((q) => q.dlqUrl)).toEqual([stack.dlqUrl]);
  });
});
