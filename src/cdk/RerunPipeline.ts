import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Bucket, IBucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { batchOperationsManifestPrefix } from '../batch/batchOperationsLayout.js';
import type { LedgerTopology } from '../topology/WorkerTopology.js';
import { WORKER_TOPOLOGY_NAMES } from '../topology/WorkerTopology.js';
import { DEFAULT_CODE_VERSION_PREFIX } from '../worker/codeVersionPrefix.js';
import { BatchOperationsHandler } from './BatchOperationsHandler.js';
import {
  BATCH_OPERATIONS_NAMES,
  checkProps,
  LEDGER_TABLE_PROP_NAMES,
  RERUN_PIPELINE_PROP_NAMES,
  WEBHOOK_SOURCE_NAMES,
} from './checkProps.js';
import { requireConditionalDeletes, requireConditionalWrites } from './conditionalWritePolicy.js';
import { DataBucket } from './DataBucket.js';
import { grantLedgerAccess, LedgerTable } from './LedgerTable.js';
import { acknowledgeBucketNotificationsHandler, acknowledgePrefixWildcards } from './nagAcknowledgements.js';
import { PipelineDashboard } from './PipelineDashboard.js';
import { pipelineAlarmTopic } from './pipelineAlarmTopic.js';
import { type PipelinePlan, planPipeline } from './pipelinePlan.js';
import { addPipelineStackOutputs, refuseAnotherDescription } from './pipelineStackOutputs.js';
import { grantPrefixAccess } from './prefixGrants.js';
import type { RerunPipelineProps } from './RerunPipelineProps.js';
import { SourceAccountSqsDestination } from './SourceAccountSqsDestination.js';
import { SqsWorker } from './SqsWorker.js';
import { webhookUrl } from './webhookSource.js';
import { WORKER_SOURCE_NAMES } from './workerSource.js';

/** The ledger settings the construct's LedgerTable uses unless told otherwise. */
export const DEFAULT_LEDGER_TOPOLOGY: LedgerTopology = { name: 'ledger', partitionKey: 'pk', ttlAttribute: 'ttl' };

/**
 * rerun's pipeline in your own CDK app: an input bucket whose uploads (and deletes) under
 * `inputPrefix` reach an SQS queue; a Lambda worker with partial batch responses, a DLQ and
 * alarms; an output bucket whose policy denies any write without `If-None-Match` / `If-Match`
 * (and any delete without `If-Match`) under the output prefixes; a dedupe ledger for the webhook
 * side effect, when the worker uses one (`ledger`, implied by `webhook`); an SNS topic the alarms notify. Safe defaults are on: encryption, TLS only, no
 * public access, retained data and queues, least-privilege grants scoped to prefixes, generated
 * names, cdk-nag AwsSolutions clean (the few accepted findings are acknowledged here, with reasons).
 *
 * The worker's environment: OUTPUT_BUCKET, FAILURE_PREFIX, INPUT_BUCKETS (the bucket it reads: give it to
 * defineWorker's `inputBuckets` so that an event naming another is refused), LEDGER_TABLE (with a ledger),
 * MAX_INPUT_BYTES, CODE_VERSION_PREFIX (`code-versions/`, where `rerun status` and `rerun reprocess`
 * list when each code version first ran: the worker may create objects there, conditionally, and do
 * nothing else), NOTIFY_URL (with a webhook), LOG_LEVEL, plus `environment`. A worker built with
 * `createSqsBatchHandler({ worker })` takes its clients, failure recorder (in OUTPUT_BUCKET), code-version
 * marker and MAX_INPUT_BYTES from it (src/batch/environmentWiring.ts), so an input too large for one invocation
 * is refused at once with a failure record naming the limit; one wired by hand passes
 * `maxInputBytes: Number(process.env.MAX_INPUT_BYTES)`, as functions/normalize/handler.ts does.
 * MAX_RECEIVE_COUNT (set by SqsWorker: its queue's redrive count) given to S3FailureRecorder's
 * `maxReceiveCount` spares each cold sandbox the GetQueueUrl and GetQueueAttributes it would send
 * before its first item.
 *
 * @example
 * // worker.mjs: export const handler = createSqsBatchHandler({ worker });
 * new RerunPipeline(stack, 'Pipeline', { worker: { entry: 'worker.mjs' }, outputPrefixes: ['upper/'], outputs: true });
 */
export class RerunPipeline extends Construct {
  /** The bucket whose uploads feed the worker. */
  readonly inputBucket: IBucket;
  /** The bucket the worker publishes to. */
  readonly outputBucket: IBucket;
  /** The access-log bucket of the created buckets (undefined when none was created here and none given). */
  readonly accessLogsBucket?: IBucket;
  /** The work queue. */
  readonly queue: Queue;
  /** The dead-letter queue. */
  readonly deadLetterQueue: Queue;
  /** The worker function. */
  readonly workerFunction: SqsWorker['function'];
  /** The worker (queue pair, function, role, log group, mapping, alarms) as one construct. */
  readonly worker: SqsWorker;
  /** The worker function's execution role. */
  readonly workerRole: SqsWorker['role'];
  /** The worker function's log group. */
  readonly logGroup: SqsWorker['logGroup'];
  /** The dedupe ledger (undefined when the worker uses none: see the `ledger` prop). */
  readonly ledgerTable?: ITable;
  /** The topic every alarm notifies. */
  readonly alarmTopic: ITopic;
  /** The alarms: DLQ depth, age of the oldest message, Lambda errors, throttles and duration near the timeout. */
  readonly alarms: readonly Alarm[];
  /** The pipeline's dashboard (undefined with `dashboard: false`). */
  readonly dashboard?: PipelineDashboard;
  /** The largest input the worker accepts, bytes (its MAX_INPUT_BYTES). */
  readonly maxInputBytes: number;
  /** The input prefix. */
  readonly inputPrefix: string;
  /** The output prefixes. */
  readonly outputPrefixes: readonly string[];
  /** The failure-record prefix. */
  readonly failurePrefix: string;
  /** The Batch Operations handler and job role (with the `batchOperations` prop). */
  readonly batchOperations?: BatchOperationsHandler;

  constructor(scope: Construct, id: string, props: RerunPipelineProps) {
    checkProps('RerunPipeline', props, RERUN_PIPELINE_PROP_NAMES, {
      worker: WORKER_SOURCE_NAMES,
      webhook: WEBHOOK_SOURCE_NAMES,
      batchOperations: BATCH_OPERATIONS_NAMES,
      workerSettings: WORKER_TOPOLOGY_NAMES,
      ledgerTableProps: LEDGER_TABLE_PROP_NAMES,
    });
    const plan = planPipeline(props, Stack.of(scope).stackName);
    if (props.outputs && plan.stage) refuseAnotherDescription(Stack.of(scope), plan.stage.json);
    super(scope, id);
    this.inputPrefix = plan.inputPrefix;
    this.outputPrefixes = plan.outputPrefixes;
    this.failurePrefix = plan.failurePrefix;
    this.maxInputBytes = plan.maxInputBytes;

    const buckets = this.createBuckets(props);
    this.accessLogsBucket = buckets.accessLogsBucket;
    this.inputBucket = buckets.inputBucket;
    this.outputBucket = buckets.outputBucket;
    const workerWritten = this.protectOutputs(props, plan, buckets.createdOutput);
    if (plan.ledger) this.ledgerTable = this.createLedger(props);
    this.alarmTopic = pipelineAlarmTopic(this, props);

    this.worker = this.createWorker(props, plan);
    this.queue = this.worker.queue;
    this.deadLetterQueue = this.worker.deadLetterQueue;
    this.workerFunction = this.worker.function;
    this.workerRole = this.worker.role;
    this.logGroup = this.worker.logGroup;
    this.alarms = this.worker.alarms;
    if (props.dashboard ?? true) this.dashboard = new PipelineDashboard(this, 'Dashboard', { workers: [this.worker] });
    this.grantWorker(plan, workerWritten);

    if (props.batchOperations) this.batchOperations = this.createBatchOperations(props, props.batchOperations, plan);
    if (props.outputs) addPipelineStackOutputs(this, plan);

    const destination = new SourceAccountSqsDestination(this.queue);
    for (const event of plan.inputEvents) {
      this.inputBucket.addEventNotification(event, destination, { prefix: plan.inputPrefix });
    }
    acknowledgeBucketNotificationsHandler(Stack.of(this));
  }

  /** The input and output buckets (given or created) and, when one is created here, the access-log bucket. */
  private createBuckets(props: RerunPipelineProps) {
    const createsBucket = !props.existingInputBucketObj || !props.existingOutputBucketObj;
    const accessLogsBucket =
      props.existingAccessLogsBucketObj ??
      (createsBucket ? new DataBucket(this, 'AccessLogs', { expireObjectsAfterDays: 90 }).bucket : undefined);
    const logs = accessLogsBucket ? { accessLogsBucket } : {};
    const inputBucket =
      props.existingInputBucketObj ??
      new DataBucket(this, 'Input', { ...logs, versioned: true, ...props.inputBucketProps }).bucket;
    const createdOutput = props.existingOutputBucketObj
      ? undefined
      : new DataBucket(this, 'Output', { ...logs, ...props.outputBucketProps }).bucket;
    const outputBucket = props.existingOutputBucketObj ?? (createdOutput as IBucket);
    return { accessLogsBucket, inputBucket, outputBucket, createdOutput };
  }

  /**
   * The output bucket's conditional-write and -delete statements (a warning when its policy is not
   * managed here) and, on a bucket created here, the failure records' expiry. Returns the prefixes
   * the worker writes.
   */
  private protectOutputs(props: RerunPipelineProps, plan: PipelinePlan, createdOutput: Bucket | undefined) {
    // No blind overwrite, no blind delete of what the worker owns (and of its failure records).
    // A manifest rerun writes is content-addressed and written create-only: never blindly replaced.
    const workerWritten = [...plan.outputPrefixes, plan.failurePrefix, DEFAULT_CODE_VERSION_PREFIX];
    const written = [...workerWritten, ...(props.batchOperations ? [batchOperationsManifestPrefix()] : [])];
    requireConditionalWrites(this.outputBucket, ...written);
    requireConditionalDeletes(this.outputBucket, ...plan.outputPrefixes);
    if ((this.outputBucket as { policy?: unknown }).policy === undefined) {
      Annotations.of(this).addWarningV2(
        'rerun:conditionalWritesNotEnforced',
        `The output bucket's policy is not managed by this app: add the conditional-write and -delete statements ` +
          `(requireConditionalWrites / requireConditionalDeletes) to it yourself, for ${written.join(', ')}.`,
      );
    }
    createdOutput?.addLifecycleRule({
      id: 'expire-failure-records',
      prefix: plan.failurePrefix,
      expiration: Duration.days(props.failureRecordRetentionDays ?? 30),
    });
    return workerWritten;
  }

  /** The dedupe ledger: the given table, or one created here. */
  private createLedger(props: RerunPipelineProps): ITable {
    const ledger = props.existingLedgerTableObj
      ? undefined
      : new LedgerTable(this, 'Ledger', {
          ledger: props.ledgerTableProps?.ledger ?? DEFAULT_LEDGER_TOPOLOGY,
          ...(props.ledgerTableProps?.removalPolicy ? { removalPolicy: props.ledgerTableProps.removalPolicy } : {}),
          ...(props.ledgerTableProps?.encryptionKey ? { encryptionKey: props.ledgerTableProps.encryptionKey } : {}),
        });
    return props.existingLedgerTableObj ?? (ledger as LedgerTable).table;
  }

  /** The worker (queues, function, alarms) with the pipeline's environment and settings. */
  private createWorker(props: RerunPipelineProps, plan: PipelinePlan): SqsWorker {
    const notifyUrl = props.webhook ? webhookUrl(this, props.webhook) : undefined;
    return new SqsWorker(this, 'Worker', {
      topology: plan.topology,
      source: props.worker,
      environment: {
        OUTPUT_BUCKET: this.outputBucket.bucketName,
        // Where its failure records go (and its grant is): a worker wired from the environment writes there.
        FAILURE_PREFIX: plan.failurePrefix,
        // The only bucket it reads: an event naming another (the output bucket too) is refused by name.
        INPUT_BUCKETS: this.inputBucket.bucketName,
        // Only for a worker that uses the ledger: without it, a DynamoDBLedger refuses to start.
        ...(this.ledgerTable ? { LEDGER_TABLE: this.ledgerTable.tableName } : {}),
        // The worker refuses a larger input at once (src/worker/doneCheck.ts, InputTooLargeError).
        MAX_INPUT_BYTES: String(plan.maxInputBytes),
        // Where it records when its code version first ran (and its grant is): the prefix the tools list.
        CODE_VERSION_PREFIX: DEFAULT_CODE_VERSION_PREFIX,
        ...(notifyUrl ? { NOTIFY_URL: notifyUrl } : {}),
        ...props.environment,
      },
      alarmActions: [new SnsAction(this.alarmTopic)],
      ...(props.tracing !== undefined ? { tracing: props.tracing } : {}),
      ...(props.reservedConcurrentExecutions !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
        : {}),
      ...(props.reserveConcurrency !== undefined ? { reserveConcurrency: props.reserveConcurrency } : {}),
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
      ...(plan.functionProps ? { functionProps: plan.functionProps } : {}),
      ...(props.queueProps ? { queueProps: props.queueProps } : {}),
      ...(props.deadLetterQueueProps ? { deadLetterQueueProps: props.deadLetterQueueProps } : {}),
    });
  }

  /** Grants the worker's function exactly what a rerun worker does, scoped to the prefixes. */
  private grantWorker(plan: PipelinePlan, workerWritten: readonly string[]): void {
    // Exactly what a rerun worker does: read uploads; read (done-check), write (conditional put,
    // multipart) and delete (If-Match: outputs of a deleted input) its outputs; record failures and
    // when its code version first ran.
    const fn = this.workerFunction;
    grantPrefixAccess(fn, this.inputBucket, [plan.inputPrefix], { read: true });
    grantPrefixAccess(fn, this.outputBucket, plan.outputPrefixes, { read: true, write: true, delete: true });
    grantPrefixAccess(fn, this.outputBucket, [plan.failurePrefix], { read: true, write: true, delete: true });
    // Its code-version markers: created once (If-None-Match), never read, listed or deleted by the worker.
    grantPrefixAccess(fn, this.outputBucket, [DEFAULT_CODE_VERSION_PREFIX], { write: true, list: false });
    // With the table's customer managed key, when it has one; no DynamoDB grant without a ledger.
    if (this.ledgerTable) grantLedgerAccess(this.ledgerTable, fn);
    acknowledgePrefixWildcards(this.worker, this.inputBucket, [plan.inputPrefix]);
    acknowledgePrefixWildcards(this.worker, this.outputBucket, workerWritten);
  }

  /** The Batch Operations handler and job role, over the same buckets and prefixes as the worker. */
  private createBatchOperations(
    props: RerunPipelineProps,
    batchOperations: NonNullable<RerunPipelineProps['batchOperations']>,
    plan: PipelinePlan,
  ): BatchOperationsHandler {
    return new BatchOperationsHandler(this, 'BatchOperations', {
      source: batchOperations.handler,
      inputBucket: this.inputBucket,
      inputPrefix: plan.inputPrefix,
      outputBucket: this.outputBucket,
      outputPrefixes: plan.outputPrefixes,
      failurePrefix: plan.failurePrefix,
      memoryMiB: plan.topology.memoryMiB,
      timeoutSeconds: plan.topology.functionTimeoutSeconds,
      environment: { MAX_INPUT_BYTES: String(plan.maxInputBytes), ...props.environment },
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
    });
  }
}
