/**
 * A window's manifest marker: an empty object whose KEY says what a planner needs about the published
 * output (its lineage hash, its ETag, the code version, and the digest of any record of its inputs),
 * so one listing tells for every window whether its output is current, without a HEAD per window:
 * `{markerPrefix}{lineageHash}/{outputEtag}/{codeVersion, URI-encoded}[/{recordDigest}]`.
 */

/**
 * What a marker's key says about the output published with it.
 *
 * @example
 * const marker: WindowMarker = { lineageHash: 'ab12', outputEtag: '9f0e', codeVersion: 'daily@1' };
 */
export interface WindowMarker {
  readonly lineageHash: string;
  /** ETag (without quotes) the output had when it was published. */
  readonly outputEtag: string;
  readonly codeVersion: string;
  /** The digest of the record of its inputs the output keeps, when it keeps one (a 4th key segment). */
  readonly recordDigest?: string;
}

/**
 * The key of a marker under a window's marker prefix. The code version is URI-encoded so a version
 * such as `daily@1/beta` stays one key segment.
 *
 * @example
 * windowMarkerKey('daily/dt=2026-12-05/_manifest/', { lineageHash: 'ab12', outputEtag: '9f0e', codeVersion: 'daily@1' });
 * // 'daily/dt=2026-12-05/_manifest/ab12/9f0e/daily%401'
 */
export function windowMarkerKey(markerPrefix: string, marker: WindowMarker): string {
  const record = marker.recordDigest !== undefined ? `/${marker.recordDigest}` : '';
  return `${markerPrefix}${marker.lineageHash}/${marker.outputEtag}/${encodeURIComponent(marker.codeVersion)}${record}`;
}

/**
 * Decodes the part of a marker's key after its window's marker prefix, or undefined when it is no marker.
 *
 * @example
 * parseWindowMarker('ab12/9f0e/daily%401'); // { lineageHash: 'ab12', outputEtag: '9f0e', codeVersion: 'daily@1' }
 */
export function parseWindowMarker(rest: string): WindowMarker | undefined {
  const parts = rest.split('/');
  const [lineageHash, outputEtag, encodedVersion, recordDigest] = parts;
  if (!(parts.length === 3 || (parts.length === 4 && recordDigest))) return undefined;
  if (!lineageHash || !outputEtag || !encodedVersion) return undefined;
  try {
    const codeVersion = decodeURIComponent(encodedVersion);
    return { lineageHash, outputEtag, codeVersion, ...(recordDigest ? { recordDigest } : {}) };
  } catch {
    return undefined;
  }
}
