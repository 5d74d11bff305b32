import { KeyAlphabet, planRangeSplit } from './keySpaceSplit.js';
import type { ListedObject } from './planReprocess.js';
import { compareS3Keys } from './s3KeyOrder.js';

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

/** What a sharded listing did, for tests and the bench. */
export interface ShardedListingCounters {
  /** Ranges split off while listing. */
  splits: number;
  /** Keys a page brought past its range's end that the next range had listed itself (dropped). */
  relisted?: number;
}

/** Options of {@link listSharded}. */
export interface ShardedListingOptions {
  /** Requests in flight at once. Must be >= 1; 1 is the sequential listing. */
  readonly shards: number;
  /**
   * Pages held per shard (fetched and unread, or in flight) before listing waits for the reader:
   * memory stays below `shards` x this many pages of 1,000 keys, however large the bucket
   * (16 shards: 128 pages, about 25 MiB of listed objects). It is also the size, in pages, that
   * ranges near the reader are split down to.
   * @default 8
   */
  readonly bufferedPages?: number;
  /** Counted into, when given. */
  readonly counters?: ShardedListingCounters;
}

/**
 * Every object under `prefix`, in ListObjectsV2 order (UTF-8 binary), listed as key ranges in
 * parallel. A range is `(after, hi]`: listed with StartAfter, page after page, until a page passes
 * `hi` (the keys past it go to the next range, or are dropped if it listed them itself) or the
 * prefix ends. Ranges are split while they are listed, with no probing: a range estimated to hold
 * more than `bufferedPages` pages (from the width of its last page, read through the characters
 * seen at each key position: app/reprocess/keySpaceSplit.ts) is cut at the middle of what it has
 * left, nearest the reader first. A split point is any string strictly between the bounds, so the ranges always cover the
 * prefix exactly, whatever the estimate: the estimate decides speed, never the result. Ranges are
 * read back in key order, so the stream is the sequential listing's and the plan built from it is
 * the same plan (test/unit/shardedListing.test.ts, test/integration/shardedPlanning.test.ts).
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
  const lister = new RangeLister(listPage, bucket, prefix, shards, options.bufferedPages ?? 8, options.counters);
  try {
    yield* lister.read();
  } finally {
    lister.stop();
  }
}

/** One key range `(after, hi]` being listed. */
interface KeyRange {
  /** StartAfter of the next request (the last key listed); undefined: from the prefix's start. */
  after?: string | undefined;
  /** The last key this range holds; undefined: to the prefix's end. Lowered by a split. */
  hi?: string | undefined;
  /** The first key of the last page, for the page width of {@link planRangeSplit}. */
  pageFirst?: string | undefined;
  fetching: boolean;
  /** Split off a range whose request was in flight: its first keys may come with that page. */
  waiting: boolean;
  done: boolean;
  readonly pages: (readonly ListedObject[])[];
}

/**
 * The ranges of one listing, in key order: the first is the one being read. Fetches go to the
 * earliest ranges first, with at most `concurrency` requests in flight and at most `concurrency` x
 * `bufferedPages` pages held (fetched and unread, or in flight); a free slot splits a range.
 */
class RangeLister {
  private readonly ranges: KeyRange[] = [{ fetching: false, waiting: false, done: false, pages: [] }];
  private readonly budget: number;
  /** The characters seen at each key position, which split points are estimated with. */
  private readonly alphabet = new KeyAlphabet();
  /** Ranges kept at most (read ones are dropped): bounds the state, not only the pages. */
  private readonly maxRanges: number;
  private inFlight = 0;
  private held = 0;
  private stopped = false;
  private error: unknown;
  private wake?: (() => void) | undefined;

  constructor(
    private readonly listPage: ListPage,
    private readonly bucket: string,
    private readonly prefix: string,
    private readonly concurrency: number,
    private readonly bufferedPages: number,
    private readonly counters?: ShardedListingCounters,
  ) {
    this.budget = concurrency * bufferedPages;
    this.maxRanges = concurrency * 4;
  }

  async *read(): AsyncGenerator<ListedObject> {
    for (;;) {
      if (this.error) throw this.error;
      const range = this.ranges[0];
      if (!range) return;
      const page = range.pages.shift();
      if (page) {
        this.held--;
        this.pump();
        yield* page;
        continue;
      }
      if (range.done) {
        this.ranges.shift();
        continue;
      }
      this.pump();
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /**
   * A free request slot, and pages left in the budget, which the range being read (and the half
   * split off it) may overrun by the slots: when ranges ahead hold the whole budget, the reader's
   * own range must still be split and listed in parallel, or it would be read one page at a time.
   */
  private hasRoom(reader = false): boolean {
    return !this.stopped && this.inFlight < this.concurrency && (reader || this.held < this.budget);
  }

  /**
   * Spends free slots and budget in key order, nearest the reader first: a range estimated to hold
   * more than `bufferedPages` pages is split, and each open range gets its next page. The half
   * split off is listed at once, or, cut while a request was in flight, waits for that page. Far
   * ranges cannot starve the one being read: what is held is spent on the keys the reader needs
   * next. One range (the sequential listing) is never split.
   */
  private pump(): void {
    for (let i = 0; i < this.ranges.length && this.hasRoom(i === 0); i++) {
      const range = this.ranges[i] as KeyRange;
      if (range.done || range.waiting) continue;
      const made = this.concurrency > 1 && this.ranges.length < this.maxRanges ? this.split(i) : undefined;
      if (!range.fetching) this.fetch(range);
      if (made && !made.waiting && this.hasRoom(i === 0)) this.fetch(made);
    }
  }

  /**
   * Cuts range `i` at the middle of what it has left when it is estimated (from the width of its
   * last page in the key space) to hold more than twice `bufferedPages` pages: ranges near the
   * reader end up about that long, which is what lets `concurrency` of them be listed within the
   * pages the reader may be ahead by. A range not listed yet is estimated by nothing, and waits
   * for its first page. Cut while its request is in flight, the new range waits for that page
   * (which may run past the cut: those keys are the new range's first ones, not listed twice).
   */
  private split(i: number): KeyRange | undefined {
    const range = this.ranges[i] as KeyRange;
    if (range.pageFirst === undefined) return undefined;
    const plan = planRangeSplit(this.alphabet, range, this.prefix, this.bufferedPages);
    if (!plan) return undefined;
    const made: KeyRange = {
      after: plan.point,
      hi: range.hi,
      fetching: false,
      waiting: range.fetching,
      done: false,
      pages: [],
    };
    range.hi = plan.point;
    this.ranges.splice(i + 1, 0, made);
    if (this.counters) this.counters.splits++;
    return made;
  }

  private fetch(range: KeyRange): void {
    range.fetching = true;
    this.inFlight++;
    this.held++;
    this.listPage({
      Bucket: this.bucket,
      Prefix: this.prefix,
      ...(range.after !== undefined ? { StartAfter: range.after } : {}),
    })
      .then(
        (page) => this.received(range, page),
        (error) => {
          this.error = error;
        },
      )
      .finally(() => {
        range.fetching = false;
        this.inFlight--;
        this.pump();
        const wake = this.wake;
        this.wake = undefined;
        wake?.();
      });
  }

  /**
   * Shares a page out: the keys up to the range's `hi` (read now: a split may have lowered it
   * meanwhile) are its own, those past it belong to the ranges split off it while the request was
   * in flight, in order. Those waiting ranges then list on from there, or are done.
   */
  private received(range: KeyRange, page: ListPageOutput): void {
    this.held--; // the request's place in the budget; each part kept takes one below
    const ended = page.nextToken === undefined;
    let rest = page.objects;
    for (let i = this.ranges.indexOf(range); i >= 0 && i < this.ranges.length; i++) {
      const target = this.ranges[i] as KeyRange;
      const take = target.hi === undefined ? rest.length : countUpTo(rest, target.hi);
      this.keep(target, rest.slice(0, take), ended || take < rest.length);
      rest = rest.slice(take);
      target.waiting = false;
      if (!this.ranges[i + 1]?.waiting) {
        if (this.counters) this.counters.relisted = (this.counters.relisted ?? 0) + rest.length;
        break;
      }
      if (rest.length === 0 && !ended) {
        // The page stopped short of the ranges still waiting: they list for themselves.
        for (let j = i + 1; this.ranges[j]?.waiting; j++) (this.ranges[j] as KeyRange).waiting = false;
        break;
      }
    }
    // A finished range with nothing left to read is dropped at once: the ranges kept are the open
    // ones and those holding pages, however many splits found nothing.
    for (let j = this.ranges.length - 1; j > 0; j--) {
      const r = this.ranges[j] as KeyRange;
      if (r.done && r.pages.length === 0) this.ranges.splice(j, 1);
    }
  }

  private keep(range: KeyRange, part: readonly ListedObject[], complete: boolean): void {
    const first = part[0];
    const last = part[part.length - 1];
    if (first && last) {
      // A sample of the keys is enough to learn which characters each position holds.
      for (let i = 0; i < part.length; i += 16) this.alphabet.observe((part[i] as ListedObject).key);
      this.alphabet.observe(last.key);
      range.pages.push(part);
      this.held++;
      range.pageFirst = first.key;
      range.after = last.key;
    }
    if (complete || !last) range.done = true;
  }
}

/** How many of `objects` (in key order) are at or before `hi`: a binary search, most pages keep all. */
function countUpTo(objects: readonly ListedObject[], hi: string): number {
  let lo = 0;
  let top = objects.length;
  while (lo < top) {
    const mid = (lo + top) >> 1;
    if (compareS3Keys((objects[mid] as ListedObject).key, hi) <= 0) lo = mid + 1;
    else top = mid;
  }
  return lo;
}
