import { Annotations, Stack } from 'aws-cdk-lib';
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
 * A queue encrypted with a KMS key (`queue.encryptionMasterKey`) also needs S3 on the key's policy
 * (`kms:GenerateDataKey` and `kms:Decrypt`), or S3 cannot put the event into the queue and refuses
 * the notification configuration (Amazon S3 User Guide, "Walkthrough: Configuring a bucket for
 * notifications (SNS topic or SQS queue)", "AWS KMS key policy"), as CDK's own `SqsDestination`
 * adds. A key imported from elsewhere has no policy this app can change: `bind` then warns.
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
    const key = this.queue.encryptionMasterKey;
    if (key) {
      // S3 puts the event into the queue with its own service identity: the key's policy, not an
      // identity policy, must let it. The queue policy above already limits who may send.
      const added = key.addToResourcePolicy(
        new PolicyStatement({
          principals: [new ServicePrincipal('s3.amazonaws.com')],
          actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
          resources: ['*'],
        }),
        true,
      );
      if (!added.statementAdded) {
        Annotations.of(bucket).addWarningV2(
          'rerun:queueKeyPolicyNotManaged',
          `The work queue's KMS key is not managed by this app: its key policy must allow s3.amazonaws.com ` +
            'kms:GenerateDataKey and kms:Decrypt, or S3 cannot deliver the events (and refuses the notification).',
        );
      }
    }
    // The queue (and so its policy, and its key with the key policy) exists before S3 validates the
    // notification configuration.
    return { arn: this.queue.queueArn, type: BucketNotificationDestinationType.QUEUE, dependencies: [this.queue] };
  }
}
