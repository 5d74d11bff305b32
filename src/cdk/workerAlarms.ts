import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { WorkerTopology } from '../topology/WorkerTopology.js';
import type { SqsWorkerProps } from './SqsWorkerProps.js';

/** What the alarms watch: the worker construct (their scope), its queues and its function. */
type WatchedWorker = Construct & {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly function: IFunction;
};

/** The worker's alarms: DLQ depth, age of the oldest message, errors, throttles, duration near the timeout. */
export function createWorkerAlarms(worker: WatchedWorker, props: SqsWorkerProps, t: WorkerTopology) {
  const oldestMessageAlarmSeconds = props.oldestMessageAlarmSeconds ?? 2 * t.visibilityTimeoutSeconds;
  const dlqAlarmThreshold = props.dlqAlarmThreshold ?? 1;
  const dlqDepth = new Alarm(worker, 'DlqDepthAlarm', {
    alarmDescription: `rerun ${t.name}: messages in the dead-letter queue. Inspect them, fix the cause, then redrive.`,
    metric: worker.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: Stats.MAXIMUM,
    }),
    threshold: dlqAlarmThreshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const oldestMessageAge = new Alarm(worker, 'OldestMessageAgeAlarm', {
    alarmDescription: `rerun ${t.name}: the oldest message in the work queue is older than ${oldestMessageAlarmSeconds} s (failing retries or a stalled worker).`,
    metric: worker.queue.metricApproximateAgeOfOldestMessage({
      period: Duration.minutes(5),
      statistic: Stats.MAXIMUM,
    }),
    threshold: oldestMessageAlarmSeconds,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  return { dlqDepth, oldestMessageAge, ...createInvocationAlarms(worker, props, t) };
}

/** The alarms on whole invocations: errors, throttles and a duration near the timeout. */
function createInvocationAlarms(worker: WatchedWorker, props: SqsWorkerProps, t: WorkerTopology) {
  // Whole invocations: a timeout or a crash loses the batch's partial response and shows only here
  // (and later as message age); throttles mean the concurrency is too small for the backlog.
  const invocations = { period: Duration.minutes(5), statistic: Stats.SUM };
  const errors = new Alarm(worker, 'ErrorsAlarm', {
    alarmDescription: `rerun ${t.name}: invocations failed as a whole (timeout, crash or full-batch failure). See the function's logs.`,
    metric: worker.function.metricErrors(invocations),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const throttles = new Alarm(worker, 'ThrottlesAlarm', {
    alarmDescription: `rerun ${t.name}: Lambda throttled invocations (reserved or account concurrency exhausted).`,
    metric: worker.function.metricThrottles(invocations),
    threshold: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  const ratio = props.durationAlarmRatio ?? 0.8;
  const durationThresholdMs = Math.round(ratio * t.functionTimeoutSeconds * 1000);
  const duration = new Alarm(worker, 'DurationAlarm', {
    alarmDescription:
      `rerun ${t.name}: an invocation ran ${Math.round(ratio * 100)} % of the ${t.functionTimeoutSeconds} s timeout ` +
      '(a timeout loses the whole batch): raise memory or timeout, or lower the batch size or maxInputBytes.',
    metric: worker.function.metricDuration({ period: Duration.minutes(5), statistic: Stats.MAXIMUM }),
    threshold: durationThresholdMs,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  return { errors, throttles, duration };
}
