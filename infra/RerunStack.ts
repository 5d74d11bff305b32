import { join } from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import type { Tracing } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { EventType } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { stagingRoot } from '../app/partition/summaryLayout.js';
import { SCHEDULE_WEEKDAYS, SUMMARIZE_TASK_TYPE, scheduleMessageGroup } from '../app/partition/summaryTask.js';
import { referencePipeline } from '../app/referencePipeline.js';
import { StackOutput } from '../app/stackOutputs.js';
import { topology as defaultTopology, INPUT_EVENTS, type Topology } from '../app/topology.js';
import { acknowledgeCheckov, CheckovCheck } from '../src/cdk/checkovAcknowledgements.js';
import { requireConditionalDeletes, requireConditionalWrites } from '../src/cdk/conditionalWritePolicy.js';
import { DataBucket } from '../src/cdk/DataBucket.js';
import { LedgerTable } from '../src/cdk/LedgerTable.js';
import { acknowledgePrefixWildcards } from '../src/cdk/nagAcknowledgements.js';
import { PipelineDashboard } from '../src/cdk/PipelineDashboard.js';
import { grantPrefixAccess } from '../src/cdk/prefixGrants.js';
import { RerunPipeline } from '../src/cdk/RerunPipeline.js';
import { SqsWorker } from '../src/cdk/SqsWorker.js';
import type { RerunWebhookSource } from '../src/cdk/webhookSource.js';
import type { WorkerSource } from '../src/cdk/workerSource.js';
import { describePipeline } from '../src/pipeline/pipelineDescription.js';
import { projectRoot } from './paths.js';

export { StackOutput } from '../app/stackOutputs.js';

/**
 * The stack's webhook: a secret (name or full ARN; `jsonField` when its SecretString is JSON) or
 * an SSM String parameter, resolved by CloudFormation at deploy time (see RerunWebhookSource).
 */
export type RerunStackWebhook =
  | { readonly secret: string; readonly jsonField?: string }
  | { readonly parameterName: string };

/** Props of {@link RerunStack}. */
export interface RerunStackProps extends StackProps {
  /**
   * The pipeline's topology.
   * @default the shared topology of app/topology.ts (what `rerun dev` runs locally)
   */
  readonly topology?: Topology;
  /**
   * The normalize worker's handler module.
   * @default `functions/normalize/handler.ts` under the project root
   */
  readonly normalizeEntry?: string;
  /**
   * The summarize worker's handler module.
   * @default `functions/summarize/handler.ts` under the project root
   */
  readonly summarizeEntry?: string;
  /**
   * Days a failure record (`failures/`, why a worker gave up on a message) is kept: longer than the
   * DLQ's 14-day retention, so every dead letter still has its reason.
   * @default 30
   */
  readonly failureRecordRetentionDays?: number;
  /**
   * Retention of the worker's log group.
   * @default RetentionDays.ONE_MONTH (see SqsWorker)
   */
  readonly logRetention?: RetentionDays;
  /**
   * Days S3 server access logs are kept.
   * @default 90
   */
  readonly accessLogRetentionDays?: number;
  /**
   * The webhook the normalize worker notifies, from Secrets Manager or SSM (see RerunWebhookSource).
   * `buildRerunApp` reads it from the `rerun:webhookSecret` (+ `rerun:webhookSecretField`) or
   * `rerun:webhookParameter` context.
   * @default no webhook
   */
  readonly webhook?: RerunStackWebhook;
  /**
   * The topic every alarm notifies.
   * @default a topic created by the pipeline (encrypted, TLS-only): subscribe to it
   */
  readonly alarmTopic?: ITopic;
  /**
   * X-Ray tracing of both workers.
   * @default Tracing.ACTIVE (see SqsWorker)
   */
  readonly tracing?: Tracing;
  /**
   * Reserve each worker's maximum concurrency for it (see SqsWorkerProps.reserveConcurrency). An
   * account whose concurrency limit is 10 refuses any reservation: deploy there with
   * `-c rerun:reserveConcurrency=false` (read by `buildRerunApp`), and the synth warns.
   * @default true
   */
  readonly reserveConcurrency?: boolean;
}

/**
 * The production pipeline, built from {@link RerunPipeline}: an input bucket whose `ObjectCreated`
 * and `ObjectRemoved` events under `incoming/` go to the normalize worker's queue; the worker (SQS
 * -> Lambda with partial batch responses) writes `normalized/` and `quarantine/` objects to an
 * output bucket whose policy denies any write without `If-None-Match` / `If-Match`; a DynamoDB
 * dedupe ledger for the webhook side effect; an SNS topic every alarm notifies; a second stage,
 * the summarize worker (FIFO queue), fed daily by EventBridge rules (one per weekday, so one
 * message group per day; with a DLQ, a retry policy and an alarm of their own) and by `rerun
 * backfill`, that publishes one summary per `dt=` partition under `summaries/`. Every grant names
 * its actions and is scoped to the worker's prefixes; every data store and queue is encrypted,
 * TLS-only and retained on stack delete; queue names are generated (operators read them from the
 * stack's outputs).
 *
 * The webhook URL comes from Secrets Manager or SSM as a dynamic reference, never a parameter:
 * `cdk deploy -c rerun:webhookSecret=rerun/webhook` (a secret whose SecretString is the URL).
 *
 * @example
 * const app = new App();
 * new RerunStack(app, 'rerun');
 */
export class RerunStack extends Stack {
  /** Receives S3 server access logs of the two data buckets. */
  readonly accessLogs: DataBucket;
  /** Users upload under `incoming/` here. */
  readonly input: DataBucket;
  /** Published outputs (`normalized/`) and quarantined rows (`quarantine/`). */
  readonly output: DataBucket;
  /** The side-effect dedupe ledger. */
  readonly ledger: LedgerTable;
  /** The normalize pipeline (notifications, worker, grants, alarm topic). */
  readonly pipeline: RerunPipeline;
  /** The normalize worker (queue, DLQ, function, mapping, alarms). */
  readonly normalize: SqsWorker;
  /** The daily-summary worker (FIFO queue and DLQ, function, mapping, alarms). */
  readonly summarize: SqsWorker;
  /** Send "summarize yesterday" to the summarize queue, one rule per weekday (Sunday first). */
  readonly summarySchedules: readonly Rule[];
  /** Where EventBridge puts a scheduled message it could not deliver after its retries. */
  readonly scheduleDeadLetterQueue: Queue;
  /** Fires when a scheduled message was dead-lettered. */
  readonly scheduleDlqAlarm: Alarm;
  /** The topic every alarm notifies. */
  readonly alarmTopic: ITopic;
  /** Both stages on one CloudWatch dashboard. */
  readonly dashboard: PipelineDashboard;

  constructor(scope: Construct, id: string, props: RerunStackProps = {}) {
    super(scope, id, {
      description: 'rerun: retry-safe S3 -> SQS -> Lambda pipeline with conditional writes and a dedupe ledger',
      ...props,
    });
    const t = props.topology ?? defaultTopology;
    const ownedPrefixes = [t.outputPrefix, t.quarantinePrefix];
    // Our own repository's lockfile and tsconfig: the reference workers are bundled from this repo.
    const source = (entry: string): WorkerSource => ({
      entry,
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      tsconfig: join(projectRoot, 'tsconfig.json'),
    });

    this.accessLogs = new DataBucket(this, 'AccessLogs', {
      expireObjectsAfterDays: props.accessLogRetentionDays ?? 90,
    });
    const abortIncompleteMultipartUploadAfterDays = t.abortIncompleteMultipartUploadAfterDays;
    this.input = new DataBucket(this, 'Input', {
      accessLogsBucket: this.accessLogs.bucket,
      abortIncompleteMultipartUploadAfterDays,
    });
    this.output = new DataBucket(this, 'Output', {
      accessLogsBucket: this.accessLogs.bucket,
      abortIncompleteMultipartUploadAfterDays,
    });
    // A staging copy lives seconds; one left by a crash is harmless (deterministic key, replaced or
    // removed by the next run) and expires here. Failure records outlive the DLQ's retention.
    this.output.bucket.addLifecycleRule({
      id: 'expire-summary-staging',
      prefix: stagingRoot(t),
      expiration: Duration.days(1),
    });
    this.output.bucket.addLifecycleRule({
      id: 'expire-failure-records',
      prefix: t.failurePrefix,
      expiration: Duration.days(props.failureRecordRetentionDays ?? 30),
    });

    this.ledger = new LedgerTable(this, 'Ledger', { ledger: t.ledger });

    // The normalize stage is the construct users deploy; the stack hands it its buckets and ledger.
    // It adds the notifications (with aws:SourceAccount), the conditional-write and -delete policy
    // on normalized/, quarantine/ and failures/, the grants, MAX_INPUT_BYTES and the alarm topic.
    this.pipeline = new RerunPipeline(this, 'Normalize', {
      worker: source(props.normalizeEntry ?? join(projectRoot, 'functions', 'normalize', 'handler.ts')),
      workerName: t.normalize.name,
      existingInputBucketObj: this.input.bucket,
      existingOutputBucketObj: this.output.bucket,
      existingLedgerTableObj: this.ledger.table,
      ...(props.alarmTopic ? { existingAlarmTopicObj: props.alarmTopic } : {}),
      inputPrefix: t.inputPrefix,
      inputEvents: INPUT_EVENTS as EventType[],
      outputPrefixes: ownedPrefixes,
      failurePrefix: t.failurePrefix,
      workerSettings: t.normalize,
      ...(props.webhook ? { webhook: this.webhookSource(props.webhook) } : {}),
      ...(props.tracing !== undefined ? { tracing: props.tracing } : {}),
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
      ...(props.reserveConcurrency !== undefined ? { reserveConcurrency: props.reserveConcurrency } : {}),
      // The stack's dashboard shows both stages (below).
      dashboard: false,
    });
    this.normalize = this.pipeline.worker;
    this.alarmTopic = this.pipeline.alarmTopic;
    const alarmActions = [new SnsAction(this.alarmTopic)];
    // Every prefix a worker writes: all of them only through conditional writes (the pipeline's
    // statement, which holds the code-version markers' prefix, grows by the summary stage's).
    requireConditionalWrites(this.output.bucket, t.summaryPrefix);
    // No blind delete of an output either: every DeleteObject there names the version it removes.
    requireConditionalDeletes(this.output.bucket, t.summaryPrefix);

    // The summary stage: one task per daily partition, fed by the schedule and by `rerun backfill`.
    this.summarize = new SqsWorker(this, t.summarize.name, {
      topology: t.summarize,
      source: source(props.summarizeEntry ?? join(projectRoot, 'functions', 'summarize', 'handler.ts')),
      environment: {
        OUTPUT_BUCKET: this.output.bucket.bucketName,
        // Names the normalized outputs' prefix (normalized/<input bucket>/), and is listed (never
        // read) for each summary's record of which inputs of its day it covers.
        INPUT_BUCKET: this.input.bucket.bucketName,
      },
      alarmActions,
      ...(props.tracing !== undefined ? { tracing: props.tracing } : {}),
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
      ...(props.reserveConcurrency !== undefined ? { reserveConcurrency: props.reserveConcurrency } : {}),
    });
    // Exactly what a partition task does: list and read its lineage (normalized/, quarantine/);
    // list the day's inputs (the input bucket's inputPrefix, list only) and failure index; read,
    // write and delete summaries, staging copies and manifest markers (summaries/); record
    // failures. It cannot write normalized/ or quarantine/, nor read or write the input bucket.
    const summarizeFn = this.summarize.function;
    grantPrefixAccess(summarizeFn, this.input.bucket, [t.inputPrefix], { list: true });
    grantPrefixAccess(summarizeFn, this.output.bucket, ownedPrefixes, { read: true });
    grantPrefixAccess(summarizeFn, this.output.bucket, [t.summaryPrefix], { read: true, write: true, delete: true });
    grantPrefixAccess(summarizeFn, this.output.bucket, [t.failurePrefix], { read: true, write: true, delete: true });
    acknowledgePrefixWildcards(this.summarize.role, this.output.bucket, [
      ...ownedPrefixes,
      t.summaryPrefix,
      t.failurePrefix,
    ]);

    // Where EventBridge puts a scheduled message it could not deliver (the summarize queue gone,
    // its policy broken, throttling for hours): a standard queue (EventBridge DLQs cannot be FIFO).
    this.scheduleDeadLetterQueue = new Queue(this, 'ScheduleDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledgeCheckov(
      this.scheduleDeadLetterQueue,
      CheckovCheck.SQS_KMS,
      'Encrypted at rest with SSE-SQS (SqsManagedSseEnabled): EventBridge delivers to it without a key policy.',
    );
    Validations.of(this.scheduleDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself a dead-letter queue: the DeadLetterConfig of the daily schedule targets (EventBridge), ' +
        'which cdk-nag does not recognise as it only follows SQS redrive policies. A DLQ of a DLQ would only move the problem.',
    });
    this.scheduleDlqAlarm = new Alarm(this, 'ScheduleDlqAlarm', {
      alarmDescription:
        'rerun summarize: EventBridge could not deliver a daily schedule message (it is in the schedule DLQ). ' +
        'Fix the cause, then run rerun backfill for the missing day.',
      metric: this.scheduleDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: Stats.MAXIMUM,
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.scheduleDlqAlarm.addAlarmAction(...alarmActions);
    this.scheduleDlqAlarm.addOkAction(...alarmActions);

    // The daily schedule, one rule per weekday: an EventBridge target's MessageGroupId is a fixed
    // string, and one group per day keeps a failing day from holding back the next ones (see
    // scheduleMessageGroup). An input transformer cannot compute "yesterday", but it can pass the
    // scheduled event's own time: the worker resolves the window from it (never from its own
    // clock), so a message delivered late or redriven a week later still summarizes the right day.
    const time = `${pad(t.summarySchedule.hourUtc)}:${pad(t.summarySchedule.minuteUtc)} UTC`;
    this.summarySchedules = SCHEDULE_WEEKDAYS.map(
      (weekDay) =>
        new Rule(this, `DailySummarySchedule${weekDay}`, {
          description: `rerun: summarize yesterday's partition every ${weekDay} at ${time}`,
          schedule: Schedule.cron({
            minute: String(t.summarySchedule.minuteUtc),
            hour: String(t.summarySchedule.hourUtc),
            weekDay,
          }),
          targets: [
            new SqsQueue(this.summarize.queue, {
              message: RuleTargetInput.fromObject({
                type: SUMMARIZE_TASK_TYPE,
                window: 'yesterday',
                at: EventField.time,
              }),
              // FIFO targets need a group; content-based deduplication (on the queue) drops
              // EventBridge's own retries of the same event.
              messageGroupId: scheduleMessageGroup(weekDay),
              // Retries with backoff for up to 12 hours (the day's summary is still useful), then
              // the schedule's DLQ, whose alarm tells the operator to backfill the day.
              retryAttempts: 50,
              maxEventAge: Duration.hours(12),
              deadLetterQueue: this.scheduleDeadLetterQueue,
            }),
          ],
        }),
    );

    this.dashboard = new PipelineDashboard(this, 'Dashboard', { workers: [this.normalize, this.summarize] });

    const outputs: Record<StackOutput, [string, string]> = {
      [StackOutput.INPUT_BUCKET]: [this.input.bucket.bucketName, `Upload files under ${t.inputPrefix} here`],
      [StackOutput.OUTPUT_BUCKET]: [
        this.output.bucket.bucketName,
        `Normalized outputs (${t.outputPrefix}) and quarantined rows (${t.quarantinePrefix})`,
      ],
      [StackOutput.QUEUE_URL]: [this.normalize.queue.queueUrl, 'Work queue of the normalize worker'],
      [StackOutput.DLQ_URL]: [this.normalize.deadLetterQueue.queueUrl, 'Dead-letter queue of the normalize worker'],
      [StackOutput.LEDGER_TABLE]: [this.ledger.table.tableName, 'Side-effect dedupe ledger'],
      [StackOutput.FUNCTION_NAME]: [this.normalize.function.functionName, 'Normalize worker function'],
      [StackOutput.LOG_GROUP]: [this.normalize.logGroup.logGroupName, 'Normalize worker logs (JSON)'],
      [StackOutput.SUMMARY_QUEUE_URL]: [this.summarize.queue.queueUrl, 'Work queue of the summarize worker (FIFO)'],
      [StackOutput.SUMMARY_DLQ_URL]: [
        this.summarize.deadLetterQueue.queueUrl,
        'Dead-letter queue of the summarize worker (FIFO)',
      ],
      [StackOutput.SUMMARIZE_FUNCTION_NAME]: [this.summarize.function.functionName, 'Summarize worker function'],
      [StackOutput.SUMMARIZE_LOG_GROUP]: [this.summarize.logGroup.logGroupName, 'Summarize worker logs (JSON)'],
      [StackOutput.SUMMARY_SCHEDULE_RULES]: [
        Stack.of(this).toJsonString(this.summarySchedules.map((r) => r.ruleName)),
        'Daily schedule rules of the summary stage (JSON array, one per weekday, Sunday first)',
      ],
      [StackOutput.SCHEDULE_DLQ_URL]: [
        this.scheduleDeadLetterQueue.queueUrl,
        'Dead letters of the daily schedule (EventBridge could not deliver them)',
      ],
      [StackOutput.ALARM_TOPIC_ARN]: [this.alarmTopic.topicArn, 'Every alarm notifies this topic: subscribe to it'],
      [StackOutput.PIPELINE_DESCRIPTION]: [
        JSON.stringify(describePipeline(referencePipeline(t))),
        'The pipeline as data (rerun-pipeline/pipeline): the key rules rerun --stack plans with',
      ],
      [StackOutput.PIPELINE_STAGE]: [t.normalize.name, "The stage of the description the stack's queue feeds"],
    };
    for (const [name, [value, description]] of Object.entries(outputs)) {
      new CfnOutput(this, name, { value, description });
    }
  }

  private webhookSource(webhook: RerunStackWebhook): RerunWebhookSource {
    if (!('secret' in webhook)) return webhook;
    const secret = webhook.secret.startsWith('arn:')
      ? Secret.fromSecretCompleteArn(this, 'WebhookSecret', webhook.secret)
      : Secret.fromSecretNameV2(this, 'WebhookSecret', webhook.secret);
    return { secret, ...(webhook.jsonField ? { jsonField: webhook.jsonField } : {}) };
  }
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
