import { join } from 'node:path';
import { CfnOutput, CfnParameter, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { EventType } from 'aws-cdk-lib/aws-s3';
import { SqsDestination } from 'aws-cdk-lib/aws-s3-notifications';
import type { Construct } from 'constructs';
import { stagingRoot } from '../src/partition/summaryLayout.js';
import { SCHEDULE_MESSAGE_GROUP, SUMMARIZE_TASK_TYPE } from '../src/partition/summaryTask.js';
import { maxInputBytesFor, NORMALIZE_MIB_PER_CPU_SECOND } from '../src/sizing/sizeWorker.js';
import { topology as defaultTopology, INPUT_EVENTS, type Topology } from '../src/topology.js';
import { DataBucket } from './constructs/DataBucket.js';
import { LedgerTable } from './constructs/LedgerTable.js';
import { SqsWorker } from './constructs/SqsWorker.js';
import { acknowledgeBucketNotificationsHandler, acknowledgePrefixWildcards } from './nagSuppressions.js';
import { projectRoot } from './paths.js';
import { requireConditionalDeletes, requireConditionalWrites } from './policies/conditionalWritePolicy.js';
import { grantPrefixAccess } from './policies/prefixGrants.js';
import { StackOutput } from './stackOutputs.js';

export { StackOutput } from './stackOutputs.js';

/** Props of {@link RerunStack}. */
export interface RerunStackProps extends StackProps {
  /**
   * The pipeline's topology.
   * @default the shared topology of src/topology.ts (what `rerun dev` runs locally)
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
   * Actions of the DLQ and backlog alarms (for example an SNS topic).
   * @default none
   */
  readonly alarmActions?: readonly IAlarmAction[];
}

/**
 * The production pipeline: an input bucket whose `ObjectCreated` events under `incoming/` go to the
 * normalize worker's queue; the worker (SQS -> Lambda with partial batch responses) writes
 * `normalized/` and `quarantine/` objects to an output bucket whose policy denies any write without
 * `If-None-Match` / `If-Match`; a DynamoDB dedupe ledger for the webhook side effect; a second stage,
 * the summarize worker (FIFO queue), fed daily by an EventBridge rule and by `rerun backfill`, that
 * publishes one summary per `dt=` partition under `summaries/`. Every grant
 * names its actions and is scoped to the worker's prefixes; every data store is encrypted, TLS-only
 * and retained on stack delete.
 *
 * The webhook URL is the CloudFormation parameter `NotifyUrl` (empty: no notification):
 * `cdk deploy --parameters NotifyUrl=https://example.com/hook`.
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
  /** The normalize worker (queue, DLQ, function, mapping, alarms). */
  readonly normalize: SqsWorker;
  /** The daily-summary worker (FIFO queue and DLQ, function, mapping, alarms). */
  readonly summarize: SqsWorker;
  /** Sends "summarize yesterday" to the summarize queue every day. */
  readonly summarySchedule: Rule;
  /** The `NotifyUrl` parameter: the webhook the worker notifies (empty: off). */
  readonly notifyUrl: CfnParameter;

  constructor(scope: Construct, id: string, props: RerunStackProps = {}) {
    super(scope, id, {
      description: 'rerun: retry-safe S3 -> SQS -> Lambda pipeline with conditional writes and a dedupe ledger',
      ...props,
    });
    const t = props.topology ?? defaultTopology;
    const ownedPrefixes = [t.outputPrefix, t.quarantinePrefix];
    // Every prefix a worker writes: all of them only through conditional writes.
    const writtenPrefixes = [...ownedPrefixes, t.summaryPrefix, t.failurePrefix, t.codeVersionPrefix];

    this.notifyUrl = new CfnParameter(this, 'NotifyUrl', {
      type: 'String',
      default: '',
      // https only: the notification body describes the user's data and must not travel in clear.
      allowedPattern: '^(https://\\S+)?$',
      constraintDescription: 'must be empty (no webhook) or an https:// URL',
      description:
        'Webhook the normalize worker POSTs to once per published output (Idempotency-Key header). Empty: no notifications.',
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
    requireConditionalWrites(this.output.bucket, writtenPrefixes);
    // No blind delete of an output either: every DeleteObject there names the version it removes.
    requireConditionalDeletes(this.output.bucket, [...ownedPrefixes, t.summaryPrefix]);
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

    this.normalize = new SqsWorker(this, t.normalize.name, {
      topology: t.normalize,
      entry: props.normalizeEntry ?? join(projectRoot, 'functions', 'normalize', 'handler.ts'),
      projectRoot,
      environment: {
        OUTPUT_BUCKET: this.output.bucket.bucketName,
        LEDGER_TABLE: this.ledger.table.tableName,
        NOTIFY_URL: this.notifyUrl.valueAsString,
        CODE_VERSION_PREFIX: t.codeVersionPrefix,
        // The largest input one invocation finishes at this memory and timeout (twice over, at the
        // planned throughput): a larger one is refused at once with a failure record that names
        // the limit, instead of timing out on every receive until the DLQ (src/sizing/sizeWorker.ts).
        MAX_INPUT_BYTES: String(
          maxInputBytesFor({
            memoryMiB: t.normalize.memoryMiB,
            timeoutSeconds: t.normalize.functionTimeoutSeconds,
            mibPerCpuSecond: NORMALIZE_MIB_PER_CPU_SECOND,
          }),
        ),
      },
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
      ...(props.alarmActions ? { alarmActions: props.alarmActions } : {}),
    });

    // Exactly what the worker does: read uploads; read (done-check), write (conditional put,
    // multipart) its outputs; delete (If-Match) a stale quarantine object when a rerun finds no bad
    // rows, and both outputs of a deleted input.
    const fn = this.normalize.function;
    grantPrefixAccess(fn, this.input.bucket, [t.inputPrefix], { read: true });
    grantPrefixAccess(fn, this.output.bucket, ownedPrefixes, { read: true, write: true });
    grantPrefixAccess(fn, this.output.bucket, ownedPrefixes, { delete: true, list: false });
    // Why it gave up on a message (conditional create, or replace by ETag), for `rerun redrive`.
    // Delete: the provisional record of a last attempt that then succeeded, and its index entry
    // (src/redrive/S3FailureRecorder.ts, both with If-Match).
    grantPrefixAccess(fn, this.output.bucket, [t.failurePrefix], { read: true, write: true, delete: true });
    // When a code version first ran (create-only), for reprocess planning by listings.
    grantPrefixAccess(fn, this.output.bucket, [t.codeVersionPrefix], { write: true, list: false });
    this.ledger.grantLedgerAccess(fn);
    acknowledgePrefixWildcards(this.normalize.role, this.input.bucket, [t.inputPrefix]);
    acknowledgePrefixWildcards(this.normalize.role, this.output.bucket, [
      ...ownedPrefixes,
      t.failurePrefix,
      t.codeVersionPrefix,
    ]);

    // The summary stage: one task per daily partition, fed by the schedule and by `rerun backfill`.
    this.summarize = new SqsWorker(this, t.summarize.name, {
      topology: t.summarize,
      entry: props.summarizeEntry ?? join(projectRoot, 'functions', 'summarize', 'handler.ts'),
      projectRoot,
      environment: {
        OUTPUT_BUCKET: this.output.bucket.bucketName,
        // Names the normalized outputs' prefix (normalized/<input bucket>/), and is listed (never
        // read) for each summary's record of which inputs of its day it covers.
        INPUT_BUCKET: this.input.bucket.bucketName,
      },
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
      ...(props.alarmActions ? { alarmActions: props.alarmActions } : {}),
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

    // The daily schedule. An input transformer cannot compute "yesterday", but it can pass the
    // scheduled event's own time: the worker resolves the window from it (never from its own clock),
    // so a message delivered late or redriven a week later still summarizes the right day.
    this.summarySchedule = new Rule(this, 'DailySummarySchedule', {
      description: `rerun: summarize yesterday's partition every day at ${pad(t.summarySchedule.hourUtc)}:${pad(t.summarySchedule.minuteUtc)} UTC`,
      schedule: Schedule.cron({
        minute: String(t.summarySchedule.minuteUtc),
        hour: String(t.summarySchedule.hourUtc),
      }),
      targets: [
        new SqsQueue(this.summarize.queue, {
          message: RuleTargetInput.fromObject({ type: SUMMARIZE_TASK_TYPE, window: 'yesterday', at: EventField.time }),
          // FIFO targets need a group; content-based deduplication (on the queue) drops EventBridge's
          // own retries of the same event.
          messageGroupId: SCHEDULE_MESSAGE_GROUP,
        }),
      ],
    });

    // Uploads build outputs; deletes remove them (conditional deletes, see src/worker/removeOutputs.ts).
    for (const event of INPUT_EVENTS) {
      this.input.bucket.addEventNotification(event as EventType, new SqsDestination(this.normalize.queue), {
        prefix: t.inputPrefix,
      });
    }

    acknowledgeBucketNotificationsHandler(this);

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
      [StackOutput.SUMMARY_SCHEDULE_RULE]: [this.summarySchedule.ruleName, 'Daily schedule of the summary stage'],
    };
    for (const [name, [value, description]] of Object.entries(outputs)) {
      new CfnOutput(this, name, { value, description });
    }
  }
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
