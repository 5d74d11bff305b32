import { type Day, partitionName } from '../../src/keys/partition.js';
import { windowLineageHash } from '../../src/window/windowLineage.js';
import type { LineageKind } from './summaryLayout.js';

/**
 * One input of a summary: an object of the partition, named relative to its kind's root
 * (`dt=2026-01-05/orders.csv.ndjson` under `normalized/{source}/`), with the ETag it had when it was
 * listed. Relative keys keep a summary independent of the bucket names it was computed in.
 */
export interface LineageEntry {
  readonly kind: LineageKind;
  /** Key relative to the kind's root, starting with `dt=YYYY-MM-DD/`. */
  readonly path: string;
  /** ETag without quotes. */
  readonly etag: string;
}

/**
 * The canonical order of lineage entries: by kind, then by path (UTF-16 code unit order, as
 * JavaScript compares strings; it is only required to be stable).
 *
 * @example
 * const sorted = sortLineage(entries);
 */
export function sortLineage(entries: readonly LineageEntry[]): LineageEntry[] {
  return [...entries].sort((a, b) =>
    a.kind === b.kind ? (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) : a.kind < b.kind ? -1 : 1,
  );
}

/**
 * The identity of a summary's inputs and code: SHA-256 (hex) of the canonical JSON of the partition,
 * the code version and the sorted lineage. Equal hashes mean "the same inputs, summarized by the same
 * code", so an existing summary with this hash is done; any added, removed or changed input (or a new
 * code version) gives another hash.
 *
 * @example
 * lineageHash({ day: '2026-01-05', codeVersion: 'summarize@1', entries }); // '3f9c...'
 */
export function lineageHash(input: { day: Day; codeVersion: string; entries: readonly LineageEntry[] }): string {
  // The window task's hash (src/window/windowLineage.ts), with the summary's label `dt=D` and kinds as sources.
  return windowLineageHash({
    partition: partitionName(input.day),
    codeVersion: input.codeVersion,
    entries: input.entries.map((e) => ({ source: e.kind, path: e.path, etag: e.etag })),
  });
}
