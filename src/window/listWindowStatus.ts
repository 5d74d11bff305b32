import type { PartitionWindow } from '../partitions/partitionScheme.js';
import type { S3PartitionStore } from '../s3/S3PartitionStore.js';
import { judgeWindow, type WindowVerdict } from './judgeWindow.js';
import { listWindowLineage } from './listWindowLineage.js';
import type { CompiledWindowTask, ListedLineageEntry, SkippedKey } from './WindowTaskDefinition.js';
import { parseWindowMarker, type WindowMarker } from './windowMarker.js';
import { windowOutputKeys } from './windowOutputLayout.js';

/** One window's state with its name and the keys its listings skipped. */
export interface WindowStatusReport extends WindowVerdict {
  readonly window: PartitionWindow;
  /** Keys under the window's listings that belong to no window of their scheme, with their reason. */
  readonly skipped: readonly SkippedKey[];
  /** The window's inputs as listed, with their keys and LastModified (what an input coverage compares). */
  readonly lineage: readonly ListedLineageEntry[];
}

/**
 * The state of each window of a range, from listings alone: per window, its inputs' listings (as a
 * run lists them) and one listing of its output's folder (the output and its markers), then
 * {@link judgeWindow}. No HEAD, no GET. A task that keeps a record of its inputs is judged on its
 * lineage and markers; its record is checked by the run's done-check (a HEAD).
 *
 * @example
 * const report = await listWindowStatus(task, task.scheme.windowsBetween('2026-12-01', '2026-12-05'), reader);
 * report.filter((w) => w.status !== 'published'); // what a backfill would run
 */
export async function listWindowStatus(
  task: CompiledWindowTask<unknown, unknown>,
  windows: readonly PartitionWindow[],
  reader: S3PartitionStore,
): Promise<WindowStatusReport[]> {
  const { definition } = task;
  const reports: WindowStatusReport[] = [];
  for (const window of windows) {
    const { lineage, skipped } = await listWindowLineage(task, window, reader);
    const keys = windowOutputKeys(task.scheme, window, definition.output);
    const folder = keys.outputKey.slice(0, keys.outputKey.length - definition.output.fileName.length);
    let output: { etag: string } | undefined;
    const markers: WindowMarker[] = [];
    for await (const object of reader.list(definition.output.bucket, { prefix: folder })) {
      if (object.key === keys.outputKey) output = { etag: object.etag };
      else if (object.key.startsWith(keys.markerPrefix)) {
        const marker = parseWindowMarker(object.key.slice(keys.markerPrefix.length));
        if (marker) markers.push(marker);
      }
    }
    const partition = definition.partitionLabel?.(window) ?? window.name;
    const entries = lineage.map(({ source, path, etag }) => ({ source, path, etag }));
    const verdict = judgeWindow(
      { partition, lineage: entries, markers, ...(output ? { output } : {}) },
      definition.codeVersion,
    );
    reports.push({ ...verdict, window, skipped, lineage });
  }
  return reports;
}
