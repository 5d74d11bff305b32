import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { type Day, dayOfInstant } from '../../src/keys/partition.js';
import { windowsIntersecting } from '../../src/partitions/mapWindows.js';
import { type PartitionWindow, partitionScheme } from '../../src/partitions/partitionScheme.js';
import type { WindowTask } from '../../src/window/defineWindowTask.js';

/**
 * The default window of the days view: the `days` days up to today (UTC).
 *
 * @example
 * defaultWindow('2026-01-14', 14); // { from: '2026-01-01', to: '2026-01-14' }
 */
export function defaultWindow(today: Day, days = 14): { from: Day; to: Day } {
  return { from: dayOfInstant(Date.parse(`${today}T00:00:00Z`) - (days - 1) * 86_400_000), to: today };
}

/**
 * The windows of a stage of another grain than daily that meet the days `from` to `to`: the hours of
 * those days, or the weeks or months they fall in (no more than `max`).
 *
 * @throws RangeError when they are more than `max`
 * @example
 * windowsOfDays(hourlyTask, '2026-12-05', '2026-12-05', 744).length; // 24
 */
export function windowsOfDays(task: WindowTask, from: Day, to: Day, max: number): PartitionWindow[] {
  const days = partitionScheme({ kind: 'time', grain: 'daily', template: '{yyyy}-{MM}-{dd}' }).windowsBetween(from, to);
  const seen = new Map<string, PartitionWindow>();
  for (const day of days) for (const w of windowsIntersecting(task.scheme, day)) seen.set(w.name, w);
  if (seen.size > max) throw new RangeError(`at most ${max} windows per request`);
  return [...seen.values()];
}

/** Listings one {@link latestInputWindow} sends at most (stray folders cost one each). */
const MAX_LISTINGS = 64;

/** How significant each template field is (a key template is in time order when they come coarsest first), and its width. */
const FIELDS: Readonly<Record<string, { rank: number; width: number }>> = {
  yyyy: { rank: 0, width: 4 },
  MM: { rank: 1, width: 2 },
  ww: { rank: 1, width: 2 },
  dd: { rank: 2, width: 2 },
  HH: { rank: 3, width: 2 },
};

/** The inputs {@link latestInputWindow} looks through: a window task's, or an object stage's under its input prefix. */
export interface InputRoots {
  readonly sources: readonly {
    readonly source: { readonly prefix: string };
    readonly bucket: string;
    readonly scheme: WindowTask['scheme'];
  }[];
}

/**
 * The latest window of a window stage's inputs that has an input (or of an object stage's, under
 * its input prefix, in the daily scheme of its own template), in the input's own partition
 * scheme (`2026-12-05T13` for inputs keyed `year=/month=/day=/hour=/`), and the day it starts on:
 * what the console's days view opens on when nothing recent has inputs. Found without listing every
 * input: each input root's folders are listed one level at a time (ListObjectsV2 with `/`), the latest
 * folder first, down to the first key of a window; a folder holding none (in no window) is passed
 * over, and a folder that cannot begin a key of the template (`_staging/`) is not listed. That order is time order only for a template whose fields come coarsest first (`{yyyy}`, then
 * `{MM}` or `{ww}`, `{dd}`, `{HH}`), as every zero-padded date layout has them; a source with another
 * template, or not partitioned by time, gives none. Undefined when no input is found (or after
 * {@link MAX_LISTINGS} listings).
 *
 * @example
 * await latestInputWindow(hourlyTask, s3); // { window: '2026-12-05T13', day: '2026-12-05' }
 */
export async function latestInputWindow(
  task: InputRoots,
  s3: S3Client,
): Promise<{ readonly window: string; readonly day: Day } | undefined> {
  const budget = { listings: MAX_LISTINGS };
  let latest: { name: string; start: number } | undefined;
  for (const { source, bucket, scheme } of task.sources) {
    if (scheme.spec.kind !== 'time' || !inTimeOrder(scheme.spec.template)) continue;
    const walk = { s3, bucket, root: source.prefix, scheme, budget, segments: templateSegments(scheme.spec.template) };
    const found = await latestUnder(walk, source.prefix);
    if (found && (!latest || found.start > latest.start)) latest = found;
  }
  return latest ? { window: latest.name, day: dayOfInstant(latest.start) } : undefined;
}

/** Whether a template's fields come coarsest first, so its keys sort in time order. */
function inTimeOrder(template: string): boolean {
  const ranks = [...template.matchAll(/\{(\w+)\}/g)].map((m) => FIELDS[m[1] ?? '']?.rank ?? -1);
  return ranks.every((rank, i) => rank >= 0 && (i === 0 || rank > (ranks[i - 1] ?? 0)));
}

/** Each `/`-separated folder level of a template, as a pattern its folder names match. */
function templateSegments(template: string): RegExp[] {
  return template.split('/').map((segment) => {
    const pattern = segment
      .split(/(\{\w+\})/)
      .map((part) => {
        const field = /^\{(\w+)\}$/.exec(part)?.[1];
        return field !== undefined ? `\\d{${FIELDS[field]?.width ?? 1}}` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('');
    return new RegExp(`^${pattern}$`);
  });
}

/** What one {@link latestUnder} walk reads with. */
interface Walk {
  readonly s3: S3Client;
  readonly bucket: string;
  /** The input root the template's keys are relative to. */
  readonly root: string;
  readonly scheme: WindowTask['scheme'];
  readonly budget: { listings: number };
  /** The template's folder levels (templateSegments). */
  readonly segments: readonly RegExp[];
}

/** Whether a folder (relative to the root, with its `/`) can hold keys of the template: each of its levels matches the template's. */
function canHoldKeys(walk: Walk, folder: string): boolean {
  const levels = folder.slice(walk.root.length, -1).split('/');
  return levels.every((level, i) => i >= walk.segments.length || (walk.segments[i]?.test(level) ?? false));
}

/** The latest window of a key under `prefix` (the keys directly under it, then its folders latest first). */
async function latestUnder(walk: Walk, prefix: string): Promise<{ name: string; start: number } | undefined> {
  const { s3, bucket, root, scheme, budget } = walk;
  const folders: string[] = [];
  let latest: { name: string; start: number } | undefined;
  let token: string | undefined;
  do {
    if (budget.listings-- <= 0) return latest;
    const out = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        Delimiter: '/',
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const object of out.Contents ?? []) {
      const reading = scheme.windowOfKey((object.Key ?? '').slice(root.length));
      if ('window' in reading && reading.window.kind === 'time' && (!latest || reading.window.start > latest.start)) {
        latest = { name: reading.window.name, start: reading.window.start };
      }
    }
    for (const p of out.CommonPrefixes ?? []) if (p.Prefix && canHoldKeys(walk, p.Prefix)) folders.push(p.Prefix);
    token = out.IsTruncated ? out.NextContinuationToken : undefined;
  } while (token);
  folders.sort((a, b) => Buffer.compare(Buffer.from(b, 'utf8'), Buffer.from(a, 'utf8')));
  for (const folder of folders) {
    if (budget.listings <= 0) break;
    const found = await latestUnder(walk, folder);
    if (found) return !latest || found.start > latest.start ? found : latest;
  }
  return latest;
}
