import { Annotations } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic, type TopicProps } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { allowCloudWatchAlarms } from './alarmTopicAccess.js';
import type { RerunPipelineProps } from './RerunPipelineProps.js';

/** The topic the alarms notify: the given one (with a warning about its policy), or one created here. */
export function pipelineAlarmTopic(scope: Construct, props: RerunPipelineProps): ITopic {
  const topic = props.existingAlarmTopicObj ?? createAlarmTopic(scope, props.alarmTopicProps);
  if (props.existingAlarmTopicObj) {
    // Its policy is the owner's: adding a statement could replace SNS's default policy of a topic
    // that has none yet, and with it what other publishers rely on.
    Annotations.of(scope).addWarningV2(
      'rerun:alarmTopicPolicyNotManaged',
      'The alarm topic is not created here: its policy must allow cloudwatch.amazonaws.com to sns:Publish (and ' +
        'its KMS key, if any, to kms:Decrypt and kms:GenerateDataKey*), or alarm notifications are dropped. ' +
        'allowCloudWatchAlarms(topic, key) adds both statements.',
    );
  }
  return topic;
}

/** A topic for the alarms, encrypted with a rotated key of its own, that this account's CloudWatch alarms may publish to. */
function createAlarmTopic(scope: Construct, props: TopicProps | undefined): Topic {
  // CloudWatch can publish to an encrypted topic only with a customer managed key whose policy
  // lets it (the AWS managed aws/sns key does not): a key of its own, rotated yearly.
  const key =
    props?.masterKey ??
    new Key(scope, 'AlarmTopicKey', {
      description: 'rerun: encrypts the alarm topic; CloudWatch alarms of this account may use it',
      enableKeyRotation: true,
    });
  const topic = new Topic(scope, 'AlarmTopic', {
    displayName: 'rerun alarms',
    masterKey: key,
    enforceSSL: true,
    ...props,
  });
  // enforceSSL gives the topic a policy of its own, which replaces SNS's default: without this
  // Allow, nothing may publish and every alarm notification is dropped.
  allowCloudWatchAlarms(topic, key);
  return topic;
}
