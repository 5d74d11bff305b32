/**
 * The summary stage's listings and pinned reads: the library's S3PartitionStore (src/s3/), which every
 * window task uses. Kept at this path so the application's imports read as before.
 */
export {
  type GetExactResult,
  type ListedObject,
  type ListOptions,
  S3PartitionStore,
} from '../../src/s3/S3PartitionStore.js';
