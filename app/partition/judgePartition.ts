import type { Day } from '../../src/keys/partition.js';
import { describeCoverage, type InputCoverage, isFullyCovered } from './inputCoverage.js';
import { type LineageEntry, lineageHash } from './lineage.js';
import { LineageKind, type MarkerInfo } from './summaryLayout.js';

/** The state of one partition, as `rerun status` reports it and `rerun backfill` plans from it. */
export const PartitionStatus = {
  /** A summary is published and its manifest names the current lineage and code version. */
  PUBLISHED: 'published',
  /** No summary is published for the day. */
  MISSING: 'missing',
  /** A summary is published, but its inputs or the code changed since (or its publish was interrupted). */
  STALE: 'stale',
  /** The object at the summary key is not what rerun published (changed behind its back, or fails validation). */
  INVALID: 'invalid',
  /**
   * The summary is current and records the day's input coverage truly, but some inputs of the day
   * have no current output and no classified outcome (pending, or changed since their output): it
   * does not cover the whole day.
   */
  INCOMPLETE: 'incomplete',
} as const;
export type PartitionStatus = (typeof PartitionStatus)[keyof typeof PartitionStatus];

/** What listing the output bucket says about one day (no HEAD, no GET). */
export interface PartitionListing {
  readonly day: Day;
  /** The day's normalized outputs and quarantine objects with their listed ETags. */
  readonly lineage: readonly LineageEntry[];
  /** The published summary object, if listed. */
  readonly summary?: { readonly etag: string };
  /** Every manifest marker listed for the day (normally exactly one). */
  readonly markers: readonly MarkerInfo[];
  /** Which of the day's inputs have outputs or a classified outcome, when the inputs were listed. */
  readonly coverage?: InputCoverage;
}

/** A partition's state, with the reason an operator reads. */
export interface PartitionVerdict {
  readonly day: Day;
  readonly status: PartitionStatus;
  readonly reason: string;
  /** The lineage hash of the day's current inputs under the current code version. */
  readonly lineageHash: string;
  /** Normalized outputs of the day now. */
  readonly inputs: number;
  /** Quarantine objects of the day now. */
  readonly quarantineInputs: number;
  /** What the marker says was published (when there is exactly one marker). */
  readonly published?: MarkerInfo;
  /** The day's input coverage, when the inputs were listed. */
  readonly coverage?: InputCoverage;
}

/**
 * The bulk done-check of one partition, from listings alone: the published summary's ETag and the
 * manifest marker's key (which records the lineage hash, the summary's ETag and the code version at
 * publish time) against the lineage listed now. A partition whose markers are missing, duplicated or
 * disagree with the summary is not trusted (re-running it is always safe). Pure: no SDK.
 *
 * @example
 * const verdict = judgePartition({ day, lineage, summary: { etag }, markers }, 'summarize@1');
 * verdict.status; // 'published' | 'missing' | 'stale' | 'invalid'
 */
export function judgePartition(listing: PartitionListing, codeVersion: string): PartitionVerdict {
  const hash = lineageHash({ day: listing.day, codeVersion, entries: listing.lineage });
  const inputs = listing.lineage.filter((e) => e.kind === LineageKind.NORMALIZED).length;
  const base = {
    day: listing.day,
    lineageHash: hash,
    inputs,
    quarantineInputs: listing.lineage.length - inputs,
    ...(listing.coverage ? { coverage: listing.coverage } : {}),
  };
  const verdict = (status: PartitionStatus, reason: string, published?: MarkerInfo): PartitionVerdict => ({
    ...base,
    status,
    reason,
    ...(published ? { published } : {}),
  });
  // With the inputs listed, a day is described by its inputs (an input without an output still
  // counts); without, by its outputs.
  const described = listing.coverage ? describeCoverage(listing.coverage) : `${inputs} input${inputs === 1 ? '' : 's'}`;

  if (!listing.summary) {
    return verdict(
      PartitionStatus.MISSING,
      `no summary published (${described}${listing.markers.length > 0 ? '; a marker remains from an interrupted publish' : ''})`,
    );
  }
  const [marker, ...others] = listing.markers;
  if (!marker) return verdict(PartitionStatus.STALE, 'published without a manifest marker (publish interrupted)');
  if (others.length > 0) {
    return verdict(PartitionStatus.STALE, `${listing.markers.length} manifest markers (publish interrupted or raced)`);
  }
  if (marker.summaryEtag !== listing.summary.etag) {
    return verdict(
      PartitionStatus.INVALID,
      `summary object changed since it was published (ETag ${listing.summary.etag}, published ${marker.summaryEtag})`,
      marker,
    );
  }
  if (marker.codeVersion !== codeVersion) {
    return verdict(
      PartitionStatus.STALE,
      `code changed: built by ${marker.codeVersion}, current ${codeVersion}`,
      marker,
    );
  }
  if (marker.lineageHash !== hash) {
    return verdict(PartitionStatus.STALE, `inputs changed since publish (${described} now)`, marker);
  }
  // A summary records which inputs of the day it covers (its marker names that record's digest): with
  // the inputs listed, a new, removed or dead-lettered input makes that record untrue.
  if (listing.coverage && marker.coverageDigest !== listing.coverage.digest) {
    return verdict(
      PartitionStatus.STALE,
      marker.coverageDigest === undefined
        ? `the summary does not record which inputs it covers (${described} now)`
        : `inputs changed since publish, not their outputs (${described} now)`,
      marker,
    );
  }
  if (listing.coverage && !isFullyCovered(listing.coverage)) {
    return verdict(
      PartitionStatus.INCOMPLETE,
      `summary current, but not every input is covered (${described})`,
      marker,
    );
  }
  return verdict(PartitionStatus.PUBLISHED, `up to date (${described})`, marker);
}
