import { Aws, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ITopic } from 'aws-cdk-lib/aws-sns';

/** The service principal of CloudWatch alarm actions. */
const CLOUDWATCH = 'cloudwatch.amazonaws.com';

/**
 * The conditions that tie CloudWatch's use of the topic (and its key) to the alarms of this stack's
 * account and region: `aws:SourceAccount` and `aws:SourceArn` (an alarm ARN), which CloudWatch sets
 * when it publishes an alarm notification. Without them any account's alarm could use the grant
 * (the confused deputy).
 *
 * @example
 * cloudWatchAlarmConditions(topic); // { ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:<region>:<account>:alarm:*' }, ... }
 */
export function cloudWatchAlarmConditions(scope: ITopic | IKey): Record<string, Record<string, string>> {
  const stack = Stack.of(scope);
  return {
    ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
    StringEquals: { 'aws:SourceAccount': stack.account },
  };
}

/**
 * Lets CloudWatch alarms of this account and region publish to `topic`, and (for a topic encrypted
 * with a customer managed key) use `key` for it.
 *
 * Why it is needed: a topic's `AWS::SNS::TopicPolicy` replaces SNS's default policy. A topic
 * created with `enforceSSL` gets one that holds only the TLS Deny, so nothing allows CloudWatch to
 * publish and every alarm notification is dropped, without an error anywhere (Amazon SNS Developer
 * Guide, "Amazon SNS access policy"; Amazon CloudWatch User Guide, "Using Amazon SNS topics with
 * alarms"). An encrypted topic also needs `kms:GenerateDataKey*` and `kms:Decrypt` for CloudWatch
 * on its key (Amazon SNS Developer Guide, "Key management": "Enable compatibility between event
 * sources from AWS services and encrypted topics"). Both grants carry the conditions of
 * {@link cloudWatchAlarmConditions}.
 *
 * Returns whether the topic policy statement was added: a topic imported by ARN has no policy this
 * app can change.
 *
 * @example
 * const topic = new Topic(this, 'Alarms', { masterKey: key, enforceSSL: true });
 * allowCloudWatchAlarms(topic, key);
 */
export function allowCloudWatchAlarms(topic: ITopic, key?: IKey): boolean {
  const conditions = cloudWatchAlarmConditions(topic);
  const added = topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowCloudWatchAlarmsToPublish',
      principals: [new ServicePrincipal(CLOUDWATCH)],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions,
    }),
  ).statementAdded;
  key?.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowCloudWatchAlarmsToUseTheKey',
      principals: [new ServicePrincipal(CLOUDWATCH)],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      // In a key policy "*" is the key itself.
      resources: ['*'],
      conditions,
    }),
  );
  return added;
}
