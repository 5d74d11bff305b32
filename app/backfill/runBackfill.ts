import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Day } from '../../src/keys/partition.js';
import { RateLimiter } from '../common/RateLimiter.js';
import { deadLetterMark, waitForQueue } from '../common/waitForQueue.js';
import type { InputRules } from '../partition/inputCoverage.js';
import type { S3PartitionStore } from '../partition/S3PartitionStore.js';
import type { SummaryLayout } from '../partition/summaryLayout.js';
import { partitionStatus } from '../status/partitionStatus.js';
import type { BackfillEvents } from './backfillEvents.js';
import type { BackfillResult } from './backfillResult.js';
import { enqueueTasks } from './enqueueTasks.js';
import { type BackfillMode, BackfillMode as Mode, planBackfill } from './planBackfill.js';

/** Options of {@link runBackfill}. */
export interface RunBackfillOptions {
  /** Listings of the output bucket (the bulk done-check). */
  readonly reader: S3PartitionStore;
  readonly sqs: Pick<SQSClient, 'send'>;
  /** The output bucket. */
  readonly bucket: string;
  readonly layout: SummaryLayout;
  /**
   * Judge days by their inputs too (see partitionStatus): an incomplete day is planned as not done.
   * @default undefined: outputs only
   */
  readonly inputs?: InputRules;
  /** The summary code version the deployed worker runs. */
  readonly codeVersion: string;
  /** The summarize work queue. */
  readonly queueUrl: string;
  /**
   * Its DLQ, watched while waiting (a task that fails for good ends there).
   * @default not watched
   */
  readonly dlqUrl?: string;
  readonly from: Day;
  readonly to: Day;
  /** @default BackfillMode.STALE (missing, stale and invalid partitions) */
  readonly mode?: BackfillMode;
  /**
   * Plan and report only: send nothing.
   * @default false
   */
  readonly dryRun?: boolean;
  /**
   * Messages per second while enqueueing.
   * @default no limit
   */
  readonly ratePerSecond?: number;
  /**
   * After enqueueing, wait until every planned partition is published (or cannot be: its task
   * failed, or its inputs changed again), reporting progress.
   * @default false
   */
  readonly wait?: boolean;
  /** Interval between progress checks. @default 2000 */
  readonly pollIntervalMs?: number;
  /** Give up waiting after this long. @default no limit */
  readonly timeoutMs?: number;
  /** Stops enqueueing (between batches) or waiting; running the same backfill again resumes it. */
  readonly signal?: AbortSignal;
  /**
   * Where it tells its plan (before anything is sent), each enqueued batch and each progress check
   * while waiting.
   * @default told to no one
   */
  readonly events?: BackfillEvents;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * A backfill as a controlled rerun of an older window: plan with the bulk done-check (listings
 * only), enqueue exactly the partitions the mode selects with deterministic message identities,
 * and optionally wait with progress. Resumable: a second run plans from what is published, so after
 * a completed backfill the same backfill enqueues nothing, and an interrupted one is finished by
 * running it again.
 *
 * @example
 * const result = await runBackfill({ reader, sqs, bucket, layout, codeVersion: 'summarize@1', queueUrl,
 *   from: '2026-01-01', to: '2026-01-30', wait: true, events: (e) => draw(e) });
 */
export async function runBackfill(options: RunBackfillOptions): Promise<BackfillResult> {
  const mode = options.mode ?? Mode.STALE;
  const now = options.now ?? Date.now;
  const started = now();
  const status = () =>
    partitionStatus({
      reader: options.reader,
      bucket: options.bucket,
      layout: options.layout,
      codeVersion: options.codeVersion,
      from: options.from,
      to: options.to,
      ...(options.inputs ? { inputs: options.inputs } : {}),
    });

  const initial = await status();
  const plan = planBackfill(initial.partitions, mode);
  options.events?.({
    kind: 'plan',
    plan,
    from: options.from,
    to: options.to,
    dryRun: options.dryRun === true,
  });
  const base = {
    from: options.from,
    to: options.to,
    mode,
    dryRun: options.dryRun === true,
    counts: plan.counts,
    tasks: plan.tasks,
    planRequests: initial.requests.list,
  };
  if (options.dryRun || plan.tasks.length === 0) return { ...base, enqueued: 0, interrupted: false };

  const deadLetteredBefore = await deadLetterMark(options.sqs, options.dlqUrl);
  const enqueued = await enqueueTasks({
    sqs: options.sqs,
    queueUrl: options.queueUrl,
    tasks: plan.tasks,
    ...(options.ratePerSecond ? { limiter: new RateLimiter({ perSecond: options.ratePerSecond, now }) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    onSent: (sent) => options.events?.({ kind: 'enqueued', sent, total: plan.tasks.length }),
  });
  const interrupted = enqueued < plan.tasks.length;
  if (!options.wait || interrupted) return { ...base, enqueued, interrupted };

  // Wait: poll the same list-only check until every planned partition is published.
  const planned = new Set(plan.tasks.map((t) => t.day));
  const wait = await waitForQueue({
    sqs: options.sqs,
    queueUrl: options.queueUrl,
    dlqUrl: options.dlqUrl,
    deadLetteredBefore,
    timing: options,
    started,
    now,
    judge: async () => {
      const mine = (await status()).partitions.filter((p) => planned.has(p.day));
      return { mine, published: mine.filter((p) => p.status === 'published').length };
    },
    complete: ({ published }) => published === planned.size,
    onProgress: ({ published }, queue) =>
      options.events?.({ kind: 'waiting', progress: { published, total: planned.size, ...queue } }),
  });
  const { mine, published } = wait.judged;
  const { deadLettered, elapsedMs } = wait.queue;
  return {
    ...base,
    enqueued,
    interrupted: false,
    wait: {
      ended: wait.ended,
      published,
      total: planned.size,
      deadLettered,
      elapsedMs,
      remaining: mine
        .filter((p) => p.status !== 'published')
        .map((p) => ({ day: p.day, status: p.status, reason: p.reason })),
    },
  };
}
