import type { PartitionScheme, PartitionWindow } from '../partitions/partitionScheme.js';

/**
 * Where a window task writes, for one window: every key a pure function of the window (and, for the
 * staging copy, of the lineage hash), so every run of a window addresses the same objects.
 *
 * | what | key |
 * | --- | --- |
 * | published output | `{prefix}{window path}{fileName}` |
 * | manifest markers | `{prefix}{window path}_manifest/{lineageHash}/{etag}/{codeVersion}[/{recordDigest}]` |
 * | staging copy | `{stagingPrefix}{window path}{lineageHash}{fileName's extension}` |
 *
 * The window path is the window's one prefix in the task's own scheme (`dt=2026-12-05/`; empty for
 * an unpartitioned task).
 */
export interface WindowOutputKeys {
  readonly outputKey: string;
  readonly markerPrefix: string;
  stagingKey(lineageHash: string): string;
}

const MANIFEST_DIR = '_manifest/';

/**
 * The keys of one window's output.
 *
 * @example
 * const keys = windowOutputKeys(daily, daily.parseWindow('2026-12-05'), { prefix: 'daily/', fileName: 'counts.json' });
 * keys.outputKey; // 'daily/dt=2026-12-05/counts.json'
 * keys.stagingKey('ab12'); // 'daily/_staging/dt=2026-12-05/ab12.json'
 */
export function windowOutputKeys(
  scheme: PartitionScheme,
  window: PartitionWindow,
  output: { readonly prefix: string; readonly fileName: string; readonly stagingPrefix?: string },
): WindowOutputKeys {
  const [path = ''] = scheme.prefixesOf(window as never);
  const dot = output.fileName.lastIndexOf('.');
  const extension = dot > 0 ? output.fileName.slice(dot) : '';
  const stagingPrefix = output.stagingPrefix ?? `${output.prefix}_staging/`;
  return {
    outputKey: `${output.prefix}${path}${output.fileName}`,
    markerPrefix: `${output.prefix}${path}${MANIFEST_DIR}`,
    stagingKey: (lineageHash) => `${stagingPrefix}${path}${lineageHash}${extension}`,
  };
}
