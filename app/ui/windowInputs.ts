import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
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

/** A page of the objects directly under a window stage's input root (the days view's undated tile). */
export interface UndatedWindowInputPage {
  readonly day: 'undated';
  readonly items: readonly WindowInputItem[];
  /** Pass as `after` for the next page; absent on the last one. */
  readonly next?: string;
}

/**
 * The objects directly under a window stage's input root (`clicks-out/{bucket}/a.json`), outside any
 * partition folder: in no window of the stage, so no window's drill-down lists them. The days view's
 * tile of undated inputs shows them, each skipped with its reason. One delimited listing per page
 * (ListObjectsV2 with `/`), whatever the number of partitions; at most `limit`, in key order.
 *
 * @example
 * const page = await listUndatedWindowInputs(task, 'hourly', s3, { limit: 100 });
 */
export async function listUndatedWindowInputs(
  task: WindowTask,
  stage: string,
  s3: S3Client,
  page: { readonly after?: string; readonly limit: number },
): Promise<UndatedWindowInputPage> {
  const items: WindowInputItem[] = [];
  let more = false;
  for (const { source, bucket } of task.sources) {
    const listed = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: source.prefix,
        Delimiter: '/',
        MaxKeys: page.limit + 1 - items.length,
        ...(page.after?.startsWith(source.prefix) ? { StartAfter: page.after } : {}),
      }),
    );
    for (const object of listed.Contents ?? []) {
      if (!object.Key || object.Key === source.prefix) continue; // the root's own folder marker
      items.push({
        key: object.Key,
        bucket,
        source: source.name,
        class: 'skipped',
        ...(object.LastModified ? { lastModified: object.LastModified.getTime() } : {}),
        skipReason: `directly under ${source.prefix}, outside any partition folder: in no window of stage ${stage}`,
      });
    }
    if (items.length > page.limit || listed.IsTruncated) {
      more = true;
      break;
    }
  }
  const shown = items.slice(0, page.limit);
  const last = shown.at(-1);
  return { day: 'undated', items: shown, ...(more && last ? { next: last.key } : {}) };
}
