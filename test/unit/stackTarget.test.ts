import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { describe, expect, it } from 'vitest';
import { PipelineResourceError } from '../../app/common/pipelineResources.js';
import { resolvePipelineTarget, workerQueueUrl } from '../../app/common/pipelineTarget.js';
import { resolveStackResources } from '../../app/common/stackTarget.js';
import { StackOutput } from '../../app/stackOutputs.js';

const OUTPUTS: Record<string, string> = {
  [StackOutput.INPUT_BUCKET]: 'rerun-inputbucket-abc',
  [StackOutput.OUTPUT_BUCKET]: 'rerun-outputbucket-def',
  [StackOutput.QUEUE_URL]: 'https://sqs.us-east-1.amazonaws.com/123456789012/rerun-normalize-queue',
  [StackOutput.DLQ_URL]: 'https://sqs.us-east-1.amazonaws.com/123456789012/rerun-normalize-dlq',
  [StackOutput.SUMMARY_QUEUE_URL]: 'https://sqs.us-east-1.amazonaws.com/123456789012/rerun-summarize-queue.fifo',
  [StackOutput.SUMMARY_DLQ_URL]: 'https://sqs.us-east-1.amazonaws.com/123456789012/rerun-summarize-dlq.fifo',
  [StackOutput.FUNCTION_NAME]: 'rerun-normalizeFunction-xyz',
};

/** A CloudFormation client that answers DescribeStacks from a table and records what it was asked. */
function fakeCloudFormation(answer: (stackName: string) => unknown) {
  const asked: unknown[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: { StackName?: string } }) => {
      asked.push({ operation: command.constructor.name, ...command.input });
      return answer(command.input.StackName ?? '');
    },
  } as unknown as Pick<CloudFormationClient, 'send'>;
  return { client, asked };
}

const described = (outputs: Record<string, string>, status = 'CREATE_COMPLETE') => ({
  Stacks: [
    {
      StackName: 'rerun',
      StackStatus: status,
      Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
    },
  ],
});

describe('--stack NAME: a deployed stack resolved from its CloudFormation outputs', () => {
  it('reads the buckets and the four queues from one DescribeStacks of that stack', async () => {
    const cfn = fakeCloudFormation(() => described(OUTPUTS));
    const stack = await resolveStackResources(cfn.client, 'rerun', 'AWS (us-east-1)');
    expect(cfn.asked).toEqual([{ operation: 'DescribeStacksCommand', StackName: 'rerun' }]);
    expect(stack).toMatchObject({
      stackName: 'rerun',
      inputBucket: 'rerun-inputbucket-abc',
      outputBucket: 'rerun-outputbucket-def',
      queueUrl: OUTPUTS[StackOutput.QUEUE_URL],
      dlqUrl: OUTPUTS[StackOutput.DLQ_URL],
      summaryQueueUrl: OUTPUTS[StackOutput.SUMMARY_QUEUE_URL],
      summaryDlqUrl: OUTPUTS[StackOutput.SUMMARY_DLQ_URL],
    });
    expect(stack.outputs[StackOutput.FUNCTION_NAME]).toBe('rerun-normalizeFunction-xyz');
  });

  it('says the stack does not exist, with the name and where it looked, when CloudFormation says so', async () => {
    const cfn = fakeCloudFormation(() => {
      throw Object.assign(new Error('Stack with id rerun-staging does not exist'), { name: 'ValidationError' });
    });
    const failure = resolveStackResources(cfn.client, 'rerun-staging', 'AWS (eu-west-1)');
    await expect(failure).rejects.toBeInstanceOf(PipelineResourceError);
    await expect(failure).rejects.toThrow(/stack "rerun-staging" does not exist at AWS \(eu-west-1\).*AWS_REGION/);
  });

  it('names the missing bucket outputs of a stack that is not (or not yet) a rerun stack', async () => {
    const { [StackOutput.OUTPUT_BUCKET]: _gone, ...partial } = OUTPUTS;
    const cfn = fakeCloudFormation(() => described(partial, 'CREATE_IN_PROGRESS'));
    await expect(resolveStackResources(cfn.client, 'rerun', 'here')).rejects.toThrow(
      /status CREATE_IN_PROGRESS\) has no output OutputBucketName/,
    );
  });

  it('asks only for what a command uses: a RerunPipeline stack (buckets and its queue pair, no summary stage) resolves', async () => {
    const pipelineOnly = {
      [StackOutput.INPUT_BUCKET]: 'uploads-input',
      [StackOutput.OUTPUT_BUCKET]: 'uploads-output',
      [StackOutput.QUEUE_URL]: OUTPUTS[StackOutput.QUEUE_URL] as string,
      [StackOutput.DLQ_URL]: OUTPUTS[StackOutput.DLQ_URL] as string,
    };
    const stack = await resolveStackResources(
      fakeCloudFormation(() => described(pipelineOnly)).client,
      'Uploads',
      'here',
    );
    expect(stack).toMatchObject({ inputBucket: 'uploads-input', queueUrl: pipelineOnly[StackOutput.QUEUE_URL] });
    // A command that reads the summary queue is told which output is missing and what to do.
    expect(() => stack.summaryQueueUrl).toThrow(PipelineResourceError);
    expect(() => stack.summaryDlqUrl).toThrow(
      /The stack "Uploads" at here has no output SummaryDeadLetterQueueUrl, so the summary worker's dead-letter queue cannot be found from it\. A RerunPipeline stack .*outputs: true/,
    );
    // A copy or JSON of the resources leaves the missing ones out instead of throwing.
    expect(Object.keys(JSON.parse(JSON.stringify(stack))).sort()).toEqual([
      'dlqUrl',
      'inputBucket',
      'outputBucket',
      'outputs',
      'queueUrl',
      'stackName',
    ]);
  });

  it('a stack with buckets only resolves too (status reads no queue)', async () => {
    const bucketsOnly = { [StackOutput.INPUT_BUCKET]: 'in', [StackOutput.OUTPUT_BUCKET]: 'out' };
    const stack = await resolveStackResources(fakeCloudFormation(() => described(bucketsOnly)).client, 'b', 'here');
    expect(stack.outputBucket).toBe('out');
    expect(() => stack.queueUrl).toThrow(/has no output QueueUrl/);
  });

  it('explains an access denial as the missing cloudformation:DescribeStacks permission', async () => {
    const cfn = fakeCloudFormation(() => {
      throw Object.assign(new Error('not authorized'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    });
    await expect(resolveStackResources(cfn.client, 'rerun', 'here')).rejects.toThrow(/cloudformation:DescribeStacks/);
  });

  it('gives the target its buckets and queues, ahead of RERUN_* variables; options still win', async () => {
    const cfn = fakeCloudFormation(() => described(OUTPUTS));
    const env = { RERUN_INPUT_BUCKET: 'from-env-in', RERUN_OUTPUT_BUCKET: 'from-env-out', AWS_REGION: 'us-east-1' };
    const target = await resolvePipelineTarget({ stack: 'rerun' }, env, { cloudformation: cfn.client });
    expect(target).toMatchObject({
      appName: 'rerun',
      inputBucket: 'rerun-inputbucket-abc',
      outputBucket: 'rerun-outputbucket-def',
    });
    const overridden = await resolvePipelineTarget({ stack: 'rerun', 'output-bucket': 'mine' }, env, {
      cloudformation: cfn.client,
    });
    expect(overridden.outputBucket).toBe('mine');
    // The queue URLs come from the outputs: requireQueueUrl accepts a URL and checks it with
    // GetQueueAttributes, which this fake SQS answers for exactly the URL it is given.
    const seen: string[] = [];
    const sqs = {
      send: async (command: { input: { QueueUrl?: string } }) => {
        seen.push(command.input.QueueUrl ?? '');
        return { Attributes: { QueueArn: 'arn:aws:sqs:us-east-1:123456789012:q' } };
      },
    };
    const withSqs = { ...target, clients: { ...target.clients, sqs: sqs as never } };
    expect(await workerQueueUrl(withSqs, target.topology.summarize, 'dlq', undefined, env)).toBe(
      OUTPUTS[StackOutput.SUMMARY_DLQ_URL],
    );
    expect(await workerQueueUrl(withSqs, target.topology.normalize, 'queue', undefined, env)).toBe(
      OUTPUTS[StackOutput.QUEUE_URL],
    );
    expect(seen).toEqual([OUTPUTS[StackOutput.SUMMARY_DLQ_URL], OUTPUTS[StackOutput.QUEUE_URL]]);
  });

  it('asks nothing of CloudFormation without --stack', async () => {
    const cfn = fakeCloudFormation(() => {
      throw new Error('must not be called');
    });
    const target = await resolvePipelineTarget({}, { RERUN_OUTPUT_BUCKET: 'out' }, { cloudformation: cfn.client });
    expect(target.outputBucket).toBe('out');
    expect(cfn.asked).toEqual([]);
  });
});
