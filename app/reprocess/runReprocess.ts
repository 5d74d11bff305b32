import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { queueCounts } from '../../src/aws/queueCounts.js';
import { RerunError } from '../../src/errors.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import { removeOutputs } from '../../src/worker/removeOutputs.js';
import { RateLimiter } from '../shared/RateLimiter.js';
import { type BatchMessage, sendMessageBatch } from '../shared/sendMessageBatch.js';
import { BackfillWaitEnd } from '../shared/waitEnd.js';
import type { OutputKeyMapping } from './outputKeyMapping.js';
import {
  emptyPlanCounts,
  isSelected,
  type ListedObject,
  ReprocessMode as Mode,
  type PlanCounts,
  planReprocess,
  type ReprocessMode,
  ReprocessState,
  type ReprocessVerdict,
} from './planReprocess.js';
import { reprocessMessageBody } from './reprocessMessage.js';
import type { S3ListingReader } from './S3ListingReader.js';
import { verifyVerdicts } from './verifyVerdicts.js';

/** How waiting ended (the same ends as a backfill's wait). */
export const ReprocessWaitEnd = BackfillWaitEnd;
export type ReprocessWaitEnd = BackfillWaitEnd;

/** The prefix, the mapping or the worker do not fit together: nothing was planned. */
export class ReprocessConfigurationError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'ReprocessConfigurationError';
  }
}

/** Options of {@link runReprocess}. */
export interface RunReprocessOptions {
  /** Listings of both buckets (and the exact-key lookups). */
  readonly reader: S3ListingReader;
  /** HEADs of `--verify` and the conditional deletes of `--prune`. */
  readonly store: S3ObjectStore;
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly inputBucket: string;
  /** The deployed worker's definition: its keys, skip rule, code version and validation. */
  readonly worker: WorkerDefinition;
  /** How its output keys map back to input keys (must agree with `worker.outputKey`). */
  readonly mapping: OutputKeyMapping;
  /** Input key prefix to reprocess; must start with the mapping's input prefix. */
  readonly prefix: string;
  /** @default ReprocessMode.STALE */
  readonly mode?: ReprocessMode;
  /** The exact done-check (one HEAD) for each output that looks current. @default false */
  readonly verify?: boolean;
  /** HEADs in flight (of `verify`, and of the outputs older than their input). @default 16 */
  readonly verifyConcurrency?: number;
  /**
   * Key ranges of each listing read at once (S3ListingReader.listSharded): the same plan, in about
   * 1/N of the wall time for a large prefix, for a few more requests than pages and N x 8 pages of memory.
   * @default 1 (one listing page after the other)
   */
  readonly listShards?: number;
  /**
   * The key mappings of the worker's side outputs (e.g. `quarantine/{bucket}/{path}.ndjson`), so
   * `prune` also finds side objects whose main output is gone (one more merge each).
   * @default none
   */
  readonly sideMappings?: readonly OutputKeyMapping[];
  /** Plan and report only. @default false */
  readonly dryRun?: boolean;
  /** Remove orphan outputs (conditional deletes, as for a deleted input). @default false */
  readonly prune?: boolean;
  /** The worker's work queue (unused with `sink`). */
  readonly queueUrl: string;
  /**
   * Where each planned input goes instead of a message on the work queue: the Batch Operations
   * engine writes them to a manifest (app/reprocess/batchOperationsEngine.ts). `enqueued` then counts
   * the inputs the sink took, and `wait` is refused: the engine follows its job itself.
   * @default a message on `queueUrl` per input
   */
  readonly sink?: (input: { readonly key: string; readonly etag: string; readonly size: number }) => Promise<void>;
  /** Its DLQ, watched while waiting. @default not watched */
  readonly dlqUrl?: string;
  /** Messages (and prune deletes) per second. @default no limit */
  readonly ratePerSecond?: number;
  /** Follow the planned inputs until they are done, then report the outcome counts. @default false */
  readonly wait?: boolean;
  /** @default 2000 */
  readonly pollIntervalMs?: number;
  /** @default no limit */
  readonly timeoutMs?: number;
  /**
   * Most planned input keys remembered for `wait` (about 150 bytes each). Past it, waiting
   * counts every input under the prefix that is still to do, not only the planned ones.
   * @default 250000
   */
  readonly waitTrackLimit?: number;
  /**
   * When the current code version first ran (codeVersionCutoff.ts): old-code outputs are then found
   * from listings, and only outputs of the rollout window get a HEAD without `verify`.
   * @default unknown
   */
  readonly codeCutoff?: { readonly codeVersion: string; readonly since: number; readonly until: number };
  /**
   * Where the plan reads the objects from instead of ListObjectsV2 (`--manifest`: an S3 Inventory,
   * see inventoryListing.ts). Each returns the objects under the prefix in ListObjectsV2 order.
   * Waiting always lists the outputs live (a snapshot cannot show progress).
   * @default ListObjectsV2 of both buckets
   */
  readonly listings?: {
    readonly inputs?: () => AsyncIterable<ListedObject>;
    readonly outputs?: () => AsyncIterable<ListedObject>;
  };
  /** Planned verdicts kept for the report. @default 20 */
  readonly sampleSize?: number;
  /** Stops between batches; running the same reprocess again resumes it. */
  readonly signal?: AbortSignal;
  /** After each batch or prune, and when planning ends. */
  readonly onProgress?: (progress: ReprocessProgress) => void;
  /** After each check while waiting. */
  readonly onWait?: (progress: ReprocessWaitProgress) => void;
  /** @default Date.now */
  readonly now?: () => number;
}

/** Progress while planning and enqueueing (the total is known once the listings end). */
export interface ReprocessProgress {
  readonly listedInputs: number;
  readonly planned: number;
  readonly enqueued: number;
  readonly pruned: number;
  /** Whether the listings have ended (then `planned` is the total). */
  readonly planComplete: boolean;
}

/** Progress while waiting. */
export interface ReprocessWaitProgress {
  /** Planned inputs whose output is now current. */
  readonly done: number;
  readonly total: number;
  readonly queued: number;
  readonly inFlight: number;
  readonly deadLettered: number;
  readonly elapsedMs: number;
}

/** Verdicts by state. */
export type StateCounts = Record<ReprocessState, number>;

/** What a reprocess did. */
export interface ReprocessResult {
  readonly prefix: string;
  readonly mode: ReprocessMode;
  readonly verify: boolean;
  readonly dryRun: boolean;
  /** Inputs selected by the mode (enqueued unless dry run). */
  readonly planned: number;
  /** Messages SQS accepted. */
  readonly enqueued: number;
  /** Orphan outputs removed (main outputs; their side outputs too). */
  readonly pruned: number;
  /** Whether orphans were to be removed (`prune`), so a report can tell "kept" from "not asked". */
  readonly prune: boolean;
  /** With `prune`: orphans found in the listing that were gone when pruned (their delete event removed them). */
  readonly alreadyGone: number;
  /**
   * With `prune`: orphans left in place, each with the reason (the object names another input, has
   * no rerun metadata, or its input exists again): the first `sampleSize`, and how many in all.
   */
  readonly kept: {
    readonly count: number;
    readonly first: readonly { readonly inputKey: string; readonly reason: string }[];
  };
  /** With `prune`: side objects of gone inputs whose main output is gone too (found by `sideMappings`). */
  readonly sideOrphans: number;
  /** Whether it stopped early (signal): run it again to resume. */
  readonly interrupted: boolean;
  /** Every verdict by state. */
  readonly counts: StateCounts;
  /** Requests of the plan (the checks while waiting are in `wait.requests`). */
  readonly requests: { readonly list: number; readonly lookup: number; readonly head: number };
  readonly plan: PlanCounts;
  /** The first planned (and orphan) verdicts. */
  readonly sample: readonly ReprocessVerdict[];
  readonly wait?: {
    readonly ended: ReprocessWaitEnd;
    /** Planned inputs now current (or skipped by the worker). */
    readonly done: number;
    /** Planned inputs still to do. */
    readonly remaining: number;
    /** Planned inputs no longer listed (deleted meanwhile). */
    readonly gone: number;
    readonly deadLettered: number;
    readonly elapsedMs: number;
    /** Whether `done`/`remaining` count the planned inputs only (false past `waitTrackLimit`). */
    readonly tracked: boolean;
    /** Requests of the checks while waiting (each one plans again). */
    readonly requests: { readonly list: number; readonly lookup: number; readonly head: number };
  };
}

/**
 * `rerun reprocess`: reruns the main stage over a prefix. Plans by listings (planReprocess.ts:
 * a merge-join of the inputs and outputs, bounded memory), judges each output older than its input
 * by the input ETag it records (one HEAD), optionally verifies each output that looks current with
 * the exact done-check, enqueues one S3-event-shaped message per selected
 * input (ten per SendMessageBatch, rate-limited) as it plans, optionally prunes orphan outputs
 * with conditional deletes, and optionally waits for the outcome. Resumable: a run plans from
 * what the buckets hold now, so an interrupted run, run again, enqueues only what is still to do,
 * and a repeat after completion plans nothing (except `--mode all`, a verification pass).
 *
 * @example
 * const result = await runReprocess({ reader, store, sqs, inputBucket: 'in', worker, mapping,
 *   prefix: 'incoming/dt=2026-11-', queueUrl, wait: true });
 */
export async function runReprocess(options: RunReprocessOptions): Promise<ReprocessResult> {
  const mode = options.mode ?? Mode.STALE;
  const dryRun = options.dryRun === true;
  const now = options.now ?? Date.now;
  const started = now();
  checkConfiguration(options);

  const run = newRunState(options);
  const limiter = options.ratePerSecond ? new RateLimiter({ perSecond: options.ratePerSecond, now }) : undefined;
  const progress = (planComplete: boolean) =>
    options.onProgress?.({
      listedInputs: run.plan.inputs,
      planned: run.selected,
      enqueued: run.enqueued,
      pruned: run.pruned,
      planComplete,
    });
  const prune = orphanPruner(options, run, limiter, progress);
  await planAndEnqueue(options, run, { mode, dryRun, limiter, prune, progress });
  const sideOrphans = await pruneSideOrphans(options, run, prune, dryRun);
  progress(!run.interrupted);

  const base = {
    prefix: options.prefix,
    mode,
    verify: options.verify === true,
    dryRun,
    planned: run.selected,
    enqueued: run.enqueued,
    pruned: run.pruned,
    prune: options.prune === true,
    alreadyGone: run.alreadyGone,
    kept: run.kept,
    sideOrphans,
    interrupted: run.interrupted,
    counts: run.counts,
    plan: run.plan,
    sample: run.sample,
  };
  const planRequests = requestCounts(options, run);
  if (dryRun || run.interrupted || !options.wait || run.selected === 0) return { ...base, requests: planRequests };
  const wait = await waitForPlan(options, run, { mode, now, started, planRequests });
  return { ...base, requests: planRequests, wait };
}

/** What a run has planned, sent and pruned so far (the counters its steps share). */
interface RunState {
  readonly counts: Record<ReprocessState, number>;
  readonly plan: PlanCounts;
  readonly sample: ReprocessVerdict[];
  readonly sampleSize: number;
  readonly heads: { count: number };
  /** The planned input keys `--wait` follows, while there are at most `waitTrackLimit`. */
  readonly planned: Set<string>;
  tracked: boolean;
  selected: number;
  enqueued: number;
  pruned: number;
  alreadyGone: number;
  readonly kept: { count: number; first: { inputKey: string; reason: string }[] };
  interrupted: boolean;
}

function newRunState(options: RunReprocessOptions): RunState {
  return {
    counts: zeroCounts(),
    plan: emptyPlanCounts(),
    sample: [],
    sampleSize: options.sampleSize ?? 20,
    heads: { count: 0 },
    planned: new Set<string>(),
    tracked: options.wait === true,
    selected: 0,
    enqueued: 0,
    pruned: 0,
    alreadyGone: 0,
    kept: { count: 0, first: [] },
    interrupted: false,
  };
}

/** ListObjectsV2 and HEAD requests so far. */
function requestCounts(options: RunReprocessOptions, run: RunState): { list: number; lookup: number; head: number } {
  return {
    // Sharded listings count every request, the short pages at range ends too: each is paid for.
    list: options.reader.listRequests,
    lookup: options.reader.lookupRequests,
    head: run.heads.count,
  };
}

/**
 * Removes an orphan's outputs with If-Match deletes, as an ObjectRemoved event of its input would,
 * and counts what was pruned and what was kept (and why).
 */
function orphanPruner(
  options: RunReprocessOptions,
  run: RunState,
  limiter: RateLimiter | undefined,
  progress: (planComplete: boolean) => void,
): (inputKey: string) => Promise<void> {
  return async (inputKey) => {
    await limiter?.take(1);
    const removed = await removeOutputs(
      options.worker,
      { bucket: options.inputBucket, key: inputKey, eventName: 'ObjectRemoved:Delete' },
      {
        store: options.store,
        // The input came back during the prune (its own event may have found the output done just
        // before this prune removed it): the worker rebuilds it, as for a planned input.
        rebuild: async (created) => {
          const input = await options.store.head(created.bucket, created.key);
          if (!input) return { status: 'skipped', reason: 'input gone again' };
          const body = reprocessMessageBody({
            bucket: created.bucket,
            key: created.key,
            etag: input.etag,
            size: input.contentLength,
            sentAt: (options.now ?? Date.now)(),
          });
          run.enqueued += await sendMessageBatch(
            options.sqs,
            options.queueUrl,
            [{ body }],
            'Run the same reprocess again.',
          );
          return { status: 'processed', reason: 'enqueued for the worker to rebuild' };
        },
      },
    );
    if (removed.status === 'processed') run.pruned++;
    else if (!removed.kept) {
      // Nothing left to remove: its input's own delete event (or another prune) removed it since the
      // listing. Not "kept": there is nothing there any more.
      run.alreadyGone++;
    } else {
      run.kept.count++;
      // The outcome's reason is written for a delete event ("input deleted: nothing removed; kept
      // main: ..."); here no input was deleted by this run, so the report keeps what was kept and why.
      const reason = removed.reason.replace(/^input deleted: nothing removed; /, '');
      if (run.kept.first.length < run.sampleSize) run.kept.first.push({ inputKey, reason });
    }
    progress(false);
  };
}

/** The plan, streamed: each selected input is enqueued (or given to the sink) as it is judged. */
async function planAndEnqueue(
  options: RunReprocessOptions,
  run: RunState,
  step: {
    readonly mode: ReprocessMode;
    readonly dryRun: boolean;
    readonly limiter: RateLimiter | undefined;
    readonly prune: (inputKey: string) => Promise<void>;
    readonly progress: (planComplete: boolean) => void;
  },
): Promise<void> {
  const trackLimit = options.waitTrackLimit ?? 250_000;
  let batch: BatchMessage[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await step.limiter?.take(batch.length);
    run.enqueued += await sendMessageBatch(
      options.sqs,
      options.queueUrl,
      batch,
      'Run the same reprocess again to resume: it plans only what is still to do.',
    );
    batch = [];
    step.progress(false);
  };
  for await (const verdict of verdictStream(options, run.plan, run.heads, undefined, true)) {
    if (options.signal?.aborted) {
      run.interrupted = true;
      break;
    }
    run.counts[verdict.state]++;
    if (verdict.state === ReprocessState.ORPHAN) {
      if (run.sample.length < run.sampleSize) run.sample.push(verdict);
      if (options.prune && !step.dryRun && verdict.inputKey) await step.prune(verdict.inputKey);
      continue;
    }
    if (!isSelected(verdict, step.mode) || !verdict.inputKey || !verdict.input) continue;
    run.selected++;
    if (run.sample.length < run.sampleSize) run.sample.push(verdict);
    if (run.tracked) {
      if (run.planned.size < trackLimit) run.planned.add(verdict.inputKey);
      else run.tracked = false;
    }
    if (step.dryRun) continue;
    const input = { key: verdict.inputKey, etag: verdict.input.etag, size: verdict.input.size };
    if (options.sink) {
      await options.sink(input);
      run.enqueued++;
      continue;
    }
    batch.push({
      body: reprocessMessageBody({ bucket: options.inputBucket, ...input, sentAt: (options.now ?? Date.now)() }),
    });
    if (batch.length === 10) await flush();
  }
  if (!run.interrupted) await flush();
}

/**
 * Side objects whose main output is gone too are not found through their main output: with
 * --prune, one more merge per side output (the inputs again, against that side's listing).
 */
async function pruneSideOrphans(
  options: RunReprocessOptions,
  run: RunState,
  prune: (inputKey: string) => Promise<void>,
  dryRun: boolean,
): Promise<number> {
  let sideOrphans = 0;
  for (const side of options.prune && !run.interrupted ? (options.sideMappings ?? []) : []) {
    for await (const verdict of sideOrphanStream(options, side)) {
      if (options.signal?.aborted) {
        run.interrupted = true;
        break;
      }
      sideOrphans++;
      if (run.sample.length < run.sampleSize) run.sample.push(verdict);
      if (!dryRun && verdict.inputKey) await prune(verdict.inputKey);
    }
  }
  return sideOrphans;
}

/** `--wait`: the same plan again, until every planned input is current (or cannot become so). */
async function waitForPlan(
  options: RunReprocessOptions,
  run: RunState,
  at: {
    readonly mode: ReprocessMode;
    readonly now: () => number;
    readonly started: number;
    readonly planRequests: { list: number; lookup: number; head: number };
  },
): Promise<NonNullable<ReprocessResult['wait']>> {
  const deadLetteredBefore = options.dlqUrl ? (await queueCounts(options.sqs, options.dlqUrl)).visible : 0;
  const interval = options.pollIntervalMs ?? 2000;
  let drainedChecks = 0;
  for (;;) {
    let remaining = 0;
    let done = 0;
    const only = run.tracked ? run.planned : undefined;
    for await (const verdict of verdictStream(options, emptyPlanCounts(), run.heads, only)) {
      if (only && !only.has(verdict.inputKey ?? '')) continue;
      if (verdict.state === ReprocessState.ORPHAN) continue;
      if (isSelected(verdict, at.mode) && verdict.state !== ReprocessState.CURRENT) remaining++;
      else done++;
    }
    if (!run.tracked) done = Math.max(0, run.selected - remaining);
    const queue = await queueCounts(options.sqs, options.queueUrl);
    const deadLettered = options.dlqUrl
      ? Math.max(0, (await queueCounts(options.sqs, options.dlqUrl)).visible - deadLetteredBefore)
      : 0;
    const elapsedMs = at.now() - at.started;
    options.onWait?.({
      done,
      total: run.selected,
      queued: queue.visible + queue.delayed,
      inFlight: queue.inFlight,
      deadLettered,
      elapsedMs,
    });
    drainedChecks = queue.visible + queue.inFlight + queue.delayed === 0 ? drainedChecks + 1 : 0;
    let ended: ReprocessWaitEnd | undefined;
    if (remaining === 0) ended = ReprocessWaitEnd.COMPLETE;
    // SQS counts are approximate: two consecutive empty observations before concluding.
    else if (drainedChecks >= 2) ended = ReprocessWaitEnd.INCOMPLETE;
    else if (options.signal?.aborted) ended = ReprocessWaitEnd.INTERRUPTED;
    else if (options.timeoutMs !== undefined && elapsedMs >= options.timeoutMs) ended = ReprocessWaitEnd.TIMEOUT;
    if (ended) {
      const gone = run.tracked ? Math.max(0, run.selected - done - remaining) : 0;
      const total = requestCounts(options, run);
      const requests = {
        list: total.list - at.planRequests.list,
        lookup: total.lookup - at.planRequests.lookup,
        head: total.head - at.planRequests.head,
      };
      return { ended, done, remaining, gone, deadLettered, elapsedMs, tracked: run.tracked, requests };
    }
    await sleep(interval, undefined, options.signal ? { signal: options.signal } : {}).catch(() => {});
  }
}

/** The plan as a stream of verdicts: listings, merge-join, optionally --verify (of `only`, when given). */
function verdictStream(
  options: RunReprocessOptions,
  plan: PlanCounts,
  heads: { count: number },
  only?: ReadonlySet<string>,
  planning = false,
): AsyncIterable<ReprocessVerdict> {
  const { reader, mapping, worker, inputBucket } = options;
  const outputPrefix = `${mapping.outputRoot}${options.prefix.slice(mapping.inputPrefix.length)}`;
  const outputListing = planning ? options.listings?.outputs : undefined;
  const planned = planReprocess(
    {
      inputs: options.listings?.inputs
        ? options.listings.inputs()
        : reader.listSharded(inputBucket, options.prefix, options.listShards ?? 1),
      outputs: outputListing
        ? outputListing()
        : reader.listSharded(worker.outputBucket, outputPrefix, options.listShards ?? 1),
      mapping,
      lookups: {
        findOutput: (key) => reader.find(worker.outputBucket, key),
        inputExists: async (key) => (await reader.find(inputBucket, key)) !== undefined,
      },
      skipReason: (key) =>
        key.endsWith('/')
          ? 'folder marker (key ends with "/")'
          : worker.skipReason?.({ bucket: inputBucket, key, eventName: 'ObjectCreated:Put' }),
      // Hashed outputs of the whole bucket are listed only when the prefix is the whole input prefix.
      checkLongOrphans: options.prefix === mapping.inputPrefix,
      ...(options.codeCutoff ? { codeCutoff: options.codeCutoff } : {}),
    },
    plan,
  );
  const source = only ? filterVerdicts(planned, only) : planned;
  return verifyVerdicts(source, {
    // Without --verify, only the outputs of a code rollout window get the exact check (and, always,
    // the outputs older than their input: their recorded source decides, verifyVerdicts.ts).
    ...(options.verify ? {} : { select: (v: ReprocessVerdict) => v.checkCode === true }),
    inputBucket,
    codeVersion: worker.codeVersion,
    head: (key) => options.store.head(worker.outputBucket, key),
    ...(worker.validate ? { validate: (head) => worker.validate?.(head) } : {}),
    sideOutputKeys: (key) =>
      Object.fromEntries(
        Object.entries(worker.sideOutputs ?? {}).map(([name, keyOf]) => [name, keyOf({ bucket: inputBucket, key })]),
      ),
    ...(options.verifyConcurrency ? { concurrency: options.verifyConcurrency } : {}),
    onHead: () => {
      heads.count++;
    },
  });
}

/** The orphans of one side output: the inputs merged against that side's listing. */
async function* sideOrphanStream(
  options: RunReprocessOptions,
  side: OutputKeyMapping,
): AsyncGenerator<ReprocessVerdict> {
  const { reader, inputBucket, worker } = options;
  const sidePrefix = `${side.outputRoot}${options.prefix.slice(side.inputPrefix.length)}`;
  for await (const verdict of planReprocess({
    inputs: options.listings?.inputs
      ? options.listings.inputs()
      : reader.listSharded(inputBucket, options.prefix, options.listShards ?? 1),
    outputs: reader.listSharded(worker.outputBucket, sidePrefix, options.listShards ?? 1),
    mapping: side,
    lookups: {
      findOutput: (key) => reader.find(worker.outputBucket, key),
      inputExists: async (key) => (await reader.find(inputBucket, key)) !== undefined,
    },
    checkLongOrphans: options.prefix === side.inputPrefix,
  })) {
    if (verdict.state !== ReprocessState.ORPHAN || !verdict.inputKey) continue;
    // Its main output, if still there, is an orphan of the main merge already (counted and pruned there).
    if (await reader.find(worker.outputBucket, options.mapping.outputKeyOf(verdict.inputKey))) continue;
    yield { ...verdict, reason: 'side object of an input that is gone (no main output)' };
  }
}

async function* filterVerdicts(
  verdicts: AsyncIterable<ReprocessVerdict>,
  only: ReadonlySet<string>,
): AsyncGenerator<ReprocessVerdict> {
  for await (const v of verdicts) if (v.inputKey && only.has(v.inputKey)) yield v;
}

function checkConfiguration(options: RunReprocessOptions): void {
  const { mapping, worker, prefix, inputBucket } = options;
  if (options.sink && options.wait) {
    throw new ReprocessConfigurationError('wait and sink exclude each other: the engine that owns the sink waits.');
  }
  if (!prefix.startsWith(mapping.inputPrefix)) {
    throw new ReprocessConfigurationError(
      `--prefix ${JSON.stringify(prefix)} is outside the worker's input prefix ${JSON.stringify(mapping.inputPrefix)}: ` +
        `pass a prefix that starts with ${mapping.inputPrefix}.`,
    );
  }
  const probe = `${mapping.inputPrefix}probe/a b.csv`;
  const expected = worker.outputKey({ bucket: inputBucket, key: probe });
  if (mapping.outputKeyOf(probe) !== expected) {
    throw new ReprocessConfigurationError(
      `the key mapping gives ${mapping.outputKeyOf(probe)} for ${probe}, the worker ${expected}: ` +
        'planning would compare the wrong objects. Pass the mapping of the deployed worker.',
    );
  }
}

function zeroCounts(): StateCounts {
  return Object.fromEntries(Object.values(ReprocessState).map((s) => [s, 0])) as StateCounts;
}

/** Re-exported for callers that build listings themselves (e.g. from an inventory). */
export type { ListedObject };
