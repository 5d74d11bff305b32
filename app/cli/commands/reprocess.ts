import type { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { RerunError } from '../../../src/errors.js';
import { createNormalizeWorker } from '../../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import { isProgressStep, renderProgressBar } from '../../backfill/progressBar.js';
import { codeVersionCutoff } from '../../reprocess/codeVersionCutoff.js';
import { InventoryManifestError, inventoryListing, parseInventoryManifest } from '../../reprocess/inventoryListing.js';
import { deterministicKeyMapping } from '../../reprocess/outputKeyMapping.js';
import {
  type ListedObject,
  parseReprocessMode,
  ReprocessMode,
  type ReprocessVerdict,
} from '../../reprocess/planReprocess.js';
import { type ReprocessResult, ReprocessWaitEnd, runReprocess } from '../../reprocess/runReprocess.js';
import { S3ListingReader } from '../../reprocess/S3ListingReader.js';
import { explainAwsError, requireBucket } from '../../status/pipelineResources.js';
import { type CliCommand, CliUsageError, integerOption } from '../command.js';
import {
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  stringOption,
  targetOptions,
  targetOrExit,
  workerQueueUrl,
} from '../pipelineTarget.js';

/** The output suffix of the normalize worker (src/normalize/normalizeWorker.ts). */
const NORMALIZE_SUFFIX = '.ndjson';

/** `rerun reprocess`: rerun the main stage over a prefix of the input bucket. */
export const command: CliCommand = {
  name: 'reprocess',
  summary: 'Rerun the main stage over a prefix: enqueue what is missing or stale',
  usage: 'rerun reprocess [--prefix P] [--mode MODE] [--verify] [--prune] [--wait] [options]',
  options: {
    prefix: {
      type: 'string',
      valueName: 'P',
      description: 'Input key prefix (default: incoming/)',
    },
    mode: {
      type: 'string',
      valueName: 'MODE',
      description: 'missing | stale (default: also outdated) | all',
    },
    verify: {
      type: 'boolean',
      description: 'HEAD each current-looking output: corrupt, old code',
    },
    prune: { type: 'boolean', description: 'Remove outputs of gone inputs (If-Match deletes)' },
    'dry-run': { type: 'boolean', description: 'Print the plan, send and delete nothing' },
    rate: { type: 'string', valueName: 'N', description: 'At most N messages (and deletes) per second' },
    wait: { type: 'boolean', description: 'Follow the planned inputs to their outcomes' },
    timeout: { type: 'string', valueName: 'SECONDS', description: 'With --wait, give up after this long' },
    // Hidden (no description): tuning for tests and slow links.
    'poll-interval': { type: 'string', valueName: 'MS' },
    'verify-concurrency': { type: 'string', valueName: 'N' },
    shards: {
      type: 'string',
      valueName: 'N',
      description: 'List N key ranges at once while planning (default: 1)',
    },
    'code-overlap': {
      type: 'string',
      valueName: 'SECONDS',
      description: 'Code rollout window (default: fn timeout + 60)',
    },
    manifest: {
      type: 'string',
      valueName: 'S3URL',
      description: 'Inputs from an S3 Inventory manifest.json (CSV)',
    },
    'output-manifest': {
      type: 'string',
      valueName: 'S3URL',
      description: "Outputs from the output bucket's inventory",
    },
    'queue-url': {
      type: 'string',
      valueName: 'URL',
      description: 'Work queue (default: $RERUN_QUEUE_URL or by name)',
    },
    'dlq-url': {
      type: 'string',
      valueName: 'URL',
      description: 'DLQ watched by --wait (default: $RERUN_DLQ_URL)',
    },
    ...targetOptions,
  },
  details: `Planning lists the inputs under the prefix and their outputs together, page
by page (a merge-join: memory does not grow with the object count), and
judges each input from the listings: missing (no output), stale (output older
than its input) or current, and each output whose input is gone (orphan).
--verify adds the worker's exact done-check for each output that looks current
(one HEAD: stored checksum, code version, the input ETag it was built from).
After a codeVersion bump the deployed worker's marker makes older outputs
old-code from the listing alone.

Each selected input becomes one S3-event-shaped message on the work queue (10
per batch); the worker's done-check absorbs repeats. An interrupted reprocess,
run again, plans only what is still to do; once it completed, the same
reprocess plans nothing (except --mode all).

Exit: 0 done (or planned, without --wait); 1 when --wait ends with inputs not
done (see rerun redrive) or times out; 130 when interrupted.

Examples:
  rerun reprocess --prefix incoming/dt=2026-11- --dry-run
  rerun reprocess --mode stale --verify --rate 50 --wait
  rerun reprocess --prune --dry-run`,
  async run({ values }, io) {
    const target = await targetOrExit(values, io, 'reprocess');
    if (typeof target === 'number') return target;
    const topology = target.topology;
    const prefix = stringOption(values, 'prefix') ?? topology.inputPrefix;
    if (!prefix.startsWith(topology.inputPrefix)) {
      throw new CliUsageError(
        `--prefix must start with the input prefix ${topology.inputPrefix} (got "${prefix}"): only keys there are processed.`,
      );
    }
    const modeText = stringOption(values, 'mode') ?? ReprocessMode.STALE;
    const mode = parseReprocessMode(modeText);
    if (!mode) throw new CliUsageError(`--mode must be missing, stale or all (got "${modeText}").`);
    const rate = integerOption(values, 'rate', { min: 1, max: 3000 });
    const timeoutSeconds = integerOption(values, 'timeout', { min: 1, max: 7 * 86_400 });
    const pollIntervalMs = integerOption(values, 'poll-interval', { min: 50, max: 600_000 });
    const verifyConcurrency = integerOption(values, 'verify-concurrency', { min: 1, max: 256 });
    const listShards = integerOption(values, 'shards', { min: 1, max: 64 });
    const overlapSeconds =
      integerOption(values, 'code-overlap', { min: 0, max: 86_400 }) ?? topology.normalize.functionTimeoutSeconds + 60;
    const json = values.json === true;
    const dryRun = values['dry-run'] === true;
    const human = (text: string) => {
      if (!json) io.stderr(text);
    };

    try {
      await requireInputBucket(target);
      await requireOutputBucket(target);
      const normalize = topology.normalize;
      const queueUrl = await workerQueueUrl(target, normalize, 'queue', stringOption(values, 'queue-url'), io.env);
      const dlqUrl = values.wait
        ? await workerQueueUrl(target, normalize, 'dlq', stringOption(values, 'dlq-url'), io.env)
        : undefined;
      // Planning streams (the plan's total is known only when the listings end): say what runs first.
      human(
        `Planning ${prefix} of ${target.inputBucket} (mode ${mode}${values.verify ? ', verify' : ''})` +
          `${dryRun ? ': dry run, nothing is sent' : ', enqueueing as it goes'}...\n`,
      );
      let lineOpen = false;
      let lastLogged = -1;
      const reader = new S3ListingReader(target.clients.s3);
      const worker = createNormalizeWorker({ outputBucket: target.outputBucket, prefixes: topology });
      // A code-version bump, from the markers the deployed worker writes (one listing request).
      const markerRoot = `${topology.codeVersionPrefix}${encodeURIComponent(worker.name)}/`;
      const markers: ListedObject[] = [];
      for await (const marker of reader.list(target.outputBucket, markerRoot)) markers.push(marker);
      const cutoff = codeVersionCutoff(markers, {
        prefix: topology.codeVersionPrefix,
        worker: worker.name,
        codeVersion: worker.codeVersion,
        overlapMs: overlapSeconds * 1000,
      });
      human(
        cutoff.state === 'known'
          ? `Code version ${cutoff.codeVersion} first ran at ${new Date(cutoff.since).toISOString()}: older outputs are old-code.\n`
          : `note: ${cutoff.reason}.\n`,
      );
      const listings = await inventoryListings(target, values, prefix, human);
      const result = await runReprocess({
        reader,
        ...(listings ? { listings } : {}),
        ...(cutoff.state === 'known' ? { codeCutoff: cutoff } : {}),
        store: new S3ObjectStore(target.clients.s3),
        sqs: target.clients.sqs,
        inputBucket: target.inputBucket,
        worker,
        mapping: deterministicKeyMapping({
          inputBucket: target.inputBucket,
          inputPrefix: topology.inputPrefix,
          outputPrefix: topology.outputPrefix,
          suffix: NORMALIZE_SUFFIX,
        }),
        // The quarantine side output, so --prune also finds quarantine objects whose main output is gone.
        sideMappings: [
          deterministicKeyMapping({
            inputBucket: target.inputBucket,
            inputPrefix: topology.inputPrefix,
            outputPrefix: topology.quarantinePrefix,
            suffix: NORMALIZE_SUFFIX,
          }),
        ],
        prefix,
        mode,
        verify: values.verify === true,
        ...(verifyConcurrency !== undefined ? { verifyConcurrency } : {}),
        ...(listShards !== undefined ? { listShards } : {}),
        dryRun,
        prune: values.prune === true,
        queueUrl,
        ...(dlqUrl ? { dlqUrl } : {}),
        ...(rate !== undefined ? { ratePerSecond: rate } : {}),
        wait: values.wait === true,
        ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
        ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
        signal: io.signal,
        onProgress: (p) => {
          if (dryRun) return;
          // The total is known once the listings end: until then, the bar is against what is planned so far.
          const line =
            `enqueued ${renderProgressBar(p.enqueued, p.planned, 20)}` +
            `${p.planComplete ? '' : ` | listing: ${p.listedInputs} inputs`}${p.pruned > 0 ? ` | pruned ${p.pruned}` : ''}`;
          if (io.isTTY) {
            human(`\r\x1b[2K${line}`);
            lineOpen = true;
          } else if (p.planComplete || (p.enqueued !== lastLogged && isProgressStep(p.enqueued, 10_000))) {
            lastLogged = p.enqueued;
            human(`${line}\n`);
          }
        },
        onWait: (p) => {
          const line =
            `${renderProgressBar(p.done, p.total, 20)} done | queued ${p.queued}, in flight ${p.inFlight}` +
            `${p.deadLettered > 0 ? `, dead-lettered ${p.deadLettered}` : ''} | ${Math.round(p.elapsedMs / 1000)} s`;
          if (io.isTTY) {
            human(`\r\x1b[2K${line}`);
            lineOpen = true;
          } else {
            human(`${line}\n`);
          }
        },
      }).catch((error: unknown) => {
        if (error instanceof RerunError) throw error;
        throw explainAwsError(error, {
          role: 'input bucket, output bucket or normalize queue',
          name: `${target.inputBucket} / ${target.outputBucket} / ${queueUrl}`,
          where: target.where,
          hint: 'Check the names and your permissions (ListBucket on both buckets, SendMessage on the queue).',
        });
      });
      if (lineOpen) human('\n');

      const summary = {
        prefix,
        mode,
        verify: result.verify,
        dryRun,
        planned: result.planned,
        enqueued: result.enqueued,
        pruned: result.pruned,
        kept: result.kept,
        sideOrphans: result.sideOrphans,
        interrupted: result.interrupted,
        counts: result.counts,
        requests: result.requests,
        codeVersion:
          cutoff.state === 'known'
            ? { version: cutoff.codeVersion, firstRan: new Date(cutoff.since).toISOString() }
            : { version: cutoff.codeVersion, unknown: cutoff.reason },
        ...(result.wait
          ? {
              waited: result.wait.ended,
              done: result.wait.done,
              remaining: result.wait.remaining,
              gone: result.wait.gone,
              deadLettered: result.wait.deadLettered,
              seconds: Math.round(result.wait.elapsedMs / 1000),
            }
          : {}),
      };
      human(describeResult(result, target));
      if (json) io.stdout(JSON.stringify({ ...summary, plan: result.plan, sample: result.sample.map(brief) }));
      else io.stdout(`SUMMARY ${JSON.stringify(summary)}`);
      const ended = result.wait?.ended;
      if (result.interrupted || ended === ReprocessWaitEnd.INTERRUPTED) return 130;
      return ended === ReprocessWaitEnd.INCOMPLETE || ended === ReprocessWaitEnd.TIMEOUT ? 1 : 0;
    } catch (error) {
      return reportCommandError(error, io, 'reprocess', json);
    }
  },
};

/**
 * `--manifest` / `--output-manifest`: the inputs (and outputs) from S3 Inventory reports instead
 * of ListObjectsV2. Each manifest must describe the bucket it stands for.
 */
async function inventoryListings(
  target: PipelineTarget,
  values: Record<string, unknown>,
  prefix: string,
  human: (text: string) => void,
): Promise<{ inputs?: () => AsyncIterable<ListedObject>; outputs?: () => AsyncIterable<ListedObject> } | undefined> {
  const s3 = target.clients.s3;
  const open = async (option: string, bucket: string, keyPrefix: string) => {
    const url = stringOption(values as Parameters<typeof stringOption>[0], option);
    if (!url) return undefined;
    const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
    if (!match)
      throw new CliUsageError(`--${option} must be an s3://bucket/key URL of a manifest.json (got "${url}").`);
    const [, manifestBucket, manifestKey] = match as unknown as [string, string, string];
    const out = await s3.send(new GetObjectCommand({ Bucket: manifestBucket, Key: manifestKey }));
    const manifest = parseInventoryManifest(
      await (out.Body as { transformToString(): Promise<string> }).transformToString(),
    );
    if (manifest.sourceBucket !== bucket) {
      throw new InventoryManifestError(
        `--${option} ${url} is an inventory of ${manifest.sourceBucket}, not of ${bucket}: pass that bucket's inventory.`,
      );
    }
    human(
      `${option}: inventory of ${bucket} from ${new Date(manifest.creationTimestamp).toISOString()} ` +
        `(${manifest.files.length} data file(s)); objects changed since are not in it.\n`,
    );
    return () =>
      inventoryListing({
        manifest,
        prefix: keyPrefix,
        read: async (b, k) => (await s3.send(new GetObjectCommand({ Bucket: b, Key: k }))).Body as Readable,
      });
  };
  const inputs = await open('manifest', target.inputBucket, prefix);
  const outputs = await open(
    'output-manifest',
    target.outputBucket,
    `${target.topology.outputPrefix}${target.inputBucket}/${prefix.slice(target.topology.inputPrefix.length)}`,
  );
  if (!inputs && !outputs) return undefined;
  return { ...(inputs ? { inputs } : {}), ...(outputs ? { outputs } : {}) };
}

async function requireInputBucket(target: PipelineTarget): Promise<void> {
  await requireBucket(target.clients.s3, {
    role: 'input bucket',
    name: target.inputBucket,
    where: target.where,
    hint:
      'Pass --input-bucket or set RERUN_INPUT_BUCKET (the stack output InputBucketName; see docs/DEPLOY.md), ' +
      `or start the local stack with rerun dev --app-name ${target.appName}.`,
  });
}

function brief(v: ReprocessVerdict) {
  return { state: v.state, inputKey: v.inputKey, outputKey: v.outputKey, reason: v.reason };
}

function describeResult(result: ReprocessResult, target: PipelineTarget): string {
  const c = result.counts;
  const lines = [
    `Prefix ${result.prefix} of ${target.inputBucket}: ${result.plan.inputs} input(s), ${result.plan.outputs} output(s).`,
    `  requests: ${result.requests.list} listing pages, ${result.requests.lookup} key lookups` +
      `${result.verify ? `, ${result.requests.head} HEADs` : ''}`,
    `  current ${c.current}, missing ${c.missing}, stale ${c.stale}` +
      `${result.verify ? `, invalid ${c.invalid}, old-code ${c['old-code']}` : ''}, orphan ${c.orphan}, skipped ${c.skipped}.`,
  ];
  const shown = result.sample.slice(0, 10);
  for (const v of shown) lines.push(`  ${v.state.padEnd(8)} ${v.inputKey ?? v.outputKey}: ${v.reason}`);
  if (result.planned + c.orphan > shown.length) lines.push('  ... (--json lists the first 20)');
  const planned = `Mode ${result.mode}: ${result.planned} input(s) to enqueue`;
  if (result.dryRun) {
    lines.push(`${planned} (dry run: nothing is sent${c.orphan > 0 ? ', nothing is pruned' : ''}).`);
    return `${lines.join('\n')}\n`;
  }
  if (result.interrupted) {
    lines.push(`Interrupted after enqueueing ${result.enqueued}: run the same reprocess again to resume.`);
    return `${lines.join('\n')}\n`;
  }
  if (result.planned === 0) lines.push('Nothing to do: every input under the prefix is up to date for this mode.');
  else lines.push(`${planned}: enqueued ${result.enqueued}.`);
  if (result.sideOrphans > 0) lines.push(`  ${result.sideOrphans} side object(s) of gone inputs had no main output.`);
  if (result.pruned > 0) lines.push(`Pruned ${result.pruned} orphan output(s) (conditional deletes).`);
  if (!result.prune && c.orphan > 0) lines.push(`${c.orphan} orphan output(s) kept: remove them with --prune.`);
  if (result.kept.count > 0) {
    lines.push(`Kept ${result.kept.count} orphan(s) --prune does not remove, each for its reason:`);
    for (const k of result.kept.first.slice(0, 10)) lines.push(`  ${k.inputKey}: ${k.reason}`);
    if (result.kept.count > 10) lines.push('  ... (--json lists the first 20)');
  }
  const w = result.wait;
  if (w) {
    const s = Math.round(w.elapsedMs / 1000);
    if (w.ended === ReprocessWaitEnd.COMPLETE) lines.push(`All ${w.done} planned input(s) done in ${s} s.`);
    else if (w.ended === ReprocessWaitEnd.INCOMPLETE) {
      lines.push(
        `The queue is drained but ${w.remaining} planned input(s) are not done` +
          (w.deadLettered > 0
            ? `: ${w.deadLettered} message(s) reached the DLQ (rerun redrive --dry-run shows why).`
            : ': their inputs changed again, or the worker failed; run the same reprocess again.'),
      );
    } else if (w.ended === ReprocessWaitEnd.TIMEOUT) {
      lines.push(`Timed out with ${w.done}/${result.planned} done; the messages keep being processed.`);
    } else lines.push(`Stopped waiting (${w.done}/${result.planned} done); the messages keep being processed.`);
    if (w.gone > 0) lines.push(`${w.gone} planned input(s) were deleted meanwhile.`);
  }
  return `${lines.join('\n')}\n`;
}
