import { Stack, Token, Validations } from 'aws-cdk-lib';
import type { CfnBucket, IBucket } from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { acknowledgeCheckov, CheckovCheck } from './checkovAcknowledgements.js';

/**
 * cdk-nag (AwsSolutions) findings the constructs accept, each with the reason it is safe. cdk-nag
 * v3 reads acknowledgements from CDK's `Validations.of(construct).acknowledge`, one per finding
 * (`AwsSolutions-IAM5[Resource::...]`), so a new wildcard elsewhere still fails the synth.
 */

/**
 * Acknowledges AwsSolutions-IAM5 for object ARNs `bucket/prefix*` granted to policies under
 * `scope`. Object-level S3 actions can only be scoped to keys by a trailing wildcard: a worker's
 * keys are derived from upload names it cannot know in advance. Works for buckets of this app
 * (`<LogicalId.Arn>`) and for imported buckets with a literal ARN.
 *
 * @example
 * acknowledgePrefixWildcards(worker.role, input.bucket, ['incoming/']);
 */
export function acknowledgePrefixWildcards(scope: IConstruct, bucket: IBucket, prefixes: readonly string[]): void {
  const cfnBucket = bucket.node.defaultChild as CfnBucket | undefined;
  let arn: string;
  if (cfnBucket) arn = `<${Stack.of(bucket).getLogicalId(cfnBucket)}.Arn>`;
  else if (!Token.isUnresolved(bucket.bucketArn)) arn = bucket.bucketArn;
  else return; // An ARN only known at deploy time: cdk-nag reports it in its own form, left to the caller.
  for (const prefix of prefixes) {
    Validations.of(scope).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${arn}/${prefix}*]`,
      reason:
        `Object actions are limited to keys under "${prefix}" of this one bucket; S3 object ARNs can only be scoped ` +
        'to a key prefix with a trailing wildcard, and the keys come from upload names. Every action is named (no action wildcard).',
    });
  }
}

/**
 * Acknowledges the AWS managed policy on the role of CDK's bucket-notifications custom resource
 * handler (a singleton Lambda created by `bucket.addEventNotification`). It runs only during
 * deployments, to call PutBucketNotificationConfiguration on the input bucket (its inline policy
 * names that bucket); the managed policy lets it write its own CloudWatch logs.
 *
 * @example
 * acknowledgeBucketNotificationsHandler(stack); // after addEventNotification
 */
export function acknowledgeBucketNotificationsHandler(stack: Stack): void {
  const handlers = stack.node.children.filter((c) => c.node.id.startsWith('BucketNotificationsHandler'));
  for (const handler of handlers) {
    const fn = handler.node.tryFindChild('Resource');
    if (fn) {
      const why = 'CDK-provided deploy-time custom resource handler, invoked by CloudFormation only: ';
      acknowledgeCheckov(fn, CheckovCheck.LAMBDA_VPC, `${why}it calls the S3 API and nothing inside a VPC.`);
      acknowledgeCheckov(fn, CheckovCheck.LAMBDA_DLQ, `${why}CloudFormation waits for its answer; nothing is queued.`);
      acknowledgeCheckov(fn, CheckovCheck.LAMBDA_CONCURRENCY, `${why}it runs once per deployment.`);
    }
    Validations.of(handler).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason:
        'CDK-provided deploy-time custom resource that applies the input bucket notification (CloudFormation cannot ' +
        'without a circular dependency between the bucket, the queue policy and the queue). AWSLambdaBasicExecutionRole ' +
        'only lets it write its own logs; its inline policy allows s3:PutBucketNotification on the input bucket alone.',
    });
  }
}
