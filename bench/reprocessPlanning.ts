import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { topology } from '../app/topology.js';
import type { AwsClients } from '../src/aws/clients.js';
import { mapWithConcurrency } from '../src/batch/mapWithConcurrency.js';
import { buildOutputMetadata } from '../src/done/outputMetadata.js';
import { NORMALIZE_CODE_VERSION } from '../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';

const run = promisify(execFile);

/** One planning run, measured in a process of its own. */
export interface PlanRun {
  readonly ms: number;
  readonly requests: { readonly list: number; readonly lookup: number; readonly head: number };
  readonly counts: Record<string, number>;
  readonly planned: number;
  readonly peakRssMiB: number;
}

/** `rerun reprocess` planning over `items` inputs (issue 14, item 5). */
export interface ReprocessPlanningResult {
  readonly items: number;
  /** Outputs deleted (missing) and orphan outputs added, to give the plan something to find. */
  readonly missing: number;
  readonly orphans: number;
  /** A dry run from listings only, and the same with --verify (one HEAD per current-looking output). */
  readonly listing: PlanRun;
  readonly verify: PlanRun;
  /** The same listing plan at a tenth of the objects: peak RSS must not grow with the count. */
  readonly small: PlanRun & { readonly items: number };
  /** Each figure scaled to 100 million inputs (linear in the object count; RSS: measured flat). */
  readonly at100M: {
    readonly listRequests: number;
    /** Key lookups (one per orphan, prefix input or long key): 1 % orphans here. */
    readonly lookups: number;
    readonly listingHours: number;
    readonly verifyHeads: number;
    readonly verifyHours: number;
    readonly peakRssMiB: number;
  };
}

/**
 * Measures reprocess planning: `items` inputs under `incoming/`, their normalized outputs as the
 * worker writes them (metadata and stored SHA-256, so --verify's done-check passes), a share of the
 * outputs deleted and orphans added. The planner runs as `rerun reprocess --dry-run` would, in a
 * child process (its peak RSS is the planner's), with and without --verify, and at a tenth of the size.
 *
 * @example
 * const result = await measureReprocessPlanning({ clients, endpoint, items: 100_000 });
 */
export async function measureReprocessPlanning(options: {
  readonly clients: AwsClients;
  readonly endpoint: string;
  readonly items: number;
  readonly log?: (line: string) => void;
}): Promise<ReprocessPlanningResult> {
  const { clients, items } = options;
  const log = options.log ?? (() => {});
  const store = new S3ObjectStore(clients.s3);
  const populate = async (count: number) => {
    const id = randomBytes(3).toString('hex');
    const inputBucket = `bench-rp-${id}-in`;
    const outputBucket = `bench-rp-${id}-out`;
    await clients.s3.send(new CreateBucketCommand({ Bucket: inputBucket }));
    await clients.s3.send(new CreateBucketCommand({ Bucket: outputBucket }));
    const missing = Math.floor(count / 20);
    const orphans = Math.floor(count / 100);
    const indexes = Array.from({ length: count + orphans }, (_, i) => i);
    let done = 0;
    log(`reprocess planning: writing ${count} inputs and ${count - missing + orphans} outputs...`);
    await mapWithConcurrency(indexes, 16, async (i) => {
      const key = `${topology.inputPrefix}dt=2026-01-${String((i % 28) + 1).padStart(2, '0')}/file-${String(i).padStart(7, '0')}.csv`;
      const body = `id,amount\n${i},1\n`;
      let etag = createHash('md5').update(body).digest('hex');
      if (i < count) {
        const out = await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: key, Body: body }));
        etag = (out.ETag ?? '').replace(/"/g, '');
      }
      if (i >= missing) {
        const bytes = new TextEncoder().encode(`{"id":"${i}","amount":1}\n`);
        const sha256Base64 = createHash('sha256').update(bytes).digest('base64');
        await store.put(
          outputBucket,
          `${topology.outputPrefix}${inputBucket}/${key.slice(topology.inputPrefix.length)}.ndjson`,
          bytes,
          {
            condition: { ifNoneMatch: '*' },
            sha256Base64,
            metadata: buildOutputMetadata({
              source: { bucket: inputBucket, key, etag },
              codeVersion: NORMALIZE_CODE_VERSION,
              integrity: { kind: 'sha256', sha256Base64, bytes: bytes.byteLength },
              sideOutputs: {},
            }),
          },
        );
      }
      if (++done % 20_000 === 0) log(`  ${done}/${indexes.length}`);
    });
    return { inputBucket, outputBucket, missing, orphans };
  };
  const plan = async (buckets: { inputBucket: string; outputBucket: string }, verify: boolean): Promise<PlanRun> => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/fixtures/reprocessPlanOnce.ts'], {
      env: {
        ...process.env,
        AWS_ENDPOINT_URL: options.endpoint,
        PLAN_INPUT_BUCKET: buckets.inputBucket,
        PLAN_OUTPUT_BUCKET: buckets.outputBucket,
        PLAN_VERIFY: verify ? '1' : '',
      },
      maxBuffer: 1024 * 1024,
    });
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as PlanRun;
  };

  const smallItems = Math.max(1000, Math.floor(items / 10));
  const smallBuckets = await populate(smallItems);
  log(`reprocess planning: planning ${smallItems} inputs (dry run)...`);
  const small = { ...(await plan(smallBuckets, false)), items: smallItems };
  const buckets = await populate(items);
  log(`reprocess planning: planning ${items} inputs (dry run)...`);
  const listing = await plan(buckets, false);
  log(`reprocess planning: planning ${items} inputs with --verify...`);
  const verify = await plan(buckets, true);
  if (listing.counts.missing !== buckets.missing || listing.counts.orphan !== buckets.orphans) {
    throw new Error(
      `the plan found ${JSON.stringify(listing.counts)}, expected ${buckets.missing} missing, ${buckets.orphans} orphans`,
    );
  }
  if (verify.counts.current !== items - buckets.missing) {
    throw new Error(`--verify judged ${verify.counts.current} outputs current, expected ${items - buckets.missing}`);
  }
  const scale = 100_000_000 / items;
  const hours = (ms: number) => Math.round(((ms * scale) / 3_600_000) * 10) / 10;
  return {
    items,
    missing: buckets.missing,
    orphans: buckets.orphans,
    listing,
    verify,
    small,
    at100M: {
      listRequests: Math.round(listing.requests.list * scale),
      lookups: Math.round(listing.requests.lookup * scale),
      listingHours: hours(listing.ms),
      verifyHeads: Math.round(verify.requests.head * scale),
      verifyHours: hours(verify.ms),
      peakRssMiB: listing.peakRssMiB,
    },
  };
}
