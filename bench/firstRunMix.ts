import {
  CreateBucketCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type PutObjectCommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import type { S3ObjectEvent } from '../src/intake/parseS3Event.js';
import { S3ObjectStore } from '../src/s3/S3ObjectStore.js';
import { AdaptiveFirstRun } from '../src/worker/adaptiveFirstRun.js';
import { defineWorker, type FirstRun, type WorkerDefinition } from '../src/worker/defineWorker.js';
import { processObject } from '../src/worker/processObject.js';
import { costPerMillionItems } from './awsCost.js';

/** The workloads of issue 32, each judged on its own. */
export const MIX_WORKLOADS = ['append', 'mutable', 'reupload'] as const;
export type MixWorkload = (typeof MIX_WORKLOADS)[number];
/**
 * Each run of a workload: the worker's `firstRun`, and `adaptive-probe`, the adaptive first run with
 * `unknownPrefix: 'check'` (a prefix's first delivery in a sandbox probes with the HEAD), measured as
 * the option beside the default.
 */
export type MixRun = FirstRun | 'adaptive-probe';
/**
 * Runs judged on their own, not as workloads: `overwrite`, every item an overwrite of an output
 * another sandbox built; `duplicate-after-overwrite`, S3's duplicates of objects another sandbox
 * built, delivered to a sandbox that has seen an overwrite under their prefix.
 */
type ExtraWorkload = 'overwrite' | 'duplicate-after-overwrite';
const MIX_RUNS: readonly MixRun[] = ['create', 'check', 'adaptive', 'adaptive-probe'];

/** One workload through one `firstRun`: S3 requests and their cost per item. */
export interface FirstRunMixFigures {
  readonly workload: MixWorkload | ExtraWorkload;
  readonly firstRun: MixRun;
  readonly items: number;
  /** S3 requests of the deliveries, by operation (uploads and the state before are not counted). */
  readonly operations: Readonly<Record<string, number>>;
  readonly requestsPerItem: number;
  /** USD per million items, S3 requests only, at the list prices (no Lambda compute: not measured here). */
  readonly s3UsdPerMillion: number;
}

/** Per workload: each firstRun's figures, and whether 'adaptive' is within 5 % of the cheaper fixed path. */
export interface FirstRunMixResult {
  readonly figures: readonly FirstRunMixFigures[];
  /**
   * Every item an overwrite of an output another sandbox built (`overwrite-requests`), through each
   * fixed path: the requests an overwrite costs when created first and when checked first.
   */
  readonly overwrite?: { readonly create: FirstRunMixFigures; readonly check: FirstRunMixFigures };
  /**
   * S3's duplicates delivered to a sandbox that has seen an overwrite under their prefix, through the
   * default first run (`requests-per-duplicate`: 1 there).
   */
  readonly duplicateAfterOverwrite?: FirstRunMixFigures;
  readonly verdicts: readonly {
    readonly workload: MixWorkload;
    readonly adaptive: number;
    readonly cheaperFixed: number;
    readonly bound: number;
    readonly met: boolean;
    /** The same judgement of `adaptive-probe` (`unknownPrefix: 'check'`), the option beside the default. */
    readonly probe: number;
    readonly probeMet: boolean;
  }[];
}

/**
 * The adaptive first run against both fixed paths, on issue 32's workloads, as one warm sandbox sees
 * them (S3's fresh deliveries one after another, a standard queue: processObject with createFirst,
 * removalsLookAgain and one policy for the whole run), against the emulator on a versioned input
 * bucket, counting the S3 requests of the deliveries:
 *
 * - append: 99 % new objects, 1 % S3 duplicates (an event delivered again);
 * - mutable: 80 % new objects, 20 % overwrites of inputs another sandbox built;
 * - reupload: the same files uploaded again (same bytes, new versions) after another sandbox built them.
 *
 * The figure judged is the S3 request cost per item (the bench's side-by-side section has the Lambda
 * compute; the first run changes requests, not the transform's CPU, except for a read in vain).
 *
 * @example
 * const mix = await measureFirstRunMix({ endpoint, items: 200, log: console.error });
 */
export async function measureFirstRunMix(options: {
  readonly endpoint: string;
  readonly items: number;
  readonly log: (line: string) => void;
}): Promise<FirstRunMixResult> {
  const figures: FirstRunMixFigures[] = [];
  for (const workload of MIX_WORKLOADS) {
    for (const firstRun of MIX_RUNS) {
      const result = await runMix(options.endpoint, workload, firstRun, options.items);
      options.log(`first-run mix: ${workload}, ${firstRun}: ${result.requestsPerItem} S3 requests per item`);
      figures.push(result);
    }
  }
  // Overwrites alone, per fixed path: what `overwrite-requests` judges (4 checked first, 5 created first).
  const overwrite = {
    create: await runMix(options.endpoint, 'overwrite', 'create', options.items),
    check: await runMix(options.endpoint, 'overwrite', 'check', options.items),
  };
  options.log(
    `first-run mix: overwrites alone: ${overwrite.create.requestsPerItem} S3 requests per item created first, ` +
      `${overwrite.check.requestsPerItem} checked first`,
  );
  const duplicateAfterOverwrite = await runMix(
    options.endpoint,
    'duplicate-after-overwrite',
    'adaptive',
    options.items,
  );
  options.log(
    `first-run mix: S3's duplicates on a prefix seen overwritten: ${duplicateAfterOverwrite.requestsPerItem} S3 requests per item`,
  );
  const verdicts = MIX_WORKLOADS.map((workload) => {
    const cost = (firstRun: MixRun) =>
      figures.find((f) => f.workload === workload && f.firstRun === firstRun)?.s3UsdPerMillion ?? Number.NaN;
    const cheaperFixed = Math.min(cost('create'), cost('check'));
    const bound = round(cheaperFixed * 1.05);
    const [adaptive, probe] = [cost('adaptive'), cost('adaptive-probe')];
    return { workload, adaptive, cheaperFixed, bound, met: adaptive <= bound, probe, probeMet: probe <= bound };
  });
  return { figures, overwrite, duplicateAfterOverwrite, verdicts };
}

async function runMix(endpoint: string, workload: MixWorkload | ExtraWorkload, firstRun: MixRun, items: number) {
  const client = () => new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1 });
  const uploads = client();
  const counted = client();
  const operations: Record<string, number> = {};
  let counting = false;
  counted.middlewareStack.add(
    (next, context) => async (args) => {
      if (counting) {
        const name = `S3:${String(context.commandName).replace(/Command$/, '')}`;
        operations[name] = (operations[name] ?? 0) + 1;
      }
      return next(args);
    },
    { step: 'initialize', name: 'countFirstRunMix' },
  );
  const suffix = `${workload}-${firstRun}-${Date.now().toString(36)}`;
  const input = `mix-in-${suffix}`;
  const output = `mix-out-${suffix}`;
  await uploads.send(new CreateBucketCommand({ Bucket: input }));
  await uploads.send(new PutBucketVersioningCommand({ Bucket: input, VersioningConfiguration: { Status: 'Enabled' } }));
  await uploads.send(new CreateBucketCommand({ Bucket: output }));
  const worker = mixWorker(output, firstRun === 'adaptive-probe' ? 'adaptive' : firstRun);
  const store = new S3ObjectStore(counted);
  const sandbox = {
    store,
    freshDelivery: true,
    createFirst: true,
    removalsLookAgain: true,
    firstRunPolicy: new AdaptiveFirstRun(firstRun === 'adaptive-probe' ? { unknownPrefix: 'check' } : {}),
  };
  const upload = async (key: string, body: string): Promise<S3ObjectEvent> => {
    const out: PutObjectCommandOutput = await uploads.send(
      new PutObjectCommand({ Bucket: input, Key: key, Body: body }),
    );
    return {
      bucket: input,
      key,
      eventName: 'ObjectCreated:Put',
      eTag: (out.ETag ?? '').replace(/"/g, ''),
      size: Buffer.byteLength(body),
      ...(out.VersionId ? { versionId: out.VersionId } : {}),
    };
  };
  // The state before: outputs another sandbox built (its own policy, not counted).
  const before = async (keys: string[]) => {
    const other = { store, freshDelivery: true, createFirst: true, removalsLookAgain: true };
    const events: S3ObjectEvent[] = [];
    for (const key of keys) {
      const event = await upload(key, `v1 ${key}\n`);
      await processObject(worker, event, other);
      events.push(event);
    }
    return events;
  };
  const deliveries: (() => Promise<S3ObjectEvent>)[] = [];
  if (workload === 'append') {
    let last: S3ObjectEvent | undefined;
    for (let i = 0; i < items; i++) {
      if (i % 100 === 99 && last) {
        const again = last;
        deliveries.push(async () => again);
      } else {
        deliveries.push(async () => {
          last = await upload(`data/new-${i}.csv`, `row ${i}\n`);
          return last;
        });
      }
    }
  } else if (workload === 'mutable') {
    const overwritten = Array.from({ length: Math.ceil(items / 5) }, (_, i) => `data/kept-${i}.csv`);
    await before(overwritten);
    for (let i = 0; i < items; i++) {
      deliveries.push(
        i % 5 === 4
          ? () => upload(overwritten[Math.floor(i / 5)] as string, `v2 ${i}\n`)
          : () => upload(`data/new-${i}.csv`, `row ${i}\n`),
      );
    }
  } else if (workload === 'duplicate-after-overwrite') {
    const keys = Array.from({ length: items + 1 }, (_, i) => `data/seen-${i}.csv`);
    const [overwritten, ...events] = await before(keys);
    // This sandbox sees one overwrite under the prefix (not counted); then S3 delivers the others' events again.
    await processObject(worker, await upload(overwritten?.key as string, 'v2\n'), sandbox);
    for (const event of events) deliveries.push(async () => event);
  } else if (workload === 'overwrite') {
    const keys = Array.from({ length: items }, (_, i) => `data/kept-${i}.csv`);
    await before(keys);
    for (const [i, key] of keys.entries()) deliveries.push(() => upload(key, `v2 ${i}\n`));
  } else {
    const keys = Array.from({ length: items }, (_, i) => `data/daily-${i}.csv`);
    await before(keys);
    for (const key of keys) deliveries.push(() => upload(key, `v1 ${key}\n`));
  }
  for (const delivery of deliveries) {
    const event = await delivery();
    counting = true;
    await processObject(worker, event, sandbox);
    counting = false;
  }
  uploads.destroy();
  counted.destroy();
  const requests = Object.values(operations).reduce((a, b) => a + b, 0);
  return {
    workload,
    firstRun,
    items,
    operations,
    requestsPerItem: round(requests / items),
    s3UsdPerMillion: round(costPerMillionItems(operations, items).s3),
  };
}

function mixWorker(outputBucket: string, firstRun: FirstRun): WorkerDefinition {
  return defineWorker({
    name: 'mix',
    codeVersion: 'mix@1',
    outputBucket,
    outputKey: (s) => `out/${s.key}`,
    firstRun,
    async transform({ text }, { output }) {
      for await (const chunk of text()) await output.write(chunk.toUpperCase());
      return {};
    },
  });
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
