import { Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  type BucketNotificationDestinationConfig,
  BucketNotificationDestinationType,
  type IBucket,
  type IBucketNotificationDestination,
} from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * An S3 event notification destination like CDK's `SqsDestination`, whose queue-policy statement
 * also names the bucket's account (`aws:SourceAccount`), as AWS advises against the confused
 * deputy: `aws:SourceArn` alone matches a bucket name, and bucket names are global, so a bucket of
 * that name in another account (after this one is deleted) could otherwise send to the queue.
 * Source: Amazon S3 User Guide, "Granting permissions to publish event notification messages to a
 * destination" (both `aws:SourceArn` and `aws:SourceAccount`).
 *
 * For queues encrypted with SSE-SQS (no KMS key policy to extend); a queue with a customer
 * managed key needs S3 on its key policy as well.
 *
 * @example
 * bucket.addEventNotification(EventType.OBJECT_CREATED, new SourceAccountSqsDestination(queue), { prefix: 'incoming/' });
 */
export class SourceAccountSqsDestination implements IBucketNotificationDestination {
  constructor(private readonly queue: IQueue) {}

  bind(_scope: Construct, bucket: IBucket): BucketNotificationDestinationConfig {
    this.queue.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('s3.amazonaws.com')],
        actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
        resources: [this.queue.queueArn],
        conditions: {
          ArnLike: { 'aws:SourceArn': bucket.bucketArn },
          StringEquals: { 'aws:SourceAccount': Stack.of(bucket).account },
        },
      }),
    );
    // The queue (and so its policy) exists before S3 validates the notification configuration.
    return { arn: this.queue.queueArn, type: BucketNotificationDestinationType.QUEUE, dependencies: [this.queue] };
  }
}
