import { setTimeout as delay } from 'node:timers/promises';
import type { ListedObject } from '../app/reprocess/planReprocess.js';
import { compareS3Keys } from '../app/reprocess/s3KeyOrder.js';
import {
  type ListPage,
  type ListPageInput,
  type ListPageOutput,
  listSharded,
} from '../app/reprocess/shardedListing.js';
import { type EngineCost, reprocessEngineCosts } from './reprocessEngineCost.js';

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
  private readonly objects: ListedObject[];
  requests = 0;
  inFlight = 0;
  maxInFlight = 0;

  /** `pageSize` below S3's 1,000 lets a test split ranges over a few keys. */
  constructor(
    keys: Iterable<string>,
    private readonly latencyMs: number,
    private readonly pageSize = 1000,
  ) {
    this.keys = [...new Set(keys)].sort(compareS3Keys);
    this.objects = this.keys.map((key) => ({ key, etag: 'e', size: 1, lastModified: 0 }));
  }

  readonly listPage: ListPage = async (input: ListPageInput) => {
    this.requests++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.latencyMs > 0) await delay(this.latencyMs);
      const after = input.ContinuationToken ?? input.StartAfter;
      const start = Math.max(
        after === undefined ? 0 : upperBound(this.keys, after),
        lowerBound(this.keys, input.Prefix),
      );
      const end = prefixEnd(this.keys, input.Prefix);
      const stop = Math.min(end, start + Math.min(input.MaxKeys ?? 1000, this.pageSize));
      // The listed objects are built once: the bench measures the client, not this stand-in's CPU.
      const objects = start < stop ? this.objects.slice(start, stop) : [];
      return { objects, nextToken: stop < end ? this.keys[stop - 1] : undefined };
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

/** The index past the last key that starts with `prefix` (those keys are contiguous in key order). */
function prefixEnd(keys: readonly string[], prefix: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const key = keys[mid] as string;
    if (key.startsWith(prefix) || compareS3Keys(key, prefix) < 0) lo = mid + 1;
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
  /** ListObjectsV2 requests: full pages, and (sharded) the short ones where a range ends. */
  readonly requests: number;
  /** Ranges split off while listing (sharded). */
  readonly splits: number;
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
   * Wall times and requests scaled to 1 M and 100 M keys: both are linear in the count (a sharded
   * listing has no fixed probing cost; its ranges are split while they are listed).
   */
  /**
   * Reprocessing 100 M objects by each engine (USD, list prices): the plan's LIST requests as
   * counted here (sharded, input and output listings), SQS and Lambda requests per object, a Batch
   * Operations job's fees (bench/reprocessEngineCost.ts).
   */
  readonly cost100M: {
    readonly sqs: EngineCost;
    readonly batchOperationsPlanned: EngineCost;
    readonly batchOperationsGenerated: EngineCost;
  };
  readonly extrapolated: {
    readonly at1M: {
      readonly sequentialMinutes: number;
      readonly shardedMinutes: number;
      readonly sequentialRequests: number;
      readonly shardedRequests: number;
    };
    readonly at100M: {
      readonly sequentialHours: number;
      readonly shardedHours: number;
      readonly sequentialRequests: number;
      readonly shardedRequests: number;
    };
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
    const counters = { splits: 0 };
    const stream =
      shards === 1
        ? sequential(bucket.listPage, 'incoming/')
        : listSharded(bucket.listPage, 'bench', 'incoming/', { shards, counters });
    for await (const object of stream) seen.push(object.key);
    return {
      run: {
        shards,
        ms: Math.round(performance.now() - started),
        requests: bucket.requests,
        splits: counters.splits,
        maxInFlight: bucket.maxInFlight,
      },
      digest: seen,
    };
  };
  const one = await run(1);
  const many = await run(options.shards);
  const sameOrder = one.digest.length === many.digest.length && one.digest.every((k, i) => k === many.digest[i]);
  const per = (ms: number, n: number) => (ms * n) / options.keys;
  const scaled = (r: ListingRun, n: number) => Math.round((r.requests * n) / options.keys);
  return {
    keys: options.keys,
    listLatencyMs: latencyMs,
    sequential: one.run,
    sharded: many.run,
    sameOrder,
    speedup: Math.round((one.run.ms / Math.max(1, many.run.ms)) * 10) / 10,
    // Two listings per plan (inputs and outputs), each at the sharded listing's requests per key.
    cost100M: reprocessEngineCosts(1e8, (2 * many.run.requests) / options.keys),
    extrapolated: {
      at1M: {
        sequentialMinutes: round1(per(one.run.ms, 1e6) / 60_000),
        shardedMinutes: round1(per(many.run.ms, 1e6) / 60_000),
        sequentialRequests: scaled(one.run, 1e6),
        shardedRequests: scaled(many.run, 1e6),
      },
      at100M: {
        sequentialHours: round1(per(one.run.ms, 1e8) / 3_600_000),
        shardedHours: round1(per(many.run.ms, 1e8) / 3_600_000),
        sequentialRequests: scaled(one.run, 1e8),
        shardedRequests: scaled(many.run, 1e8),
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
