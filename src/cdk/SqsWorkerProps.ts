import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { ApplicationLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { WorkerTopology } from '../topology/WorkerTopology.js';
import type { WorkerSource } from './workerSource.js';

/**
 * Function settings that may override the construct's (aws-solutions-constructs style escape
 * hatch). `environment` is merged with the construct's variables; `bundling` with its bundling
 * options; everything else replaces the default. `memorySize` and `timeout` replace the topology's
 * (the queue's visibility timeout is checked against the final timeout).
 */
export type WorkerFunctionProps = Omit<NodejsFunctionProps, 'entry' | 'handler' | 'code'>;

/** Props of {@link SqsWorker}. */
export interface SqsWorkerProps {
  /** Timeouts, batch settings, retention and redrive: the same object `rerun dev` runs locally. */
  readonly topology: WorkerTopology;
  /** The worker's code: `{ entry }` (bundled here) or `{ code, handler }`. */
  readonly source: WorkerSource;
  /**
   * Environment variables of the function (LOG_LEVEL is added from `logLevel`).
   * @default {}
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Retention of the function's log group.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Minimum level of the function's application logs (Lambda filters JSON logs by their `level`).
   * @default ApplicationLogLevel.INFO
   */
  readonly logLevel?: ApplicationLogLevel;
  /**
   * X-Ray tracing of the function. Active tracing samples invocations (the first request each
   * second and 5 % of the rest) and costs per trace recorded beyond X-Ray's free tier; the role
   * gets `xray:PutTraceSegments` and `xray:PutTelemetryRecords`. With active or pass-through
   * tracing the function gets RERUN_TRACE_AWS_SDK=true: the reference workers then record each AWS
   * SDK call as a subsegment (`traceAwsClients`).
   * @default Tracing.ACTIVE (as aws-solutions-constructs' Lambda defaults)
   */
  readonly tracing?: Tracing;
  /**
   * The DLQ alarm fires when at least this many messages wait in the DLQ.
   * @default 1 (any dead letter needs an operator: inspect it, fix, then `rerun redrive`)
   */
  readonly dlqAlarmThreshold?: number;
  /**
   * The backlog alarm fires when the oldest message in the work queue is older than this.
   * @default 2 x the queue's visibility timeout: the message has been retried at least twice, or the
   * queue is not being drained
   */
  readonly oldestMessageAlarmSeconds?: number;
  /**
   * Actions of every alarm (for example an SNS topic), on ALARM and, with `notifyOnOk`, on OK.
   * @default no actions: the alarms show in the CloudWatch console only
   */
  readonly alarmActions?: readonly IAlarmAction[];
  /**
   * Run the alarm actions when an alarm returns to OK too, so the people paged learn that the DLQ
   * was drained or the errors stopped.
   * @default true
   */
  readonly notifyOnOk?: boolean;
  /**
   * The duration alarm fires when an invocation's longest run reaches this fraction of the function
   * timeout: the next larger batch or input will time out, and a timeout loses the batch's partial
   * response.
   * @default 0.8
   */
  readonly durationAlarmRatio?: number;
  /**
   * Concurrency reserved for the function (`ReservedConcurrentExecutions`): other functions of the
   * account cannot starve it, and it never runs wider. It must be at least the mapping's
   * MaximumConcurrency (`topology.maxConcurrency`): AWS says not to configure a maximum concurrency
   * above the function's reserved concurrency, or Lambda may throttle the messages (Lambda Developer
   * Guide, "Configuring scaling behavior for SQS event source mappings"); a smaller value fails at synth.
   * @default `topology.maxConcurrency`, unless `reserveConcurrency` is false
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Reserve concurrency for the function. Without a reservation, other functions of the account can
   * use up its concurrency: Lambda then throttles the mapping's invocations, the messages return
   * after the visibility timeout, and each throttle counts as a receive, so a message can reach the
   * DLQ with no failure record. Turn it off only where a reservation cannot be made: Lambda keeps
   * 100 of the account's concurrency unreserved (PutFunctionConcurrency), and an account whose limit
   * is 10 (new accounts) refuses any reservation ("decreases account's UnreservedConcurrentExecution
   * below its minimum value of [10]"). Off, the synth warns (`rerun:concurrencyNotReserved`).
   * @default true
   */
  readonly reserveConcurrency?: boolean;
  /**
   * Overrides of the function's settings (see {@link WorkerFunctionProps}).
   * @default none
   */
  readonly functionProps?: WorkerFunctionProps;
  /**
   * Overrides of the work queue's settings, merged over the construct's (encryption, TLS-only,
   * retention, visibility timeout, RETAIN). `deadLetterQueue` and `fifo` cannot be overridden here:
   * the DLQ comes from `deadLetterQueueProps` and `topology.maxReceiveCount`, FIFO from the topology.
   * @default none
   */
  readonly queueProps?: QueueProps;
  /**
   * Overrides of the DLQ's settings, merged over the construct's (encryption, TLS-only, 14 days, RETAIN).
   * @default none
   */
  readonly deadLetterQueueProps?: QueueProps;
}
