import { createHash } from 'node:crypto';

/**
 * The lineage of a window's output: every input it was built from, named by its source (one of the
 * task's inputs), its key relative to that source's root, and the ETag it had when it was listed.
 * Relative keys keep the output independent of the bucket names it was built in.
 */

/**
 * One input of a window's output.
 *
 * @example
 * const entry: WindowLineageEntry = { source: 'hourly', path: 'year=2026/month=12/day=05/hour=13/a.json', etag: '9b2c' };
 */
export interface WindowLineageEntry {
  /** The name of the task's input it comes from. */
  readonly source: string;
  /** Key relative to that input's root. */
  readonly path: string;
  /** ETag without quotes. */
  readonly etag: string;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The canonical order of lineage entries: by source, then by path (UTF-16 code unit order, as
 * JavaScript compares strings; it is only required to be stable).
 *
 * @example
 * sortWindowLineage(entries)[0]?.source; // the first source by name
 */
export function sortWindowLineage<E extends WindowLineageEntry>(entries: readonly E[]): E[] {
  return [...entries].sort((a, b) => compare(a.source, b.source) || compare(a.path, b.path));
}

/**
 * The identity of a window's inputs and code: SHA-256 (hex) of the canonical JSON of the window's
 * label, the code version and the sorted lineage. Equal hashes mean "the same inputs, built by the
 * same code", so an output recording this hash is done; an added, removed or changed input (or a new
 * code version) gives another hash.
 *
 * @example
 * windowLineageHash({ partition: '2026-12-05', codeVersion: 'daily@1', entries }); // '3f9c...'
 */
export function windowLineageHash(input: {
  readonly partition: string;
  readonly codeVersion: string;
  readonly entries: readonly WindowLineageEntry[];
}): string {
  // Member order is part of the hash: codeVersion, lineage, partition (as the summary has always hashed).
  const canonical = JSON.stringify({
    codeVersion: input.codeVersion,
    lineage: sortWindowLineage(input.entries).map((e) => [e.source, e.path, e.etag]),
    partition: input.partition,
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
