import { CfnOutput, Stack } from 'aws-cdk-lib';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { BatchOperationsHandler } from './BatchOperationsHandler.js';
import { StackConfigurationInvalidError } from './errors.js';
import type { PipelinePlan } from './pipelinePlan.js';
import { PIPELINE_DESCRIPTION_STACK_OUTPUTS } from './publishedPipeline.js';

/**
 * The output keys `outputs: true` writes: those `rerun --stack` reads (StackOutput of
 * app/stackOutputs.ts, repeated so the construct does not load the CLI; a test keeps them equal).
 */
export const PIPELINE_STACK_OUTPUTS = {
  INPUT_BUCKET: 'InputBucketName',
  OUTPUT_BUCKET: 'OutputBucketName',
  QUEUE_URL: 'QueueUrl',
  DLQ_URL: 'DeadLetterQueueUrl',
  ALARM_TOPIC_ARN: 'AlarmTopicArn',
} as const;

/**
 * The output keys `outputs: true` adds with `batchOperations` (read by `rerun reprocess --engine
 * batch-operations --stack NAME`; a test keeps them equal to the CLI's).
 */
export const BATCH_OPERATIONS_STACK_OUTPUTS = {
  FUNCTION_ARN: 'BatchOperationsFunctionArn',
  ROLE_ARN: 'BatchOperationsRoleArn',
} as const;

/** What the outputs name: the pipeline construct's buckets, queues, alarm topic and Batch Operations handler. */
type PublishedPipeline = Construct & {
  readonly inputBucket: IBucket;
  readonly outputBucket: IBucket;
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly alarmTopic: ITopic;
  readonly batchOperations?: BatchOperationsHandler;
};

/** The stack outputs the CLI finds the pipeline by (`outputs: true`). */
export function addPipelineStackOutputs(pipeline: PublishedPipeline, plan: PipelinePlan): void {
  if (pipeline.batchOperations) {
    new CfnOutput(Stack.of(pipeline), BATCH_OPERATIONS_STACK_OUTPUTS.FUNCTION_ARN, {
      value: pipeline.batchOperations.function.functionArn,
      description: 'The function rerun reprocess --engine batch-operations invokes',
    });
    new CfnOutput(Stack.of(pipeline), BATCH_OPERATIONS_STACK_OUTPUTS.ROLE_ARN, {
      value: pipeline.batchOperations.jobRole.roleArn,
      description: 'The role its Batch Operations jobs run with',
    });
  }
  for (const [key, value, description] of [
    [
      PIPELINE_STACK_OUTPUTS.INPUT_BUCKET,
      pipeline.inputBucket.bucketName,
      `Upload files under ${plan.inputPrefix} here`,
    ],
    [
      PIPELINE_STACK_OUTPUTS.OUTPUT_BUCKET,
      pipeline.outputBucket.bucketName,
      `Outputs under ${plan.outputPrefixes.join(', ')}`,
    ],
    [PIPELINE_STACK_OUTPUTS.QUEUE_URL, pipeline.queue.queueUrl, 'Work queue of the worker'],
    [PIPELINE_STACK_OUTPUTS.DLQ_URL, pipeline.deadLetterQueue.queueUrl, 'Dead-letter queue of the worker'],
    [
      PIPELINE_STACK_OUTPUTS.ALARM_TOPIC_ARN,
      pipeline.alarmTopic.topicArn,
      'Every alarm notifies this topic: subscribe to it',
    ],
  ] as const) {
    new CfnOutput(Stack.of(pipeline), key, { value, description });
  }
  if (plan.stage) {
    // A RerunWindowStage with outputs: true created first has published the same description
    // already (another one was refused before this construct joined the tree): either order works.
    const stack = Stack.of(pipeline);
    if (stack.node.tryFindChild(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION) === undefined) {
      new CfnOutput(stack, PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION, {
        value: plan.stage.json,
        description: 'The pipeline as data (rerun-pipeline/pipeline): the key rules rerun --stack plans with',
      });
    }
    new CfnOutput(Stack.of(pipeline), PIPELINE_DESCRIPTION_STACK_OUTPUTS.STAGE, {
      value: plan.stage.stageName,
      description: "The stage of the description this stack's worker runs",
    });
  }
}

/**
 * Refuses a stack whose PipelineDescription output (written by a RerunWindowStage with
 * `outputs: true` created before this construct) is another pipeline than this one's.
 */
export function refuseAnotherDescription(stack: Stack, json: string): void {
  const published = stack.node.tryFindChild(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION) as CfnOutput | undefined;
  if (published !== undefined && published.value !== json) {
    throw new StackConfigurationInvalidError([
      `the stack already publishes another pipeline description (${PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION}): ` +
        'give the RerunPipeline the same pipeline as its RerunWindowStage constructs',
    ]);
  }
}
