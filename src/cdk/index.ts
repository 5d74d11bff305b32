/**
 * The CDK constructs (`import ... from 'rerun-pipeline/cdk'`; needs the peer dependencies aws-cdk-lib and
 * constructs): the whole pipeline for your own CDK app (`RerunPipeline`), and its parts: buckets,
 * the ledger table, an SQS-triggered worker, and the bucket policies that make every write and
 * delete conditional.
 *
 * @example
 * import { RerunPipeline, referenceWorker, requireConditionalWrites } from 'rerun-pipeline/cdk';
 * new RerunPipeline(stack, 'Pipeline', { worker: { entry: 'worker.mjs' }, outputPrefixes: ['upper/'], outputs: true });
 * new RerunPipeline(stack, 'Normalizer', { worker: referenceWorker('normalize') }); // prebuilt, no esbuild
 * requireConditionalWrites(myBucket, 'exports/');
 */

export type { LedgerTopology, WorkerTopology } from '../topology/WorkerTopology.js';
export { allowCloudWatchAlarms, cloudWatchAlarmConditions } from './alarmTopicAccess.js';
export { BatchOperationsHandler, type BatchOperationsHandlerProps } from './BatchOperationsHandler.js';
export {
  denyBlindDeleteStatement,
  denyBlindOverwriteStatement,
  requireConditionalDeletes,
  requireConditionalWrites,
} from './conditionalWritePolicy.js';
export { DataBucket, type DataBucketProps } from './DataBucket.js';
export {
  ReferenceWorkerBundleMissingError,
  StackConfigurationInvalidError,
  WorkerBundleUnusableError,
} from './errors.js';
export { grantKeyUseVia, KeyService } from './keyGrants.js';
export { grantLedgerAccess, LedgerTable, type LedgerTableProps } from './LedgerTable.js';
export { PipelineDashboard, type PipelineDashboardProps } from './PipelineDashboard.js';
export { BATCH_OPERATIONS_STACK_OUTPUTS } from './pipelineStackOutputs.js';
export { grantPrefixAccess, objectArnsUnder, type PrefixAccessOptions } from './prefixGrants.js';
export { RerunPipeline } from './RerunPipeline.js';
export type { RerunPipelineProps } from './RerunPipelineProps.js';
export {
  RerunWindowStage,
  type RerunWindowStageProps,
  WINDOW_STAGE_DEFAULT_SETTINGS,
  windowStageOutputKeys,
} from './RerunWindowStage.js';
export { ReferenceWorker, type ReferenceWorkerName, referenceWorker } from './referenceWorker.js';
export { SourceAccountSqsDestination } from './SourceAccountSqsDestination.js';
export { SqsWorker } from './SqsWorker.js';
export type { SqsWorkerProps, WorkerFunctionProps } from './SqsWorkerProps.js';
export type { RerunWebhookSource } from './webhookSource.js';
export type { WorkerSource } from './workerSource.js';
