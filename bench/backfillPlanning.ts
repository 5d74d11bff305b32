import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { BackfillMode, planBackfill } from '../app/backfill/planBackfill.js';
import { SUMMARIZE_CODE_VERSION } from '../app/partition/codeVersion.js';
import { judgePartition } from '../app/partition/judgePartition.js';
import { listPartitions } from '../app/partition/listPartitions.js';
import { S3PartitionStore } from '../app/partition/S3PartitionStore.js';
import { summaryLayout } from '../app/partition/summaryLayout.js';
import { topology } from '../app/topology.js';
import type { AwsClients } from '../src/aws/clients.js';
import { mapWithConcurrency } from '../src/batch/mapWithConcurrency.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';

/** Requests and time of one way to plan a backfill. */
export interface PlanningCost {
  readonly requests: number;
  readonly ms: number;
}

/** Backfill planning over `items` normalized outputs spread over `days` daily partitions. */
export interface BackfillPlanningResult {
  readonly items: number;
  readonly days: number;
  /** The per-item done-check: one HEAD per output. */
  readonly headPerItem: PlanningCost;
  /** Listing the outputs' prefix: keys and ETags, 1,000 per ListObjectsV2 page. */
  readonly listing: PlanningCost;
  /**
   * rerun's backfill planner (app/backfill, issue 5): listPartitions (normalized, quarantine and
   * summaries listings of the window) + judgePartition + planBackfill, no per-partition request.
   */
  readonly planner: PlanningCost & { readonly tasks: number; readonly partitions: number };
  /** headPerItem.requests / planner.requests. */
  readonly ratio: number;
}

/**
 * Measures backfill planning for `items` outputs: one HEAD per item (what a per-item done-check
 * costs) versus the bulk done-check of the backfill planner, which lists the window's prefixes
 * (keys + ETags, 1,000 per request) and decides per partition without a HEAD.
 *
 * @example
 * const result = await measureBackfillPlanning({ clients, items: 10_000, days: 30 });
 * result.ratio; // ~800
 */
export async function measureBackfillPlanning(options: {
  readonly clients: AwsClients;
  readonly items: number;
  readonly days: number;
  readonly log?: (line: string) => void;
}): Promise<BackfillPlanningResult> {
  const { clients, items, days } = options;
  const log = options.log ?? (() => {});
  const bucket = `bench-plan-${randomBytes(3).toString('hex')}`;
  const inputBucket = `${bucket}-in`;
  await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const day = (i: number) => `2026-01-${String((i % days) + 1).padStart(2, '0')}`;
  const keys = Array.from(
    { length: items },
    (_, i) => `${topology.outputPrefix}${inputBucket}/dt=${day(i)}/file-${String(i).padStart(6, '0')}.csv.ndjson`,
  );
  log(`backfill planning: writing ${items} outputs over ${days} days...`);
  await mapWithConcurrency(keys, 16, (Key) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: '{"id":"1"}\n' })),
  );

  log('backfill planning: one HEAD per item...');
  const store = new S3ObjectStore(clients.s3);
  let started = Date.now();
  const heads = await mapWithConcurrency(keys, 16, (key) => store.head(bucket, key));
  const headPerItem = { requests: heads.length, ms: Date.now() - started };
  if (heads.some((h) => h === undefined)) throw new Error('an output written for the benchmark is missing');

  log('backfill planning: listing the prefix...');
  started = Date.now();
  let pages = 0;
  let listed = 0;
  let token: string | undefined;
  do {
    const page = await clients.s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: `${topology.outputPrefix}${inputBucket}/`,
        ContinuationToken: token,
      }),
    );
    pages++;
    listed += page.KeyCount ?? 0;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const listing = { requests: pages, ms: Date.now() - started };
  if (listed !== items) throw new Error(`the listing returned ${listed} keys, expected ${items}`);

  log("backfill planning: rerun's planner (rerun backfill --dry-run)...");
  const partitionStore = new S3PartitionStore(clients.s3);
  started = Date.now();
  const listings = await listPartitions({
    store: partitionStore,
    bucket,
    layout: summaryLayout(inputBucket),
    from: day(0),
    to: day(days - 1),
  });
  const plan = planBackfill(
    listings.map((l) => judgePartition(l, SUMMARIZE_CODE_VERSION)),
    BackfillMode.MISSING,
  );
  const planner = {
    requests: partitionStore.listRequests,
    ms: Date.now() - started,
    tasks: plan.tasks.length,
    partitions: plan.partitions.length,
  };
  if (plan.partitions.reduce((n, p) => n + p.inputs, 0) !== items) {
    throw new Error('the planner did not see every output of the window');
  }
  return {
    items,
    days,
    headPerItem,
    listing,
    planner,
    ratio: Math.round((headPerItem.requests / Math.max(1, planner.requests)) * 10) / 10,
  };
}
