import type { WindowLineageEntry } from './windowLineage.js';
import { windowLineageHash } from './windowLineage.js';
import type { WindowMarker } from './windowMarker.js';

/** The state of one window, as status reports it and a backfill plans from it. */
export const WindowStatus = {
  /** An output is published and its marker names the current lineage and code version. */
  PUBLISHED: 'published',
  /** No output is published for the window. */
  MISSING: 'missing',
  /** An output is published, but its inputs or the code changed since (or its publish was interrupted). */
  STALE: 'stale',
  /** The object at the output key is not what rerun published (changed behind its back). */
  INVALID: 'invalid',
} as const;
export type WindowStatus = (typeof WindowStatus)[keyof typeof WindowStatus];

/** What listings say about one window (no HEAD, no GET). */
export interface WindowListing {
  /** The window's label, as its lineage hash and metadata record it. */
  readonly partition: string;
  /** The window's inputs with their listed ETags. */
  readonly lineage: readonly WindowLineageEntry[];
  /** The published output, if listed. */
  readonly output?: { readonly etag: string };
  /** Every manifest marker listed for the window (normally exactly one). */
  readonly markers: readonly WindowMarker[];
  /** The digest of the task's record of its inputs now, when the task keeps one. */
  readonly recordDigest?: string;
}

/** A window's state, with the reason an operator reads. */
export interface WindowVerdict {
  readonly status: WindowStatus;
  readonly reason: string;
  /** The lineage hash of the window's current inputs under the current code version. */
  readonly lineageHash: string;
  readonly inputs: number;
  /** What the marker says was published (when there is exactly one marker). */
  readonly published?: WindowMarker;
}

/**
 * The list-only done-check of one window: the published output's ETag and the marker's key (which
 * records the lineage hash, the output's ETag and the code version at publish time) against the
 * lineage listed now. A window whose markers are missing, duplicated or disagree with the output is
 * not trusted (running it again is always safe). Pure: no SDK.
 *
 * @example
 * const verdict = judgeWindow({ partition: '2026-12-05', lineage, output: { etag }, markers }, 'daily@1');
 * verdict.status; // 'published' | 'missing' | 'stale' | 'invalid'
 */
export function judgeWindow(listing: WindowListing, codeVersion: string): WindowVerdict {
  const hash = windowLineageHash({ partition: listing.partition, codeVersion, entries: listing.lineage });
  const inputs = listing.lineage.length;
  const described = `${inputs} input${inputs === 1 ? '' : 's'}`;
  const verdict = (status: WindowStatus, reason: string, published?: WindowMarker): WindowVerdict => ({
    status,
    reason,
    lineageHash: hash,
    inputs,
    ...(published ? { published } : {}),
  });
  if (!listing.output) {
    const leftover = listing.markers.length > 0 ? '; a marker remains from an interrupted publish' : '';
    return verdict(WindowStatus.MISSING, `no output published (${described}${leftover})`);
  }
  const [marker, ...others] = listing.markers;
  if (!marker) return verdict(WindowStatus.STALE, 'published without a manifest marker (publish interrupted)');
  if (others.length > 0) {
    return verdict(WindowStatus.STALE, `${listing.markers.length} manifest markers (publish interrupted or raced)`);
  }
  if (marker.outputEtag !== listing.output.etag) {
    return verdict(
      WindowStatus.INVALID,
      `output object changed since it was published (ETag ${listing.output.etag}, published ${marker.outputEtag})`,
      marker,
    );
  }
  if (marker.codeVersion !== codeVersion) {
    return verdict(WindowStatus.STALE, `code changed: built by ${marker.codeVersion}, current ${codeVersion}`, marker);
  }
  if (marker.lineageHash !== hash) {
    return verdict(WindowStatus.STALE, `inputs changed since publish (${described} now)`, marker);
  }
  if (listing.recordDigest !== undefined && marker.recordDigest !== listing.recordDigest) {
    return verdict(WindowStatus.STALE, `inputs changed since publish, not their lineage (${described} now)`, marker);
  }
  return verdict(WindowStatus.PUBLISHED, `up to date (${described})`, marker);
}
