import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import type { ListedObject } from './planReprocess.js';

/** One ListObjectsV2 request, as the sharded listing sends it. */
export interface ListPageInput {
  readonly Bucket: string;
  readonly Prefix: string;
  readonly StartAfter?: string;
  readonly ContinuationToken?: string;
  readonly MaxKeys?: number;
}

/** What the sharded listing reads from a page. */
export interface ListPageOutput {
  readonly objects: readonly ListedObject[];
  readonly nextToken?: string | undefined;
}

/** Sends one ListObjectsV2 request (S3ListingReader adapts the SDK; the bench and tests fake it). */
export type ListPage = (input: ListPageInput) => Promise<ListPageOutput>;

/** A contiguous piece of a listing: one object found while probing, or every key under a prefix. */
export type KeyRange =
  | { readonly kind: 'object'; readonly object: ListedObject }
  | { readonly kind: 'prefix'; readonly prefix: string };

/** Options of {@link listSharded}. */
export interface ShardedListingOptions {
  /** Key ranges listed at once (and probes sent at once while finding them). Must be >= 1. */
  readonly shards: number;
  /**
   * Pages held per shard (fetched and unread, or in flight) before listing waits for the reader:
   * memory stays below `shards` x this many pages of 1,000 keys, however large the bucket
   * (16 shards: 128 pages, about 25 MiB of listed objects).
   * @default 8
   */
  readonly bufferedPages?: number;
  /**
   * How many times a range may be split again while there are fewer ranges than shards.
   * @default 3
   */
  readonly maxSplits?: number;
}

/** The highest code point: a key `p + MAX` sorts after every key that starts with `p` (but `p + MAX + ...`). */
const MAX = '\u{10FFFF}';

/**
 * Every object under `prefix`, in ListObjectsV2 order (UTF-8 binary), listed as independent key
 * ranges in parallel. The ranges are found by probing (ListObjectsV2 with MaxKeys 1 and
 * StartAfter): first the longest prefix every key shares (a binary search: "is there a key after
 * `p` + U+10FFFF?"), then each distinct next character below it, one probe each, splitting again
 * while there are fewer ranges than shards. The ranges are prefixes, so every key is listed by the
 * range of its own prefix whatever a probe saw: a probe only decides where the splits are. The
 * ranges are read back in key order, so the stream is exactly the sequential listing's, and the
 * plan built from it is the same plan (test/unit/shardedListing.test.ts compares both).
 *
 * @example
 * for await (const o of listSharded(listPage, 'in', 'incoming/', { shards: 16 })) console.log(o.key);
 */
export async function* listSharded(
  listPage: ListPage,
  bucket: string,
  prefix: string,
  options: ShardedListingOptions,
): AsyncGenerator<ListedObject> {
  const shards = options.shards;
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`shards must be an integer >= 1 (got ${shards})`);
  const budget = shards * (options.bufferedPages ?? 8);
  // Several ranges per shard: a range's pages come one after the other (continuation tokens), so
  // small ranges are what lets `shards` requests be in flight while the listing is read in order.
  const ranges = await findKeyRanges(listPage, bucket, prefix, shards * 4, options.maxSplits ?? 3, shards);
  const pages = new PageScheduler(listPage, bucket, ranges, shards, budget);
  try {
    for (let i = 0; i < ranges.length; i++) {
      const range = ranges[i] as KeyRange;
      if (range.kind === 'object') {
        yield range.object;
        continue;
      }
      for (let page = await pages.next(i); page; page = await pages.next(i)) yield* page;
    }
  } finally {
    pages.stop();
  }
}

/**
 * The key ranges under `prefix`, in key order, split until there are at least `shards` prefix
 * ranges (or no range can be split further, or `maxSplits` rounds were done).
 *
 * @example
 * await findKeyRanges(listPage, 'in', 'incoming/', 16, 3); // [{ kind: 'prefix', prefix: 'incoming/dt=2026-01-0' }, ...]
 */
export async function findKeyRanges(
  listPage: ListPage,
  bucket: string,
  prefix: string,
  shards: number,
  maxSplits: number,
  concurrency = shards,
): Promise<KeyRange[]> {
  const probe = async (p: string, startAfter?: string): Promise<ListedObject | undefined> => {
    const page = await listPage({
      Bucket: bucket,
      Prefix: p,
      MaxKeys: 1,
      ...(startAfter ? { StartAfter: startAfter } : {}),
    });
    return page.objects[0];
  };
  let ranges: KeyRange[] = [{ kind: 'prefix', prefix }];
  if (shards === 1) return ranges; // the sequential listing
  for (let round = 0; round <= maxSplits; round++) {
    const prefixes = ranges.filter((r) => r.kind === 'prefix').length;
    if (round > 0 && prefixes >= shards) break;
    const split = await mapWithConcurrency(ranges, concurrency, (range) =>
      range.kind === 'prefix' ? splitRange(probe, range.prefix) : Promise.resolve([range]),
    );
    const next = split.flat();
    const unchanged = next.length === ranges.length && next.every((r, i) => sameRange(r, ranges[i] as KeyRange));
    ranges = next;
    if (unchanged) break;
  }
  return ranges;
}

/**
 * Splits the keys under `p` into: the object at exactly `p` (when there is one), then one range per
 * distinct character that follows the longest prefix all the other keys share.
 */
async function splitRange(
  probe: (p: string, startAfter?: string) => Promise<ListedObject | undefined>,
  p: string,
): Promise<KeyRange[]> {
  const out: KeyRange[] = [];
  let first = await probe(p);
  if (!first) return out; // an empty range lists nothing
  if (first.key === p) {
    out.push({ kind: 'object', object: first });
    first = await probe(p, p);
    if (!first) return out;
  }
  // The longest prefix of `first.key` that every remaining key shares, by binary search over code
  // points: no key after `candidate + MAX` means every remaining key starts with `candidate`.
  const points = Array.from(first.key);
  let shared = Array.from(p).length;
  let hi = points.length;
  // Most often the very next character already differs: one probe says so, no search needed.
  if (shared < hi && (await probe(p, points.slice(0, shared + 1).join('') + MAX)) !== undefined) hi = shared;
  while (shared < hi) {
    const mid = Math.ceil((shared + hi) / 2);
    const candidate = points.slice(0, mid).join('');
    if ((await probe(p, candidate + MAX)) === undefined) shared = mid;
    else hi = mid - 1;
  }
  // Nothing to split at `p` when every key goes on alike: split below the shared prefix instead.
  const common = points.slice(0, shared).join('');
  return [...out, ...(await splitChildren(probe, common, common === p && out.length > 0 ? p : undefined))];
}

/**
 * The object at exactly `p` (if any, and unless `from` skips it), then a range per distinct next
 * character: one probe each, and one more that finds nothing.
 */
async function splitChildren(
  probe: (p: string, startAfter?: string) => Promise<ListedObject | undefined>,
  p: string,
  from?: string,
): Promise<KeyRange[]> {
  const out: KeyRange[] = [];
  let last: string | undefined;
  let startAfter: string | undefined = from;
  for (;;) {
    const found = await probe(p, startAfter);
    if (!found) return out;
    if (found.key === p) {
      out.push({ kind: 'object', object: found });
      startAfter = p;
      continue;
    }
    const next = String.fromCodePoint(found.key.codePointAt(p.length) as number);
    const child = p + next;
    // A key that goes on with U+10FFFF is past `child + MAX`: same child, step past that key.
    if (child === last) {
      startAfter = found.key;
      continue;
    }
    out.push({ kind: 'prefix', prefix: child });
    last = child;
    startAfter = child + MAX;
  }
}

function sameRange(a: KeyRange, b: KeyRange): boolean {
  return a.kind === 'prefix' && b.kind === 'prefix' ? a.prefix === b.prefix : a === b;
}

/** One prefix range's listing state in a {@link PageScheduler}. */
interface RangeState {
  token?: string | undefined;
  started: boolean;
  done: boolean;
  fetching: boolean;
  readonly pages: ListedObject[][];
}

/**
 * Fetches the pages of prefix ranges with at most `concurrency` requests in flight and at most
 * `budget` pages held (fetched and unread, or in flight), always for the earliest ranges first:
 * the range being read, then those after it. Memory is bounded by `budget` pages of 1,000 keys.
 */
class PageScheduler {
  private readonly states: (RangeState | undefined)[];
  private inFlight = 0;
  private held = 0;
  private reading = 0;
  private stopped = false;
  private error: unknown;
  private wake?: () => void;

  constructor(
    private readonly listPage: ListPage,
    private readonly bucket: string,
    private readonly ranges: readonly KeyRange[],
    private readonly concurrency: number,
    private readonly budget: number,
  ) {
    this.states = ranges.map((r) =>
      r.kind === 'prefix' ? { started: false, done: false, fetching: false, pages: [] } : undefined,
    );
    this.pump();
  }

  /** The next page of range `index` (read in order), or undefined once it is listed. */
  async next(index: number): Promise<ListedObject[] | undefined> {
    this.reading = index;
    const state = this.states[index] as RangeState;
    for (;;) {
      if (this.error) throw this.error;
      const page = state.pages.shift();
      if (page) {
        this.held--;
        this.pump();
        return page;
      }
      if (state.done) return undefined;
      this.pump();
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  stop(): void {
    this.stopped = true;
  }

  private pump(): void {
    for (let i = this.reading; i < this.states.length; i++) {
      if (this.stopped || this.inFlight >= this.concurrency || this.held >= this.budget) return;
      const state = this.states[i];
      if (!state || state.done || state.fetching) continue;
      this.fetch(i, state);
    }
  }

  private fetch(index: number, state: RangeState): void {
    const range = this.ranges[index] as { readonly prefix: string };
    state.fetching = true;
    state.started = true;
    this.inFlight++;
    this.held++;
    this.listPage({
      Bucket: this.bucket,
      Prefix: range.prefix,
      ...(state.token ? { ContinuationToken: state.token } : {}),
    })
      .then(
        (page) => {
          state.pages.push([...page.objects]);
          state.token = page.nextToken;
          state.done = page.nextToken === undefined;
        },
        (error) => {
          this.error = error;
        },
      )
      .finally(() => {
        state.fetching = false;
        this.inFlight--;
        this.pump();
        const wake = this.wake;
        this.wake = undefined;
        wake?.();
      });
  }
}
