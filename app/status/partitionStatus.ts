import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import type { Day } from '../../src/keys/partition.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { InputRules } from '../partition/inputCoverage.js';
import { judgePartition, PartitionStatus, type PartitionVerdict } from '../partition/judgePartition.js';
import { judgeSummaryHead, SummaryState } from '../partition/judgeSummaryHead.js';
import { listPartitions } from '../partition/listPartitions.js';
import type { S3PartitionStore } from '../partition/S3PartitionStore.js';
import { type SummaryLayout, summaryKey } from '../partition/summaryLayout.js';

/** Options of {@link partitionStatus}. */
export interface PartitionStatusOptions {
  /** Listings (the bulk done-check). */
  readonly reader: S3PartitionStore;
  /** The output bucket. */
  readonly bucket: string;
  readonly layout: SummaryLayout;
  /** The summary code version the deployment runs. */
  readonly codeVersion: string;
  readonly from: Day;
  readonly to: Day;
  /**
   * Also HEAD every published summary of the window and verify it (integrity against S3's stored
   * SHA-256, metadata against its manifest marker), to report `invalid` ones. Planning never does.
   * @default undefined: list only
   */
  readonly validateWith?: S3ObjectStore;
  /** Concurrent HEADs when validating. @default 8 */
  readonly concurrency?: number;
  /**
   * Judge each day by its inputs as well (listings of the input bucket and of the failure index,
   * and one HEAD per output older than its input): a day whose inputs are not all covered is
   * `incomplete`, not `published`.
   * @default undefined: outputs only
   */
  readonly inputs?: InputRules;
}

/** The state of a window. */
export interface StatusReport {
  readonly from: Day;
  readonly to: Day;
  /** One verdict per day, in day order. */
  readonly partitions: readonly PartitionVerdict[];
  readonly counts: Readonly<Record<PartitionStatus, number>>;
  /**
   * Requests the check used (the planner's cost): `head` counts the validation HEADs and one per
   * output the listings call older than its input (only its recorded source ETag decides).
   */
  readonly requests: { readonly list: number; readonly head: number };
}

/**
 * Per-partition status of a window: published, missing, stale (inputs or code changed since
 * publish) or invalid, from three listings; optionally validated with one HEAD per published
 * summary.
 *
 * @example
 * const report = await partitionStatus({ reader, bucket: 'rerun-output', layout, codeVersion: 'summarize@1',
 *   from: '2026-01-01', to: '2026-01-30' });
 * report.counts; // { published: 28, missing: 1, stale: 1, invalid: 0 }
 */
export async function partitionStatus(options: PartitionStatusOptions): Promise<StatusReport> {
  const { reader, bucket, layout, codeVersion, from, to } = options;
  const listBefore = reader.listRequests;
  const headBefore = reader.headRequests;
  const listings = await listPartitions({
    store: reader,
    bucket,
    layout,
    from,
    to,
    ...(options.inputs ? { inputs: options.inputs } : {}),
  });
  let partitions = listings.map((listing) => judgePartition(listing, codeVersion));
  const list = reader.listRequests - listBefore;
  // HEADs of outputs older than their input (their recorded source decides: inputCoverage.ts).
  let head = reader.headRequests - headBefore;

  const store = options.validateWith;
  if (store) {
    partitions = await mapWithConcurrency(partitions, options.concurrency ?? 8, async (verdict) => {
      if (
        verdict.status !== PartitionStatus.PUBLISHED &&
        verdict.status !== PartitionStatus.STALE &&
        verdict.status !== PartitionStatus.INCOMPLETE
      )
        return verdict;
      head++;
      const expected = verdict.published ?? { lineageHash: verdict.lineageHash, codeVersion };
      const judged = judgeSummaryHead(await store.head(bucket, summaryKey(layout, verdict.day)), {
        day: verdict.day,
        lineageHash: expected.lineageHash,
        codeVersion: expected.codeVersion,
        // The coverage record the marker names must be the one in the summary's metadata.
        ...(verdict.published?.coverageDigest ? { coverageDigest: verdict.published.coverageDigest } : {}),
      });
      if (judged.state === SummaryState.MISSING) {
        return { ...verdict, status: PartitionStatus.MISSING, reason: 'summary was deleted while checking' };
      }
      if (judged.state === SummaryState.INVALID)
        return { ...verdict, status: PartitionStatus.INVALID, reason: judged.reason };
      if (judged.state === SummaryState.OUTDATED && verdict.published) {
        return {
          ...verdict,
          status: PartitionStatus.INVALID,
          reason: `summary metadata disagrees with its manifest marker (${judged.reason})`,
        };
      }
      return verdict;
    });
  }

  const counts = { published: 0, missing: 0, stale: 0, invalid: 0, incomplete: 0 } as Record<PartitionStatus, number>;
  for (const p of partitions) counts[p.status]++;
  return { from, to, partitions, counts, requests: { list, head } };
}
