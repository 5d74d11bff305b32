import { type ExactOptionNames, type OptionNames, unknownOptionsProblem } from '../options/checkOptions.js';
import { WORKER_TOPOLOGY_NAMES } from '../topology/WorkerTopology.js';
import { StackConfigurationInvalidError } from './errors.js';

/*
 * The prop names of rerun's constructs, for checkProps. Declared here rather than beside each props
 * interface so that a construct's file only calls the check; the call (checkProps' types) fails tsc
 * when a list and its interface differ, in either direction. WORKER_SOURCE_NAMES (workerSource.ts) and
 * WORKER_TOPOLOGY_NAMES (topology/WorkerTopology.ts) sit beside their types.
 */

/** The names of {@link RerunPipelineProps}. */
export const RERUN_PIPELINE_PROP_NAMES = {
  alarmTopicProps: true,
  batchOperations: true,
  dashboard: true,
  deadLetterQueueProps: true,
  environment: true,
  existingAccessLogsBucketObj: true,
  existingAlarmTopicObj: true,
  existingInputBucketObj: true,
  existingLedgerTableObj: true,
  existingOutputBucketObj: true,
  failurePrefix: true,
  failureRecordRetentionDays: true,
  functionProps: true,
  inputBucketProps: true,
  inputEvents: true,
  inputFormats: true,
  inputPrefix: true,
  ledger: true,
  ledgerTableProps: true,
  logRetention: true,
  maxInputBytes: true,
  mibPerCpuSecond: true,
  minMemoryMiB: true,
  outputBucketProps: true,
  outputKey: true,
  outputPrefixes: true,
  outputs: true,
  pipeline: true,
  queueProps: true,
  reserveConcurrency: true,
  reservedConcurrentExecutions: true,
  stage: true,
  tracing: true,
  webhook: true,
  worker: true,
  workerName: true,
  workerSettings: true,
} as const;

/** The names of {@link RerunWindowStageProps}. */
export const RERUN_WINDOW_STAGE_PROP_NAMES = {
  alarmActions: true,
  bucket: true,
  environment: true,
  failurePrefix: true,
  handler: true,
  inputPrefix: true,
  logRetention: true,
  outputs: true,
  pipeline: true,
  schedule: true,
  settings: true,
  stage: true,
} as const;

/** The names of {@link SqsWorkerProps}. */
export const SQS_WORKER_PROP_NAMES = {
  alarmActions: true,
  deadLetterQueueProps: true,
  dlqAlarmThreshold: true,
  durationAlarmRatio: true,
  environment: true,
  functionProps: true,
  logLevel: true,
  logRetention: true,
  notifyOnOk: true,
  oldestMessageAlarmSeconds: true,
  queueProps: true,
  reserveConcurrency: true,
  reservedConcurrentExecutions: true,
  source: true,
  topology: true,
  tracing: true,
} as const;

/** The names of {@link BatchOperationsHandlerProps}. */
export const BATCH_OPERATIONS_HANDLER_PROP_NAMES = {
  environment: true,
  failurePrefix: true,
  inputBucket: true,
  inputPrefix: true,
  jobFilesPrefix: true,
  logRetention: true,
  memoryMiB: true,
  outputBucket: true,
  outputPrefixes: true,
  source: true,
  timeoutSeconds: true,
} as const;

/** The names of {@link DataBucketProps}. */
export const DATA_BUCKET_PROP_NAMES = {
  abortIncompleteMultipartUploadAfterDays: true,
  accessLogsBucket: true,
  accessLogsPrefix: true,
  encryptionKey: true,
  expireObjectsAfterDays: true,
  noncurrentVersionExpirationDays: true,
  removalPolicy: true,
  versioned: true,
} as const;

/** The names of {@link LedgerTableProps}. */
export const LEDGER_TABLE_PROP_NAMES = {
  encryptionKey: true,
  ledger: true,
  removalPolicy: true,
} as const;

/** The names of {@link PipelineDashboardProps}. */
export const PIPELINE_DASHBOARD_PROP_NAMES = {
  dashboardName: true,
  metricsNamespace: true,
  metricsWorkerNames: true,
  workers: true,
} as const;

/** The names of either form of RerunPipeline's `webhook` (RerunWebhookSource). */
export const WEBHOOK_SOURCE_NAMES = { secret: true, jsonField: true, parameterName: true } as const;

/** The names of RerunPipeline's `batchOperations`. */
export const BATCH_OPERATIONS_NAMES = { handler: true } as const;

/** The names of RerunWindowStage's `schedule`. */
export const SCHEDULE_NAMES = { hourUtc: true, minuteUtc: true } as const;

/** The names of RerunWindowStage's `settings`: a worker topology's, but `fifo`. */
export const WINDOW_STAGE_SETTING_NAMES = (({ fifo: _fifo, ...rest }) => rest)(WORKER_TOPOLOGY_NAMES);

/** For each prop of `T` that is an options object of rerun's own, the names it may hold. */
export type NestedPropNames<T> = { readonly [P in keyof T]?: OptionNames<NonNullable<T[P]>> };

/**
 * Refuses a construct's props that name an unknown prop, at its top level or inside the nested option
 * objects given (`{ worker: WORKER_SOURCE_NAMES }`), with the nearest known name: a misspelt prop
 * would otherwise be ignored and its default deployed. One StackConfigurationInvalidError lists every
 * unknown name, before the construct joins the tree.
 *
 * @example
 * checkProps('SqsWorker', props, SQS_WORKER_PROP_NAMES, { source: WORKER_SOURCE_NAMES });
 * // Invalid stack configuration; ...: SqsWorker: unknown option 'memoryMib'; did you mean 'memoryMiB'?
 */
export function checkProps<T, const K extends OptionNames<NoInfer<T>>>(
  construct: string,
  props: T,
  known: ExactOptionNames<NoInfer<T>, K>,
  nested: NestedPropNames<NoInfer<T>> = {},
): void {
  const problems = [unknownOptionsProblem(construct, props, known as OptionNames<T>)];
  for (const [prop, names] of Object.entries(nested) as [string, Readonly<Record<string, true>>][]) {
    const value = typeof props === 'object' && props !== null ? (props as Record<string, unknown>)[prop] : undefined;
    problems.push(unknownOptionsProblem(`${construct} ${prop}`, value, names));
  }
  const violations = problems.filter((p): p is string => p !== undefined);
  if (violations.length > 0) throw new StackConfigurationInvalidError(violations);
}
