import { CloudFormationClient, DescribeStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { readText } from '../support/s3.js';
import { deployedClients, drained, ministackEndpoint, ROOT_KEY, waitFor } from './support/deployedStack.js';

/**
 * The README's own pipeline: its "Usage" worker.mjs and its "In your CDK app" call, both taken
 * verbatim from README.md (support/readmeApp.ts) and deployed to MiniStack with IAM enforced. Its
 * worker writes under upper/, which only `outputPrefixes: ['upper/']` lets its role do: before that
 * prop existed, every message of this pipeline met an AccessDenied on AWS.
 */
describe("the README's worker and RerunPipeline call, deployed with IAM enforced", () => {
  const clients = deployedClients();

  /** The physical names of the stack's resources by logical id prefix (RerunPipeline adds no outputs). */
  async function resourcesOf(stackName: string): Promise<(prefix: string, type: string) => string> {
    const cloudformation = new CloudFormationClient({
      endpoint: ministackEndpoint(),
      region: 'us-east-1',
      credentials: ROOT_KEY,
    });
    const resources = (await cloudformation.send(new DescribeStackResourcesCommand({ StackName: stackName })))
      .StackResources;
    return (prefix, type) => {
      const found = (resources ?? []).filter((r) => r.LogicalResourceId?.startsWith(prefix) && r.ResourceType === type);
      if (found.length !== 1) throw new Error(`expected one ${type} ${prefix}* in ${stackName}, found ${found.length}`);
      return found[0]?.PhysicalResourceId ?? '';
    };
  }

  it('processes an upload: the output is the upper-cased text at its deterministic key under upper/, with its summary', async () => {
    const resource = await resourcesOf(inject('readmeStackName'));
    const input = resource('PipelineInputBucket', 'AWS::S3::Bucket');
    const output = resource('PipelineOutputBucket', 'AWS::S3::Bucket');
    const queue = resource('PipelineWorkerQueue', 'AWS::SQS::Queue');
    const key = 'incoming/greeting.txt';
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: 'hello, rerun é\n' }));

    const outputKey = deterministicKey({ prefix: 'upper/', source: { bucket: input, key }, stripPrefix: 'incoming/' });
    await waitFor(`the README worker's output ${outputKey}`, async () => {
      try {
        return await clients.s3.send(new HeadObjectCommand({ Bucket: output, Key: outputKey }));
      } catch {
        return undefined;
      }
    });
    expect(await readText(clients.s3, output, outputKey)).toBe('HELLO, RERUN É\n');
    const object = await clients.s3.send(new GetObjectCommand({ Bucket: output, Key: outputKey }));
    // The transform's summary, stored with the output (15 characters read).
    expect(object.Metadata?.['rerun-x-chars']).toBe('15');
    // Its message is consumed (a failure would leave it in flight for the queue's visibility timeout).
    await drained(clients, queue);
  });
});
