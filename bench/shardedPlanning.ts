import { setTimeout as delay } from 'node:timers/promises';
import type { ListedObject } from '../app/reprocess/planReprocess.js';
import { compareS3Keys } from '../app/reprocess/s3KeyOrder.js';
import {
  type ListPage,
  type ListPageInput,
  type ListPageOutput,
  listSharded,
} from '../app/reprocess/shardedListing.js';

/**
 * The modelled latency of one ListObjectsV2 request of up to 1,000 keys. A model, as the first-run
 * section's MODELLED_AWS_LATENCY_MS is: LIST pages carry up to 1,000 entries (about 250 KB of XML),
 * so one costs more than the 25 ms of a HEAD; the speed-up of sharding does not depend on the value
 * (both sides pay it per request), only the wall times do.
 */
export const MODELLED_LIST_LATENCY_MS = 60;

/**
 * An in-memory bucket answering ListObjectsV2 as S3 does (Prefix, StartAfter, ContinuationToken,
 * MaxKeys up to 1,000, keys in UTF-8 binary order), after a modelled latency. It counts requests
 * and the most that were in flight at once.
 *
 * @example
 * const bucket = new InMemoryListing(['incoming/a.csv'], 0);
 * for await (const o of listSharded(bucket.listPage, 'b', 'incoming/', { shards: 4 })) console.log(o.key);
 */
export class InMemoryListing {
  readonly keys: string[];
  requests = 0;
  probes = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** When the first full page was asked for (performance.now()): the end of a sharded listing's probing. */
  firstPageAt?: number;
  /** Keys hidden from listings (not from probes), as if deleted between probing and listing. */
  hidden?: (key: string) => boolean;

  constructor(
    keys: Iterable<string>,
    private readonly latencyMs: number,
  ) {
    this.keys = [...new Set(keys)].sort(compareS3Keys);
  }

  readonly listPage: ListPage = async (input: ListPageInput) => {
    this.requests++;
    if (input.MaxKeys === 1) this.probes++;
    else this.firstPageAt ??= performance.now();
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.latencyMs > 0) await delay(this.latencyMs);
      const after = input.ContinuationToken ?? input.StartAfter;
      let i = Math.max(after === undefined ? 0 : upperBound(this.keys, after), lowerBound(this.keys, input.Prefix));
      const max = Math.min(input.MaxKeys ?? 1000, 1000);
      const objects: ListedObject[] = [];
      while (i < this.keys.length && objects.length < max) {
        const key = this.keys[i] as string;
        if (!key.startsWith(input.Prefix)) {
          if (compareS3Keys(key, input.Prefix) > 0) break;
          i++;
          continue;
        }
        if (input.MaxKeys === 1 || !this.hidden?.(key)) objects.push({ key, etag: 'e', size: 1, lastModified: 0 });
        i++;
      }
      const more = i < this.keys.length && (this.keys[i] as string).startsWith(input.Prefix);
      return { objects, nextToken: more ? this.keys[i - 1] : undefined };
    } finally {
      this.inFlight--;
    }
  };
}

/** The index of the first key not before `key` (binary search, S3 order). */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareS3Keys(keys[mid] as string, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The index of the first key after `key` (binary search, S3 order). */
function upperBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareS3Keys(keys[mid] as string, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One way of listing, measured. */
export interface ListingRun {
  readonly shards: number;
  readonly ms: number;
  /** ListObjectsV2 requests: pages, and (sharded) the MaxKeys-1 probes that found the ranges. */
  readonly requests: number;
  readonly probes: number;
  /** Time spent finding the key ranges, before the first page was asked for. */
  readonly probeMs: number;
  readonly maxInFlight: number;
}

/** The `sharding` section: planning's listing of `keys` inputs, sequential against sharded. */
export interface ShardedPlanningResult {
  readonly keys: number;
  readonly listLatencyMs: number;
  readonly sequential: ListingRun;
  readonly sharded: ListingRun;
  /** Both listings yielded the same keys in the same order (what makes the plans equal). */
  readonly sameOrder: boolean;
  readonly speedup: number;
  /**
   * Wall times scaled to 1 M and 100 M keys: pages (and their time) are linear in the count; the
   * probing of a sharded listing is taken as fixed (it depends on the key layout, not the count).
   */
  readonly extrapolated: {
    readonly at1M: { readonly sequentialMinutes: number; readonly shardedMinutes: number };
    readonly at100M: { readonly sequentialHours: number; readonly shardedHours: number };
  };
}

/**
 * The keys of the bench: `incoming/dt=2026-01-DD/file-NNNNNNN.csv` over 28 days, as the reprocess
 * section writes them.
 */
export function benchKeys(count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `incoming/dt=2026-01-${String((i % 28) + 1).padStart(2, '0')}/file-${String(i).padStart(7, '0')}.csv`,
  );
}

/**
 * Lists `keys` inputs from an in-memory bucket under {@link MODELLED_LIST_LATENCY_MS}, once in
 * sequence (one page after the other, as S3ListingReader.list does, with its one-page prefetch)
 * and once as `shards` key ranges at once, and checks both yield the same keys in the same order.
 *
 * @example
 * const result = await measureShardedPlanning({ keys: 100_000, shards: 16 });
 */
export async function measureShardedPlanning(options: {
  readonly keys: number;
  readonly shards: number;
  readonly latencyMs?: number;
  readonly log?: (line: string) => void;
}): Promise<ShardedPlanningResult> {
  const latencyMs = options.latencyMs ?? MODELLED_LIST_LATENCY_MS;
  const log = options.log ?? (() => {});
  const keys = benchKeys(options.keys);
  const run = async (shards: number): Promise<{ run: ListingRun; digest: string[] }> => {
    const bucket = new InMemoryListing(keys, latencyMs);
    log(`sharding: listing ${options.keys} keys with ${shards} shard(s) at ${latencyMs} ms per LIST...`);
    const started = performance.now();
    const seen: string[] = [];
    const stream =
      shards === 1
        ? sequential(bucket.listPage, 'incoming/')
        : listSharded(bucket.listPage, 'bench', 'incoming/', { shards });
    for await (const object of stream) seen.push(object.key);
    return {
      run: {
        shards,
        ms: Math.round(performance.now() - started),
        requests: bucket.requests,
        probes: bucket.probes,
        probeMs: Math.round((bucket.firstPageAt ?? started) - started),
        maxInFlight: bucket.maxInFlight,
      },
      digest: seen,
    };
  };
  const one = await run(1);
  const many = await run(options.shards);
  const sameOrder = one.digest.length === many.digest.length && one.digest.every((k, i) => k === many.digest[i]);
  const per = (ms: number, n: number) => (ms * n) / options.keys;
  const shardedAt = (n: number) => many.run.probeMs + per(many.run.ms - many.run.probeMs, n);
  return {
    keys: options.keys,
    listLatencyMs: latencyMs,
    sequential: one.run,
    sharded: many.run,
    sameOrder,
    speedup: Math.round((one.run.ms / Math.max(1, many.run.ms)) * 10) / 10,
    extrapolated: {
      at1M: {
        sequentialMinutes: round1(per(one.run.ms, 1e6) / 60_000),
        shardedMinutes: round1(shardedAt(1e6) / 60_000),
      },
      at100M: {
        sequentialHours: round1(per(one.run.ms, 1e8) / 3_600_000),
        shardedHours: round1(shardedAt(1e8) / 3_600_000),
      },
    },
  };
}

/** The sequential listing: a page, then the next (with S3ListingReader.list's one-page prefetch). */
async function* sequential(listPage: ListPage, prefix: string): AsyncGenerator<ListedObject> {
  let pending: ReturnType<ListPage> | undefined = listPage({ Bucket: 'bench', Prefix: prefix });
  while (pending) {
    const page: ListPageOutput = await pending;
    pending = page.nextToken
      ? listPage({ Bucket: 'bench', Prefix: prefix, ContinuationToken: page.nextToken })
      : undefined;
    yield* page.objects;
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
