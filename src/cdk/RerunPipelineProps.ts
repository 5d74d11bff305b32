import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Tracing } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { EventType, IBucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic, TopicProps } from 'aws-cdk-lib/aws-sns';
import type { QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { InputFormat } from '../normalize/inputFormat.js';
import type { CustomKeyRule, DeterministicKeyRule } from '../pipeline/keyRule.js';
import type { PipelineDefinition, PipelineDescription } from '../pipeline/pipelineDescription.js';
import type { WorkerTopology } from '../topology/WorkerTopology.js';
import type { DataBucketProps } from './DataBucket.js';
import type { LedgerTableProps } from './LedgerTable.js';
import type { WorkerFunctionProps } from './SqsWorkerProps.js';
import type { RerunWebhookSource } from './webhookSource.js';
import type { WorkerSource } from './workerSource.js';

/** Props of {@link RerunPipeline}. Each `existingXObj` excludes its `xProps`. */
export interface RerunPipelineProps {
  /**
   * The worker: `{ entry }`, your handler module (TypeScript or JavaScript), bundled here by
   * esbuild (NodejsFunction) with the AWS SDK inside and your project's lockfile, split so that
   * what only a dynamic `import()` reaches is read when it runs; or
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
   * Extra environment variables of the worker (merged over the construct's). Not NOTIFY_URL (see
   * `webhook`) nor CODE_VERSION_PREFIX: the construct sets it to `code-versions/`, the prefix the
   * tools read and the worker's grant names; either is refused at synth.
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
