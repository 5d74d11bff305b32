import { type Day, dayOfRelativeKey, partitionName } from '../../src/keys/partition.js';
import { topology as defaultTopology, type Topology } from '../topology.js';

/**
 * Where the summary stage reads and writes, for one input bucket (the "source"). Every key is a pure
 * function of the source and the day, so every run of a partition addresses the same objects:
 *
 * | what | key |
 * | --- | --- |
 * | lineage (normalized outputs) | `normalized/{source}/dt=D/...` |
 * | lineage (quarantined rows) | `quarantine/{source}/dt=D/...` |
 * | published summary | `summaries/{source}/dt=D/summary.json` |
 * | manifest marker | `summaries/{source}/dt=D/_manifest/{lineageHash}/{summaryEtag}/{codeVersion}[/{coverageDigest}]` |
 * | staging copy | `summaries/_staging/{source}/dt=D/{lineageHash}.json` |
 *
 * The marker's KEY carries what a planner needs (lineage hash, the summary's ETag, code version), so
 * listing `summaries/{source}/` tells for every day whether the published summary is current,
 * without a HEAD per partition. Bucket names cannot contain `_`, so `_staging` never collides with a source.
 */
export interface SummaryLayout {
  /** The input bucket whose normalized outputs are summarized. */
  readonly source: string;
  readonly outputPrefix: string;
  readonly quarantinePrefix: string;
  readonly summaryPrefix: string;
}

/** Which of the two lineage prefixes an input of a summary comes from. */
export const LineageKind = { NORMALIZED: 'normalized', QUARANTINE: 'quarantine' } as const;
export type LineageKind = (typeof LineageKind)[keyof typeof LineageKind];

/** What a manifest marker's key says about the summary published with it. */
export interface MarkerInfo {
  readonly lineageHash: string;
  /** ETag (without quotes) the summary had when it was published. */
  readonly summaryEtag: string;
  readonly codeVersion: string;
  /** The coverage digest the summary records, when it records its inputs' coverage (a 4th key segment). */
  readonly coverageDigest?: string;
}

const MANIFEST_DIR = '_manifest/';
const SUMMARY_FILE = 'summary.json';

/**
 * The layout of one source under a topology's prefixes.
 *
 * @example
 * const layout = summaryLayout('rerun-input'); // topology prefixes
 * summaryKey(layout, '2026-01-05'); // 'summaries/rerun-input/dt=2026-01-05/summary.json'
 */
export function summaryLayout(source: string, t: Topology = defaultTopology): SummaryLayout {
  return {
    source,
    outputPrefix: t.outputPrefix,
    quarantinePrefix: t.quarantinePrefix,
    summaryPrefix: t.summaryPrefix,
  };
}

/**
 * The root under which a lineage kind's keys of this source live (`normalized/{source}/`).
 *
 * @example
 * lineageRoot(layout, 'quarantine'); // 'quarantine/rerun-input/'
 */
export function lineageRoot(layout: SummaryLayout, kind: LineageKind): string {
  const prefix = kind === LineageKind.NORMALIZED ? layout.outputPrefix : layout.quarantinePrefix;
  return `${prefix}${layout.source}/`;
}

/**
 * The prefix listing a day's inputs of one kind (`normalized/{source}/dt=D/`).
 *
 * @example
 * lineagePrefix(layout, 'normalized', '2026-01-05'); // 'normalized/rerun-input/dt=2026-01-05/'
 */
export function lineagePrefix(layout: SummaryLayout, kind: LineageKind, day: Day): string {
  return `${lineageRoot(layout, kind)}${partitionName(day)}/`;
}

/**
 * The root of this source's published summaries and markers (`summaries/{source}/`).
 *
 * @example
 * summaryRoot(layout); // 'summaries/rerun-input/'
 */
export function summaryRoot(layout: SummaryLayout): string {
  return `${layout.summaryPrefix}${layout.source}/`;
}

/**
 * The deterministic key of a day's published summary.
 *
 * @example
 * summaryKey(layout, '2026-01-05'); // 'summaries/rerun-input/dt=2026-01-05/summary.json'
 */
export function summaryKey(layout: SummaryLayout, day: Day): string {
  return `${summaryRoot(layout)}${partitionName(day)}/${SUMMARY_FILE}`;
}

/**
 * The prefix of a day's manifest markers.
 *
 * @example
 * markerPrefix(layout, '2026-01-05'); // 'summaries/rerun-input/dt=2026-01-05/_manifest/'
 */
export function markerPrefix(layout: SummaryLayout, day: Day): string {
  return `${summaryRoot(layout)}${partitionName(day)}/${MANIFEST_DIR}`;
}

/**
 * The key of the manifest marker of a published summary. The code version is URI-encoded so a
 * version such as `summarize@1/beta` stays one key segment. A summary that records its inputs'
 * coverage adds the coverage digest as a 4th segment, so the planner sees it in the listing too.
 *
 * @example
 * markerKey(layout, '2026-01-05', { lineageHash: 'ab12', summaryEtag: '9f0e', codeVersion: 'summarize@1' });
 * // 'summaries/rerun-input/dt=2026-01-05/_manifest/ab12/9f0e/summarize%401'
 */
export function markerKey(layout: SummaryLayout, day: Day, marker: MarkerInfo): string {
  const coverage = marker.coverageDigest !== undefined ? `/${marker.coverageDigest}` : '';
  return `${markerPrefix(layout, day)}${marker.lineageHash}/${marker.summaryEtag}/${encodeURIComponent(marker.codeVersion)}${coverage}`;
}

/**
 * The deterministic staging key of a summary built from one lineage. Two runs of the same lineage
 * and code stage identical bytes at the same key; a crash leaves at most one object per lineage,
 * overwritten or removed by the next run (and expired by the stack's lifecycle rule).
 *
 * @example
 * stagingKey(layout, '2026-01-05', 'ab12'); // 'summaries/_staging/rerun-input/dt=2026-01-05/ab12.json'
 */
export function stagingKey(layout: SummaryLayout, day: Day, lineageHash: string): string {
  return `${stagingRoot(layout)}${layout.source}/${partitionName(day)}/${lineageHash}.json`;
}

/**
 * The prefix of every staging object (one lifecycle rule expires them all).
 *
 * @example
 * stagingRoot(layout); // 'summaries/_staging/'
 */
export function stagingRoot(layout: Pick<SummaryLayout, 'summaryPrefix'>): string {
  return `${layout.summaryPrefix}_staging/`;
}

/** What a key under {@link summaryRoot} is. */
export type SummaryObject =
  | { readonly kind: 'summary'; readonly day: Day }
  | { readonly kind: 'marker'; readonly day: Day; readonly marker: MarkerInfo }
  | { readonly kind: 'other'; readonly day?: Day };

/**
 * Classifies a key under {@link summaryRoot}: a published summary, a marker (decoded), or something
 * else (which planning ignores).
 *
 * @example
 * classifySummaryKey(layout, 'summaries/rerun-input/dt=2026-01-05/summary.json'); // { kind: 'summary', day: '2026-01-05' }
 */
export function classifySummaryKey(layout: SummaryLayout, key: string): SummaryObject {
  const root = summaryRoot(layout);
  if (!key.startsWith(root)) return { kind: 'other' };
  const relative = key.slice(root.length);
  const day = dayOfRelativeKey(relative);
  if (!day) return { kind: 'other' };
  const rest = relative.slice(relative.indexOf('/') + 1);
  if (rest === SUMMARY_FILE) return { kind: 'summary', day };
  if (rest.startsWith(MANIFEST_DIR)) {
    const parts = rest.slice(MANIFEST_DIR.length).split('/');
    const [lineageHash, summaryEtag, encodedVersion, coverageDigest] = parts;
    if (
      (parts.length === 3 || (parts.length === 4 && coverageDigest)) &&
      lineageHash &&
      summaryEtag &&
      encodedVersion
    ) {
      try {
        return {
          kind: 'marker',
          day,
          marker: {
            lineageHash,
            summaryEtag,
            codeVersion: decodeURIComponent(encodedVersion),
            ...(coverageDigest ? { coverageDigest } : {}),
          },
        };
      } catch {
        return { kind: 'other', day };
      }
    }
  }
  return { kind: 'other', day };
}
