import { RerunError } from '../../src/errors.js';
import { removeOutputs } from '../../src/worker/removeOutputs.js';
import { RateLimiter } from '../common/RateLimiter.js';
import { type BatchMessage, sendMessageBatch } from '../common/sendMessageBatch.js';
import {
  isSelected,
  type ListedObject,
  ReprocessMode as Mode,
  type ReprocessMode,
  ReprocessState,
} from './planReprocess.js';
import { reprocessMessageBody } from './reprocessMessage.js';
import type { ReprocessResult } from './reprocessResult.js';
import { newRunState, type RunState, requestCounts } from './reprocessRunState.js';
import type { RunReprocessOptions } from './runReprocessOptions.js';
import { sideOrphanStream, verdictStream } from './verdictStream.js';
import { waitForPlan } from './waitForPlan.js';

/** The prefix, the mapping or the worker do not fit together: nothing was planned. */
export class ReprocessConfigurationError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'ReprocessConfigurationError';
  }
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

/** Re-exported for callers that build listings themselves (e.g. from an inventory). */
export type { ListedObject };
