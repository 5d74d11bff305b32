import { type PartitionWindow, partitionScheme } from '../partitions/partitionScheme.js';
import type { ResolvedInputSource, WindowInputSource } from './WindowTaskDefinition.js';
import { windowOutputKeys } from './windowOutputLayout.js';

/**
 * An input of a window task as the engine reads it. Objects under a root are all inputs; another
 * window task's outputs are read at that task's bucket, root and scheme, and of the objects under a
 * window's prefix only its published output is an input: its markers and staging copies are its
 * bookkeeping, and anything else is skipped with its reason.
 *
 * @example
 * resolveInputSource({ name: 'daily', outputsOf: dailyCounts }, 'out').classify('dt=2026-12-05/counts.json', day); // 'input'
 */
export function resolveInputSource(source: WindowInputSource, outputBucket: string): ResolvedInputSource {
  if (!('outputsOf' in source)) {
    return {
      name: source.name,
      bucket: source.bucket ?? outputBucket,
      prefix: source.prefix,
      partitions: source.partitions,
      classify: () => 'input',
    };
  }
  const upstream = source.outputsOf.definition;
  const { output } = upstream;
  const scheme = partitionScheme(upstream.partitions);
  const relative = (key: string) => (key.startsWith(output.prefix) ? key.slice(output.prefix.length) : undefined);
  const stagingPrefix = relative(output.stagingPrefix ?? `${output.prefix}_staging/`);
  return {
    name: source.name,
    bucket: output.bucket,
    prefix: output.prefix,
    partitions: upstream.partitions,
    classify(path: string, window: PartitionWindow) {
      const keys = windowOutputKeys(scheme, window, output);
      if (path === relative(keys.outputKey)) return 'input';
      const markers = relative(keys.markerPrefix);
      if (markers !== undefined && path.startsWith(markers)) return 'bookkeeping';
      if (stagingPrefix !== undefined && path.startsWith(stagingPrefix)) return 'bookkeeping';
      return {
        reason: `not the output of window task "${upstream.name}" for ${window.name} (${keys.outputKey}), nor its marker`,
      };
    },
  };
}
