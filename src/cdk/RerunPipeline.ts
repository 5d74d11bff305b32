import { Annotations, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Tracing } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type Bucket, EventType, type IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { type ITopic, Topic, type TopicProps } from 'aws-cdk-lib/aws-sns';
import type { Queue, QueueProps } from 'aws-cdk-lib/aws-sqs';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';
import { batchOperationsManifestPrefix } from '../batch/batchOperationsLayout.js';
import { DEFAULT_FAILURE_PREFIX } from '../failures/failureRecord.js';
import { InputFormat } from '../normalize/inputFormat.js';
import type { CustomKeyRule, DeterministicKeyRule } from '../pipeline/keyRule.js';
import type { PipelineDefinition, PipelineDescription } from '../pipeline/pipelineDescription.js';
import { maxInputBytesFor, planningMibPerCpuSecond, sizeWorker } from '../sizing/sizeWorker.js';
import type { LedgerTopology, WorkerTopology } from '../topology/WorkerTopology.js';
import { WORKER_TOPOLOGY_NAMES } from '../topology/WorkerTopology.js';
import { allowCloudWatchAlarms } from './alarmTopicAccess.js';
import { BatchOperationsHandler } from './BatchOperationsHandler.js';
import { BATCH_OPERATIONS_NAMES, checkProps, RERUN_PIPELINE_PROP_NAMES, WEBHOOK_SOURCE_NAMES } from './checkProps.js';
import { requireConditionalDeletes, requireConditionalWrites } from './conditionalWritePolicy.js';
import { DataBucket, type DataBucketProps } from './DataBucket.js';
import { StackConfigurationInvalidError } from './errors.js';
import { grantLedgerAccess, LedgerTable, type LedgerTableProps } from './LedgerTable.js';
import { acknowledgeBucketNotificationsHandler, acknowledgePrefixWildcards } from './nagAcknowledgements.js';
import { PipelineDashboard } from './PipelineDashboard.js';
import { grantPrefixAccess } from './prefixGrants.js';
import {
  PIPELINE_DESCRIPTION_STACK_OUTPUTS,
  type PipelineProps,
  type PlannedStage,
  planStage,
} from './publishedPipeline.js';
import { SourceAccountSqsDestination } from './SourceAccountSqsDestination.js';
import { SqsWorker } from './SqsWorker.js';
import type { WorkerFunctionProps } from './SqsWorkerProps.js';
import { sqsWorkerViolations } from './sqsWorkerViolations.js';
import { WORKER_SOURCE_NAMES, type WorkerSource } from './workerSource.js';

/**
 * Where the webhook URL comes from. It never sits in the template as text nor in a CloudFormation
 * parameter: CloudFormation resolves a dynamic reference (`{{resolve:secretsmanager:...}}` or
 * `{{resolve:ssm:...}}`) at deploy time into the function's `NOTIFY_URL` variable.
 *
 * Why a dynamic reference and not a read at run time: the worker then needs no Secrets Manager
 * or SSM client in its bundle (cold start and memory, issue 15), no extra IAM permission and no
 * network call (or VPC endpoint) on its hot path, and works with every worker that reads
 * NOTIFY_URL. What it costs: the resolved URL is stored in the function's configuration
 * (encrypted at rest by Lambda, readable with lambda:GetFunctionConfiguration), and a changed
 * secret reaches the function at the next deploy that updates it.
 * SSM: a `String` parameter (CloudFormation does not resolve `SecureString` into Lambda variables).
 */
export type RerunWebhookSource =
  | {
      /** The secret holding the URL. */
      readonly secret: ISecret;
      /**
       * The JSON key of the URL inside the secret.
       * @default the whole SecretString is the URL
       */
      readonly jsonField?: string;
    }
  | {
      /** Name of an SSM `String` parameter holding the URL (`/rerun/webhook-url`). */
      readonly parameterName: string;
    };

/** Props of {@link RerunPipeline}. Each `existingXObj` excludes its `xProps`. */
export interface RerunPipelineProps {
  /**
   * The worker: `{ entry }`, your handler module (TypeScript or JavaScript), bundled here by
   * esbuild (NodejsFunction) with the AWS SDK inside and your project's lockfile; or
   * `{ code, handler }`, a prebuilt bundle that carries its own SDK.
   */
  readonly worker: WorkerSource;
  /**
   * Logical name of the worker, in resource descriptions and alarm texts.
   * @default 'worker'
   */
  readonly workerName?: string;

  /**
   * An existing bucket whose uploads feed the worker (its notifications are added here). Versioned
   * or not: in a bucket that is not versioned, S3 may send one event for two writes made at the same
   * time, so the worker trusts no event's eTag there and a duplicate delivery costs 2 requests, not 1.
   * @default a new DataBucket (encrypted, private, TLS-only, retained, access-logged, versioned)
   */
  readonly existingInputBucketObj?: IBucket;
  /**
   * Settings of the created input bucket.
   * @default DataBucket defaults, versioned (replaced versions deleted after 1 day), with access logs
   *   to the created access-log bucket
   */
  readonly inputBucketProps?: DataBucketProps;
  /**
   * Uploads under this prefix trigger the worker.
   * @default 'incoming/'
   */
  readonly inputPrefix?: string;
  /**
   * The input bucket events the worker receives under `inputPrefix`.
   * @default [EventType.OBJECT_CREATED, EventType.OBJECT_REMOVED] (deletes remove the outputs)
   */
  readonly inputEvents?: readonly EventType[];

  /**
   * An existing bucket for the outputs. Its policy gets the conditional-write and -delete
   * statements only if the bucket belongs to this app (an imported bucket's policy is not ours).
   * @default a new DataBucket
   */
  readonly existingOutputBucketObj?: IBucket;
  /**
   * Settings of the created output bucket.
   * @default DataBucket defaults, with access logs to the created access-log bucket
   */
  readonly outputBucketProps?: DataBucketProps;
  /**
   * The prefixes the worker writes its outputs under (main and side outputs): it may read, write
   * (conditionally only) and delete (If-Match only) there, and nowhere else. Give the list your
   * worker declares in `defineWorker({ outputPrefixes })`: a key outside the granted prefixes is
   * an AccessDenied on every message. Required unless the worker source declares them
   * (`referenceWorker('normalize')`: `normalized/` and `quarantine/`).
   * @default the worker source's `outputPrefixes`
   */
  readonly outputPrefixes?: readonly string[];
  /**
   * Where the worker records why it gave up on a message (`rerun redrive` reads them).
   * @default 'failures/'
   */
  readonly failurePrefix?: string;
  /**
   * Days a failure record is kept (a lifecycle rule on a created output bucket): longer than the
   * DLQ's 14 days, so every dead letter still has its reason.
   * @default 30
   */
  readonly failureRecordRetentionDays?: number;
  /**
   * Receives the server access logs of the created buckets (AwsSolutions-S1).
   * @default a new DataBucket whose objects expire after 90 days, when a bucket is created here
   */
  readonly existingAccessLogsBucketObj?: IBucket;

  /**
   * The webhook the worker notifies once per output (NOTIFY_URL, through the ledger).
   * @default no webhook (NOTIFY_URL is not set)
   */
  readonly webhook?: RerunWebhookSource;
  /**
   * Whether the worker uses the dedupe ledger (a `DynamoDBLedger`, as `notifyAfterOutput` does):
   * then the construct creates the ledger table (or takes `existingLedgerTableObj`), sets
   * LEDGER_TABLE and grants the worker PutItem and UpdateItem on it (with its KMS key). Without it
   * there is no table, no LEDGER_TABLE and no DynamoDB grant, and a worker that builds a
   * `DynamoDBLedger` anyway refuses to start (LedgerConfigurationError naming this prop) instead of
   * running its side effects without their dedupe. `false` with any of the props that imply it is
   * refused.
   * @default true when `webhook` (the reference normalizer notifies through the ledger),
   *   `existingLedgerTableObj` or `ledgerTableProps` is given; false otherwise
   */
  readonly ledger?: boolean;
  /**
   * An existing ledger table (partition key and TTL attribute as in `ledgerTableProps.ledger`).
   * Implies `ledger: true`.
   * @default a new LedgerTable, with `ledger: true`
   */
  readonly existingLedgerTableObj?: ITable;
  /**
   * Settings of the created ledger. Implies `ledger: true`.
   * @default { ledger: { name: 'ledger', partitionKey: 'pk', ttlAttribute: 'ttl' } }, retained
   */
  readonly ledgerTableProps?: Partial<LedgerTableProps>;

  /**
   * An existing topic for the alarms' actions.
   * @default a new topic, encrypted with a KMS key of its own (rotated; CloudWatch may use it), TLS-only
   *   and with a policy that lets this account's CloudWatch alarms publish (`aws:SourceAccount`,
   *   `aws:SourceArn`). A topic of yours needs the same statements: see `allowCloudWatchAlarms`.
   */
  readonly existingAlarmTopicObj?: ITopic;
  /**
   * Settings of the created alarm topic, merged over the defaults.
   * @default none
   */
  readonly alarmTopicProps?: TopicProps;

  /**
   * The largest input one invocation must finish, bytes. Memory and timeout are derived from it
   * (src/sizing/sizeWorker.ts: `mibPerCpuSecond` with a margin of 2) unless `functionProps` sets
   * them; the worker refuses a larger input at once with a failure record that names the limit
   * (MAX_INPUT_BYTES), instead of timing out on every receive until the DLQ.
   * @default 1 GiB (512 MB and 213 s at 35 MiB/s per vCPU)
   */
  readonly maxInputBytes?: number;
  /**
   * The worker's measured throughput, MiB of input per CPU second, for the sizing.
   * @default 35 (the reference normalizer's planning figure, NORMALIZE_MIB_PER_CPU_SECOND: measure yours),
   *   or the slowest figure of `inputFormats` when they are declared
   */
  readonly mibPerCpuSecond?: number;
  /**
   * The input formats the reference normalizer reads here (`'csv'`, `'ndjson'`). The sizing then
   * plans with the slowest declared format's measured figure (NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT:
   * csv 35, ndjson 38 MiB per CPU second) instead of the slowest of all, so an NDJSON-only pipeline
   * accepts larger inputs (MAX_INPUT_BYTES) at the same memory and timeout. For a worker of your own,
   * give `mibPerCpuSecond` instead (not both).
   * @default every format (csv's 35)
   */
  readonly inputFormats?: readonly InputFormat[];
  /**
   * The least memory the worker gets, whatever the input, MB.
   * @default 512
   */
  readonly minMemoryMiB?: number;
  /**
   * Batch and queue settings of the worker. Memory, timeout and visibility timeout default to the
   * sizing (visibility: 6 x the timeout); given here, they replace it.
   * @default batch 10, window 1 s, concurrency 4, 5 receives, queue 4 days, DLQ 14 days
   */
  readonly workerSettings?: Partial<WorkerTopology>;
  /**
   * X-Ray tracing of the worker function.
   * @default Tracing.ACTIVE
   */
  readonly tracing?: Tracing;
  /**
   * Concurrency reserved for the worker function, at least `workerSettings.maxConcurrency` (the
   * mapping's MaximumConcurrency; a smaller value fails at synth). See SqsWorkerProps.
   * @default `workerSettings.maxConcurrency` (4), unless `reserveConcurrency` is false
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Reserve concurrency for the worker, so other functions of the account cannot starve it (their
   * throttles would count as receives and send messages to the DLQ without a failure record). Turn it
   * off only in an account whose concurrency limit refuses any reservation (a limit of 10, as new
   * accounts have): the synth then warns (`rerun:concurrencyNotReserved`). docs/DEPLOY.md, "Concurrency".
   * @default true
   */
  readonly reserveConcurrency?: boolean;
  /**
   * Write the stack outputs `rerun --stack` reads, with their exact keys at the stack's top level:
   * InputBucketName, OutputBucketName, QueueUrl, DeadLetterQueueUrl, and AlarmTopicArn. With them
   * `rerun redrive --stack NAME` finds the pipeline, and `rerun reprocess --stack NAME` one that runs
   * `referenceWorker('normalize')` (one such pipeline per stack: the keys are the stack's).
   * @default false
   */
  readonly outputs?: boolean;
  /**
   * The pipeline this construct runs a stage of (definePipeline of rerun-pipeline/pipeline): the
   * stage's input prefix and key rules come from it, and are checked at synth (a
   * PipelineDescriptionError names the field). With `outputs: true` the stack publishes it as the
   * output PipelineDescription (and PipelineStage), which `rerun reprocess|status|ui --stack` read:
   * the tools then plan with the worker's own key rule. A worker of `referenceWorker('normalize')`
   * publishes its own without this prop.
   * @default none: the tools refuse to plan a stack that publishes no key rule
   */
  readonly pipeline?: PipelineDefinition | PipelineDescription;
  /**
   * The stage of `pipeline` the worker runs.
   * @default the pipeline's only object stage over a prefix of the input bucket
   */
  readonly stage?: string;
  /**
   * The worker's key rule alone, when there is no `pipeline`: `{ prefix, stripPrefix?, suffix? }`
   * (defineWorker's `outputKey` as data). Published as a one-stage description named `workerName`.
   * @default none
   */
  readonly outputKey?: DeterministicKeyRule | CustomKeyRule;
  /**
   * A CloudWatch dashboard of the pipeline (PipelineDashboard): queue depth and age, DLQ depth,
   * record outcomes and quarantined entries (from the worker's `emfOutcomeMetrics`, whose `Worker`
   * dimension is its defineWorker name: give that as `workerName`), duration, errors and throttles.
   * A dashboard costs a monthly fee beyond the account's free ones.
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * Adds an S3 Batch Operations handler function and a least-privilege job role
   * (BatchOperationsHandler), so `rerun reprocess --engine batch-operations` can run a reprocess as
   * one job. `handler` is your module built with `createBatchOperationsHandler` over the same worker
   * (bundled like the worker), or ready-made code. It gets the worker's memory, timeout and
   * MAX_INPUT_BYTES; with `outputs: true` the stack also writes BatchOperationsFunctionArn and
   * BatchOperationsRoleArn, which `rerun reprocess --stack NAME` reads.
   * @default none
   */
  readonly batchOperations?: { readonly handler: WorkerSource };
  /**
   * Retention of the worker's log group.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Extra environment variables of the worker (merged over the construct's).
   * @default {}
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Overrides of the function's settings (aws-solutions-constructs' `lambdaFunctionProps`).
   * @default none
   */
  readonly functionProps?: WorkerFunctionProps;
  /**
   * Overrides of the work queue's settings.
   * @default none
   */
  readonly queueProps?: QueueProps;
  /**
   * Overrides of the DLQ's settings.
   * @default none
   */
  readonly deadLetterQueueProps?: QueueProps;
}

/** The input prefix unless `inputPrefix` says otherwise (the reference normalizer's). */
export const PIPELINE_DEFAULT_PREFIXES = { inputPrefix: 'incoming/' } as const;

/**
 * The output keys `outputs: true` writes: those `rerun --stack` reads (StackOutput of
 * app/stackOutputs.ts, repeated so the construct does not load the CLI; a test keeps them equal).
 */
export const PIPELINE_STACK_OUTPUTS = {
  INPUT_BUCKET: 'InputBucketName',
  OUTPUT_BUCKET: 'OutputBucketName',
  QUEUE_URL: 'QueueUrl',
  DLQ_URL: 'DeadLetterQueueUrl',
  ALARM_TOPIC_ARN: 'AlarmTopicArn',
} as const;

/**
 * The output keys `outputs: true` adds with `batchOperations` (read by `rerun reprocess --engine
 * batch-operations --stack NAME`; a test keeps them equal to the CLI's).
 */
export const BATCH_OPERATIONS_STACK_OUTPUTS = {
  FUNCTION_ARN: 'BatchOperationsFunctionArn',
  ROLE_ARN: 'BatchOperationsRoleArn',
} as const;

/** The ledger settings the construct's LedgerTable uses unless told otherwise. */
export const DEFAULT_LEDGER_TOPOLOGY: LedgerTopology = { name: 'ledger', partitionKey: 'pk', ttlAttribute: 'ttl' };

/** The worker settings besides memory, timeout and visibility (which come from the sizing). */
const DEFAULT_SETTINGS = {
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  maxConcurrency: 4,
  maxReceiveCount: 5,
  dlqRetentionDays: 14,
  queueRetentionDays: 4,
} as const;

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
 * MAX_INPUT_BYTES, NOTIFY_URL (with a webhook), LOG_LEVEL, plus `environment`. A worker built with
 * `createSqsBatchHandler({ worker })` takes its clients, failure recorder (in OUTPUT_BUCKET) and
 * MAX_INPUT_BYTES from it (src/batch/environmentWiring.ts), so an input too large for one invocation
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
    this.alarmTopic = this.createAlarmTopic(props);

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
    if (props.outputs) this.addStackOutputs(plan);

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
    const workerWritten = [...plan.outputPrefixes, plan.failurePrefix];
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

  /** The topic the alarms notify: the given one (with a warning about its policy), or one created here. */
  private createAlarmTopic(props: RerunPipelineProps): ITopic {
    const topic = props.existingAlarmTopicObj ?? createAlarmTopic(this, props.alarmTopicProps);
    if (props.existingAlarmTopicObj) {
      // Its policy is the owner's: adding a statement could replace SNS's default policy of a topic
      // that has none yet, and with it what other publishers rely on.
      Annotations.of(this).addWarningV2(
        'rerun:alarmTopicPolicyNotManaged',
        'The alarm topic is not created here: its policy must allow cloudwatch.amazonaws.com to sns:Publish (and ' +
          'its KMS key, if any, to kms:Decrypt and kms:GenerateDataKey*), or alarm notifications are dropped. ' +
          'allowCloudWatchAlarms(topic, key) adds both statements.',
      );
    }
    return topic;
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
        // The worker refuses a larger input at once (src/worker/processObject.ts, InputTooLargeError).
        MAX_INPUT_BYTES: String(plan.maxInputBytes),
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
    // multipart) and delete (If-Match: outputs of a deleted input) its outputs; record failures.
    const fn = this.workerFunction;
    grantPrefixAccess(fn, this.inputBucket, [plan.inputPrefix], { read: true });
    grantPrefixAccess(fn, this.outputBucket, plan.outputPrefixes, { read: true, write: true, delete: true });
    grantPrefixAccess(fn, this.outputBucket, [plan.failurePrefix], { read: true, write: true, delete: true });
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

  /** The stack outputs the CLI finds the pipeline by (`outputs: true`). */
  private addStackOutputs(plan: PipelinePlan): void {
    if (this.batchOperations) {
      new CfnOutput(Stack.of(this), BATCH_OPERATIONS_STACK_OUTPUTS.FUNCTION_ARN, {
        value: this.batchOperations.function.functionArn,
        description: 'The function rerun reprocess --engine batch-operations invokes',
      });
      new CfnOutput(Stack.of(this), BATCH_OPERATIONS_STACK_OUTPUTS.ROLE_ARN, {
        value: this.batchOperations.jobRole.roleArn,
        description: 'The role its Batch Operations jobs run with',
      });
    }
    for (const [key, value, description] of [
      [PIPELINE_STACK_OUTPUTS.INPUT_BUCKET, this.inputBucket.bucketName, `Upload files under ${plan.inputPrefix} here`],
      [
        PIPELINE_STACK_OUTPUTS.OUTPUT_BUCKET,
        this.outputBucket.bucketName,
        `Outputs under ${plan.outputPrefixes.join(', ')}`,
      ],
      [PIPELINE_STACK_OUTPUTS.QUEUE_URL, this.queue.queueUrl, 'Work queue of the worker'],
      [PIPELINE_STACK_OUTPUTS.DLQ_URL, this.deadLetterQueue.queueUrl, 'Dead-letter queue of the worker'],
      [
        PIPELINE_STACK_OUTPUTS.ALARM_TOPIC_ARN,
        this.alarmTopic.topicArn,
        'Every alarm notifies this topic: subscribe to it',
      ],
    ] as const) {
      new CfnOutput(Stack.of(this), key, { value, description });
    }
    if (plan.stage) {
      // A RerunWindowStage with outputs: true created first has published the same description
      // already (another one was refused before this construct joined the tree): either order works.
      const stack = Stack.of(this);
      if (stack.node.tryFindChild(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION) === undefined) {
        new CfnOutput(stack, PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION, {
          value: plan.stage.json,
          description: 'The pipeline as data (rerun-pipeline/pipeline): the key rules rerun --stack plans with',
        });
      }
      new CfnOutput(Stack.of(this), PIPELINE_DESCRIPTION_STACK_OUTPUTS.STAGE, {
        value: plan.stage.stageName,
        description: "The stage of the description this stack's worker runs",
      });
    }
  }
}

/**
 * Refuses a stack whose PipelineDescription output (written by a RerunWindowStage with
 * `outputs: true` created before this construct) is another pipeline than this one's.
 */
function refuseAnotherDescription(stack: Stack, json: string): void {
  const published = stack.node.tryFindChild(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION) as CfnOutput | undefined;
  if (published !== undefined && published.value !== json) {
    throw new StackConfigurationInvalidError([
      `the stack already publishes another pipeline description (${PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION}): ` +
        'give the RerunPipeline the same pipeline as its RerunWindowStage constructs',
    ]);
  }
}

/** What {@link planPipeline} decides. */
type PipelinePlan = ReturnType<typeof planPipeline>;

/** Everything the props decide, checked before the construct joins the tree (nothing left behind on error). */
function planPipeline(props: RerunPipelineProps, stackName: string) {
  const v: string[] = [];
  const exclusive = [
    ['existingInputBucketObj', 'inputBucketProps'],
    ['existingOutputBucketObj', 'outputBucketProps'],
    ['existingLedgerTableObj', 'ledgerTableProps'],
    ['existingAlarmTopicObj', 'alarmTopicProps'],
  ] as const;
  for (const [existing, created] of exclusive) {
    if (props[existing] !== undefined && props[created] !== undefined) {
      v.push(
        `${existing} and ${created} contradict each other: pass an existing resource or props to create one, not both`,
      );
    }
  }
  const ledger = planLedger(props, v);
  const webhook = props.webhook as { secret?: unknown; parameterName?: unknown } | undefined;
  if (webhook && (webhook.secret !== undefined) === (webhook.parameterName !== undefined)) {
    v.push('webhook: give either secret or parameterName');
  }
  if (props.environment && 'NOTIFY_URL' in props.environment) {
    v.push(
      'environment.NOTIFY_URL: the webhook URL comes from Secrets Manager or SSM (props.webhook), never a plain value',
    );
  }
  const declaredStage = (props.worker as { stage?: PipelineProps['declaredStage'] } | undefined)?.stage;
  const stage = planStage({ ...props, ...(declaredStage ? { declaredStage } : {}) }, stackName, v);
  const { inputPrefix, outputPrefixes, failurePrefix } = planPrefixes(props, stage, v);
  const { fp, s, memoryMiB, timeoutSeconds, finishes } = planSizing(props, v);
  if (v.length > 0) throw new StackConfigurationInvalidError(v);

  const timeout = timeoutSeconds as number;
  const topology: WorkerTopology = {
    name: props.workerName ?? 'worker',
    ...DEFAULT_SETTINGS,
    visibilityTimeoutSeconds: 6 * timeout,
    ...s,
    memoryMiB: memoryMiB as number,
    functionTimeoutSeconds: timeout,
  };
  // memorySize and timeout are in the topology now (the queue is checked against them).
  const { memorySize: _m, timeout: _t, ...functionProps } = fp;
  const worker = sqsWorkerViolations({
    topology,
    source: props.worker,
    ...(props.functionProps ? { functionProps } : {}),
    ...(props.queueProps ? { queueProps: props.queueProps } : {}),
    ...(props.deadLetterQueueProps ? { deadLetterQueueProps: props.deadLetterQueueProps } : {}),
    ...(props.tracing !== undefined ? { tracing: props.tracing } : {}),
    ...(props.reservedConcurrentExecutions !== undefined
      ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
      : {}),
    ...(props.reserveConcurrency !== undefined ? { reserveConcurrency: props.reserveConcurrency } : {}),
  });
  if (worker.length > 0) throw new StackConfigurationInvalidError(worker);
  return {
    inputPrefix,
    outputPrefixes,
    failurePrefix,
    ledger,
    stage,
    inputEvents: props.inputEvents ?? [EventType.OBJECT_CREATED, EventType.OBJECT_REMOVED],
    // The advertised limit: the declared one when given (the function finishes at least that much).
    maxInputBytes: props.maxInputBytes ?? finishes,
    topology,
    functionProps: props.functionProps ? functionProps : undefined,
  };
}

/**
 * Whether the worker gets the dedupe ledger: `ledger` when given, else implied by the props that
 * only a ledger user needs (a webhook, a table, table settings). A contradiction is pushed onto `v`.
 */
function planLedger(props: RerunPipelineProps, v: string[]): boolean {
  const implying = (['webhook', 'existingLedgerTableObj', 'ledgerTableProps'] as const).filter(
    (name) => props[name] !== undefined,
  );
  if (props.ledger === false) {
    for (const name of implying) {
      v.push(
        name === 'webhook'
          ? 'ledger: false contradicts webhook: the worker notifies the webhook once per output through the dedupe ledger'
          : `ledger: false contradicts ${name}: drop ${name}, or the ledger: false`,
      );
    }
    return false;
  }
  return props.ledger === true || implying.length > 0;
}

/** The prefixes (input, outputs, failures), with what is wrong with them pushed onto `v`. */
function planPrefixes(props: RerunPipelineProps, stage: PlannedStage | undefined, v: string[]) {
  const inputPrefix = props.inputPrefix ?? stage?.inputPrefix ?? PIPELINE_DEFAULT_PREFIXES.inputPrefix;
  const declared = (props.worker as { outputPrefixes?: readonly string[] } | undefined)?.outputPrefixes;
  // Without a list, the stage's own key rules say where the worker writes.
  const fromStage = stage && stage.prefixes.length > 0 ? stage.prefixes : undefined;
  const outputPrefixes = props.outputPrefixes ?? declared ?? fromStage ?? [];
  // The role may write only under outputPrefixes: a key rule elsewhere would meet AccessDenied.
  for (const prefix of stage?.prefixes ?? []) {
    if (outputPrefixes.length > 0 && !outputPrefixes.some((p) => prefix.startsWith(p))) {
      v.push(
        `stage "${stage?.stageName}" writes under ${prefix}, outside outputPrefixes (${outputPrefixes.join(', ')}): ` +
          'add it to outputPrefixes, or fix the key rule',
      );
    }
  }
  const failurePrefix = props.failurePrefix ?? DEFAULT_FAILURE_PREFIX;
  if (props.outputPrefixes === undefined && declared === undefined && fromStage === undefined) {
    v.push(
      'outputPrefixes: name the prefixes your worker writes its outputs under, as its defineWorker({ outputPrefixes }) ' +
        "declares them (e.g. outputPrefixes: ['upper/']): the worker's role may write there and nowhere else. " +
        "rerun's own normalizer, referenceWorker('normalize'), declares its own.",
    );
  } else if (outputPrefixes.length === 0) v.push('outputPrefixes must name at least one prefix');
  const sameBucket =
    props.existingInputBucketObj !== undefined && props.existingInputBucketObj === props.existingOutputBucketObj;
  if (sameBucket) {
    const overlapping = [...outputPrefixes, failurePrefix].filter(
      (p) => p.startsWith(inputPrefix) || inputPrefix.startsWith(p),
    );
    if (overlapping.length > 0) {
      v.push(
        `input and output are one bucket and ${overlapping.join(', ')} overlaps the input prefix ${inputPrefix}: ` +
          'every output would trigger the worker again',
      );
    }
  }
  return { inputPrefix, outputPrefixes, failurePrefix };
}

/**
 * The worker's memory and timeout (given, or sized for `maxInputBytes`) and the largest input they
 * finish, with what is wrong with them pushed onto `v`.
 */
function planSizing(props: RerunPipelineProps, v: string[]) {
  const fp = props.functionProps ?? {};
  const s = props.workerSettings ?? {};
  const mibPerCpuSecond = sizingMibPerCpuSecond(props, v);
  const fixedMemory = fp.memorySize ?? s.memoryMiB;
  const fixedTimeout = fp.timeout?.toSeconds() ?? s.functionTimeoutSeconds;
  let memoryMiB = fixedMemory;
  let timeoutSeconds = fixedTimeout;
  if (memoryMiB === undefined || timeoutSeconds === undefined) {
    try {
      const sized = sizeWorker({
        maxInputBytes: props.maxInputBytes ?? 1024 ** 3,
        mibPerCpuSecond,
        minMemoryMiB: fixedMemory ?? props.minMemoryMiB ?? 512,
      });
      memoryMiB ??= sized.memoryMiB;
      timeoutSeconds ??= sized.timeoutSeconds;
    } catch (error) {
      v.push(`maxInputBytes: ${(error as Error).message}`);
    }
  }
  // The limit the worker enforces: what this memory and timeout finish with the margin.
  const finishes =
    memoryMiB !== undefined && timeoutSeconds !== undefined
      ? maxInputBytesFor({ memoryMiB, timeoutSeconds, mibPerCpuSecond })
      : 0;
  if (props.maxInputBytes !== undefined && finishes > 0 && finishes < props.maxInputBytes) {
    v.push(
      `maxInputBytes ${props.maxInputBytes} cannot finish at ${memoryMiB} MB and ${timeoutSeconds} s ` +
        `(at most ${finishes} bytes at ${mibPerCpuSecond} MiB/s with the margin): raise the memory or timeout, ` +
        'or leave them to the sizing',
    );
  }
  if (finishes <= 0 && v.length === 0) {
    v.push(`a ${timeoutSeconds} s timeout leaves no time to transform anything (10 s go to the overhead)`);
  }
  return { fp, s, memoryMiB, timeoutSeconds, finishes };
}

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

function webhookUrl(scope: Construct, webhook: RerunWebhookSource): string {
  if ('secret' in webhook) {
    const value = webhook.jsonField
      ? webhook.secret.secretValueFromJson(webhook.jsonField)
      : webhook.secret.secretValue;
    // A {{resolve:secretsmanager:...}} reference, resolved by CloudFormation at deploy time.
    return value.unsafeUnwrap();
  }
  return StringParameter.fromStringParameterAttributes(scope, 'WebhookUrlParameter', {
    parameterName: webhook.parameterName,
    forceDynamicReference: true,
  }).stringValue;
}

/**
 * The throughput the sizing plans with: `mibPerCpuSecond` when given, else the slowest figure of the
 * declared `inputFormats`, else the slowest of all formats. Contradictory or unknown declarations
 * are added to `violations`.
 */
function sizingMibPerCpuSecond(
  props: Pick<RerunPipelineProps, 'mibPerCpuSecond' | 'inputFormats'>,
  violations: string[],
): number {
  const formats = props.inputFormats;
  const known = Object.values(InputFormat) as string[];
  if (formats !== undefined && (formats.length === 0 || formats.some((f) => !known.includes(f)))) {
    violations.push(`inputFormats must name at least one of ${known.join(', ')} (got ${JSON.stringify(formats)})`);
  }
  if (formats !== undefined && props.mibPerCpuSecond !== undefined) {
    violations.push(
      "give mibPerCpuSecond or inputFormats, not both: inputFormats picks the reference normalizer's figure",
    );
  }
  return props.mibPerCpuSecond ?? planningMibPerCpuSecond(formats?.filter((f) => known.includes(f)));
}
