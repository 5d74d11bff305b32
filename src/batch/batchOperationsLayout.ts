/**
 * Where a Batch Operations job of rerun keeps its files in the bucket that holds them (the output
 * bucket): the manifests rerun writes and the completion reports S3 writes. One definition, read by
 * `rerun reprocess --engine batch-operations` and by the construct's job role, whose grants cover
 * exactly these prefixes. Pure: no SDK.
 */

/** The root of every job file. @example 'batch-operations/' */
export const BATCH_OPERATIONS_PREFIX = 'batch-operations/';

/**
 * Manifests written by rerun, named by the SHA-256 of their content: the same plan is the same key.
 *
 * @example
 * batchOperationsManifestKey('9f86d0…'); // 'batch-operations/manifests/9f86d0….csv'
 */
export function batchOperationsManifestKey(digest: string, root = BATCH_OPERATIONS_PREFIX): string {
  return `${root}manifests/${digest}.csv`;
}

/** The manifests' prefix (the job role reads it). @example 'batch-operations/manifests/' */
export function batchOperationsManifestPrefix(root = BATCH_OPERATIONS_PREFIX): string {
  return `${root}manifests/`;
}

/**
 * The report prefix given to CreateJob, without a trailing slash: S3 writes
 * `{prefix}/job-{jobId}/manifest.json` and `{prefix}/job-{jobId}/results/*.csv` (S3 User Guide,
 * "Examples: S3 Batch Operations completion reports").
 *
 * @example
 * batchOperationsReportPrefix(); // 'batch-operations/reports'
 */
export function batchOperationsReportPrefix(root = BATCH_OPERATIONS_PREFIX): string {
  return `${root}reports`;
}

/**
 * The top-level manifest of a job's completion report.
 *
 * @example
 * batchOperationsReportManifestKey('batch-operations/reports', 'a1b2'); // 'batch-operations/reports/job-a1b2/manifest.json'
 */
export function batchOperationsReportManifestKey(reportPrefix: string, jobId: string): string {
  return `${reportPrefix.replace(/\/+$/, '')}/job-${jobId}/manifest.json`;
}
