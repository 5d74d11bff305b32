/**
 * The CDK constructs (`import ... from 'rerun/cdk'`; needs the peer dependencies aws-cdk-lib and
 * constructs): buckets, the ledger table, an SQS-triggered worker, and the bucket policies that
 * make every write and delete conditional.
 *
 * @example
 * import { DataBucket, requireConditionalWrites } from 'rerun/cdk';
 * const output = new DataBucket(stack, 'Output');
 * requireConditionalWrites(output.bucket, ['normalized/', 'quarantine/']);
 */

export {
  denyBlindDeleteStatement,
  denyBlindOverwriteStatement,
  requireConditionalDeletes,
  requireConditionalWrites,
} from './conditionalWritePolicy.js';
export { DataBucket, type DataBucketProps } from './DataBucket.js';
export { StackConfigurationInvalidError, WorkerBundleUnusableError } from './errors.js';
export { LedgerTable, type LedgerTableProps } from './LedgerTable.js';
export { grantPrefixAccess, objectArnsUnder, type PrefixAccessOptions } from './prefixGrants.js';
export { SqsWorker, type SqsWorkerProps } from './SqsWorker.js';
