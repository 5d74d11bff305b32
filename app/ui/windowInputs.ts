import type { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import type { WindowTask } from '../../src/window/defineWindowTask.js';
import { listWindowLineage } from '../../src/window/listWindowLineage.js';

/** One object under a window's listings, as the drill-down of a window stage's window lists it. */
export interface WindowInputItem {
  readonly key: string;
  readonly bucket: string;
  /** The stage it is read from: the window stage's input. */
  readonly source: string;
  /**
   * `input`: the window's build reads it; `skipped`: listed under the window's prefixes but in no
   * window of its source's scheme (or beside an upstream window's output), never silently left out.
   */
  readonly class: 'input' | 'skipped';
  readonly lastModified?: number;
  /** For a skipped key: why it is in no window. */
  readonly skipReason?: string;
}

/** A page of a window stage's window: its inputs and skipped keys, in key order. */
export interface WindowInputPage {
  /** The window's name in its stage's scheme (`2026-12-05T13`, `2026-12-05`, `2026-12`). */
  readonly window: string;
  readonly stage: string;
  readonly items: readonly WindowInputItem[];
  /** Pass as `after` for the next page; absent on the last one. */
  readonly next?: string;
}

/**
 * One page of the inputs of a window of a window stage, listed as its build lists them
 * (listWindowLineage): by the stage's own partition scheme and its input's key template
 * (`year=/month=/day=/hour=/`, `2026/12/05/`, ...), so an hourly window lists one hour's prefix and a
 * monthly one the month's. Each page lists the whole window again (one listing per prefix) and
 * returns the keys after `after`, at most `limit`.
 *
 * @throws WindowNameInvalidError when `name` is no window of the stage's scheme
 * @example
 * const page = await listWindowInputPage(task, 'hourly', '2026-12-05T13', reader, { limit: 50 });
 */
export async function listWindowInputPage(
  task: WindowTask,
  stage: string,
  name: string,
  reader: S3PartitionStore,
  page: { readonly after?: string; readonly limit: number },
): Promise<WindowInputPage> {
  const window = task.scheme.parseWindow(name);
  const { lineage, skipped } = await listWindowLineage(task, window, reader);
  const bucketOf = new Map(task.sources.map((s) => [s.source.name, s.bucket]));
  const all: WindowInputItem[] = [
    ...lineage.map((entry) => ({
      key: entry.key,
      bucket: bucketOf.get(entry.source) ?? '',
      source: entry.source,
      class: 'input' as const,
      lastModified: entry.lastModified,
    })),
    ...skipped.map((key) => ({
      key: key.key,
      bucket: bucketOf.get(key.source) ?? '',
      source: key.source,
      class: 'skipped' as const,
      skipReason: key.reason,
    })),
  ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const after = page.after;
  const rest = after === undefined ? all : all.filter((item) => item.key > after);
  const items = rest.slice(0, page.limit);
  const last = items.at(-1);
  return { window: window.name, stage, items, ...(rest.length > page.limit && last ? { next: last.key } : {}) };
}
