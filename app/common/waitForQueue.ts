import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { queueCounts } from '../../src/aws/queueCounts.js';
import { WaitEnd } from './waitEnd.js';

/** What one check of the queues saw: the part every tool's wait progress reports alike. */
export interface QueueProgress {
  /** Waiting to be received, delayed ones included. */
  readonly queued: number;
  readonly inFlight: number;
  /** Messages the DLQ gained since its mark ({@link deadLetterMark}); 0 when no DLQ is watched. */
  readonly deadLettered: number;
  /** Since the tool started. */
  readonly elapsedMs: number;
}

/** How often a wait checks and when it stops. */
export interface WaitTiming {
  /** Interval between checks. @default 2000 */
  readonly pollIntervalMs?: number;
  /** Give up once this long has passed since the wait's `started`. @default no limit */
  readonly timeoutMs?: number;
  /** Ends the wait (interrupted) at its next check, and cuts the sleep before it short. */
  readonly signal?: AbortSignal;
}

/** Options of {@link waitForQueue}; `J` is what the tool's own judgement of its work saw. */
export interface WaitForQueueOptions<J> {
  readonly sqs: Pick<SQSClient, 'send'>;
  /** The work queue the tool sent to. */
  readonly queueUrl: string;
  /** @default not watched */
  readonly dlqUrl?: string;
  /** The DLQ's visible count taken before the wait counts what it gained ({@link deadLetterMark}). */
  readonly deadLetteredBefore: number;
  /** How often to check and when to stop: the tool's own options, which carry these under these names. */
  readonly timing: WaitTiming;
  /** When the tool started (elapsed times count from it). */
  readonly started: number;
  readonly now: () => number;
  /**
   * One check of the work itself, the tool's own judgement: the first thing every check does. Told
   * what the previous check saw of the queues (none on the first), so a judgement that skips work it
   * saw unchanged can look at everything once the queue was seen empty.
   */
  readonly judge: (previous: QueueProgress | undefined) => Promise<J>;
  /** Whether the judged work is all done (the wait then ends complete). */
  readonly complete: (judged: J) => boolean;
  /** Told each check's judgement and queue counts, before the wait decides whether to end. */
  readonly onProgress?: (judged: J, queue: QueueProgress) => void;
}

/** How a {@link waitForQueue} ended, and what its last check saw. */
export interface QueueWait<J> {
  readonly ended: WaitEnd;
  /** The last check's judgement. */
  readonly judged: J;
  /** The last check's queue counts. */
  readonly queue: QueueProgress;
  /** How many checks it made. */
  readonly polls: number;
}

/** The DLQ's visible count now (0 when none is watched): the mark a wait counts dead letters from. */
export async function deadLetterMark(sqs: Pick<SQSClient, 'send'>, dlqUrl: string | undefined): Promise<number> {
  return dlqUrl ? (await queueCounts(sqs, dlqUrl)).visible : 0;
}

/**
 * The wait after enqueueing work: check the work (the tool's judgement) and the queues every
 * interval, report each check, and end complete once the work is done, incomplete once the queue is
 * seen empty twice in a row with work not done (failed, or changed again), interrupted once the
 * signal is aborted, or on timeout.
 *
 * @example
 * const wait = await waitForQueue({ sqs, queueUrl, deadLetteredBefore: 0, timing: options, started, now: Date.now,
 *   judge: () => countPublished(), complete: (n) => n === planned, onProgress: (n, q) => draw(n, q) });
 */
export async function waitForQueue<J>(options: WaitForQueueOptions<J>): Promise<QueueWait<J>> {
  const { timing } = options;
  const interval = timing.pollIntervalMs ?? 2000;
  let drainedChecks = 0;
  let previous: QueueProgress | undefined;
  for (let polls = 1; ; polls++) {
    const judged = await options.judge(previous);
    const counts = await queueCounts(options.sqs, options.queueUrl);
    const deadLettered = options.dlqUrl
      ? Math.max(0, (await queueCounts(options.sqs, options.dlqUrl)).visible - options.deadLetteredBefore)
      : 0;
    const elapsedMs = options.now() - options.started;
    const queue = { queued: counts.visible + counts.delayed, inFlight: counts.inFlight, deadLettered, elapsedMs };
    previous = queue;
    options.onProgress?.(judged, queue);
    drainedChecks = counts.visible + counts.inFlight + counts.delayed === 0 ? drainedChecks + 1 : 0;
    let ended: WaitEnd | undefined;
    if (options.complete(judged)) ended = WaitEnd.COMPLETE;
    // SQS counts are approximate: two consecutive empty observations before concluding.
    else if (drainedChecks >= 2) ended = WaitEnd.INCOMPLETE;
    else if (timing.signal?.aborted) ended = WaitEnd.INTERRUPTED;
    else if (timing.timeoutMs !== undefined && elapsedMs >= timing.timeoutMs) ended = WaitEnd.TIMEOUT;
    if (ended) return { ended, judged, queue, polls };
    await sleep(interval, undefined, timing.signal ? { signal: timing.signal } : {}).catch(() => {});
  }
}
