import type { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { WaitEnd } from '../../app/common/waitEnd.js';
import {
  deadLetterMark,
  type QueueProgress,
  type WaitForQueueOptions,
  waitForQueue,
} from '../../app/common/waitForQueue.js';

const QUEUE = 'https://sqs.test/work';
const DLQ = 'https://sqs.test/work-dlq';

interface Counts {
  readonly visible: number;
  readonly inFlight?: number;
  readonly delayed?: number;
}

/**
 * An SQS whose GetQueueAttributes answers each queue from its script, one entry a call (the last
 * entry again once the script ends), and that counts the calls per queue.
 */
function scriptedSqs(scripts: Record<string, readonly Counts[]>) {
  const calls: Record<string, number> = {};
  const sqs = {
    send: async (command: { input: { QueueUrl?: string } }) => {
      const url = command.input.QueueUrl ?? '';
      const script = scripts[url] ?? [];
      const n = calls[url] ?? 0;
      calls[url] = n + 1;
      const c = script[Math.min(n, script.length - 1)] ?? { visible: 0 };
      return {
        Attributes: {
          ApproximateNumberOfMessages: String(c.visible),
          ApproximateNumberOfMessagesNotVisible: String(c.inFlight ?? 0),
          ApproximateNumberOfMessagesDelayed: String(c.delayed ?? 0),
        },
      };
    },
  } as unknown as Pick<SQSClient, 'send'>;
  return { sqs, calls };
}

/**
 * A judgement that reports `done` after the given number of checks (never when undefined), and
 * throws past a few dozen, so that a wait that does not end fails its test instead of spinning.
 */
function doneAfter(checks: number | undefined) {
  let made = 0;
  return async () => {
    made++;
    if (made > 50) throw new Error('the wait did not end');
    return { made, done: checks !== undefined && made >= checks };
  };
}

/** A clock that moves `stepMs` on each reading. */
function steppingClock(stepMs: number) {
  let t = 0;
  return () => {
    t += stepMs;
    return t;
  };
}

interface Judged {
  readonly made: number;
  readonly done: boolean;
}

/** A wait on QUEUE that checks at once, with a still clock and work that is never done, but for `over`. */
function waitOn(sqs: Pick<SQSClient, 'send'>, over: Partial<WaitForQueueOptions<Judged>>) {
  return waitForQueue<Judged>({
    sqs,
    queueUrl: QUEUE,
    deadLetteredBefore: 0,
    timing: { pollIntervalMs: 0 },
    started: 0,
    now: () => 0,
    judge: doneAfter(undefined),
    complete: (j) => j.done,
    ...over,
  });
}

describe('waitForQueue', () => {
  it('ends complete once the judgement says done, reporting every check with the queue counts', async () => {
    const { sqs } = scriptedSqs({
      [QUEUE]: [
        { visible: 3, inFlight: 1, delayed: 2 },
        { visible: 0, inFlight: 2 },
        { visible: 0, inFlight: 0 },
      ],
      [DLQ]: [{ visible: 4 }, { visible: 6 }, { visible: 3 }],
    });
    const seen: { made: number; queue: QueueProgress }[] = [];
    const wait = await waitOn(sqs, {
      dlqUrl: DLQ,
      deadLetteredBefore: 4,
      now: steppingClock(10),
      judge: doneAfter(3),
      onProgress: (j, queue) => seen.push({ made: j.made, queue }),
    });
    expect(wait.ended).toBe(WaitEnd.COMPLETE);
    expect(wait.polls).toBe(3);
    expect(wait.judged).toEqual({ made: 3, done: true });
    expect(seen).toEqual([
      { made: 1, queue: { queued: 5, inFlight: 1, deadLettered: 0, elapsedMs: 10 } },
      { made: 2, queue: { queued: 0, inFlight: 2, deadLettered: 2, elapsedMs: 20 } },
      // The DLQ below its mark counts no dead letters, never a negative number.
      { made: 3, queue: { queued: 0, inFlight: 0, deadLettered: 0, elapsedMs: 30 } },
    ]);
    expect(wait.queue).toEqual(seen[2]?.queue);
  });

  it('ends complete rather than incomplete when the work is done as the queue drains', async () => {
    const { sqs } = scriptedSqs({ [QUEUE]: [{ visible: 0 }] });
    const wait = await waitOn(sqs, {
      judge: doneAfter(2),
    });
    expect(wait.ended).toBe(WaitEnd.COMPLETE);
    expect(wait.polls).toBe(2);
  });

  it('ends incomplete only after two consecutive empty checks with the work not done', async () => {
    const { sqs, calls } = scriptedSqs({
      [QUEUE]: [
        { visible: 0 },
        { visible: 0, delayed: 1 },
        { visible: 0 },
        { visible: 0, inFlight: 1 },
        { visible: 0 },
      ],
    });
    const wait = await waitOn(sqs, {});
    expect(wait.ended).toBe(WaitEnd.INCOMPLETE);
    // Empty at checks 1, 3, 5 and 6: only 5 and 6 are consecutive.
    expect(wait.polls).toBe(6);
    expect(calls[QUEUE]).toBe(6);
    // No DLQ watched: none asked, none counted.
    expect(calls[DLQ]).toBeUndefined();
    expect(wait.queue.deadLettered).toBe(0);
  });

  it('ends on timeout once the time since the start reaches it', async () => {
    const { sqs } = scriptedSqs({ [QUEUE]: [{ visible: 1 }] });
    const wait = await waitOn(sqs, {
      timing: { pollIntervalMs: 0, timeoutMs: 1100 },
      started: 100,
      now: steppingClock(400),
    });
    expect(wait.ended).toBe(WaitEnd.TIMEOUT);
    // Elapsed 300, 700, 1100: the third check reaches the limit.
    expect(wait.polls).toBe(3);
    expect(wait.queue.elapsedMs).toBe(1100);
  });

  it('ends interrupted at the first check after an abort, before a timeout that is also due', async () => {
    const { sqs } = scriptedSqs({ [QUEUE]: [{ visible: 1 }] });
    const controller = new AbortController();
    controller.abort();
    const wait = await waitOn(sqs, {
      timing: { pollIntervalMs: 0, timeoutMs: 0, signal: controller.signal },
    });
    expect(wait.ended).toBe(WaitEnd.INTERRUPTED);
    expect(wait.polls).toBe(1);
  });

  it('ends interrupted at the check after an abort that cut its sleep short', async () => {
    const { sqs } = scriptedSqs({ [QUEUE]: [{ visible: 1 }] });
    const controller = new AbortController();
    const wait = await waitOn(sqs, {
      // Longer than the test's own timeout: only the abort ends the sleep in time.
      timing: { pollIntervalMs: 60_000, signal: controller.signal },
      onProgress: () => {
        if (!controller.signal.aborted) setTimeout(() => controller.abort(), 5);
      },
    });
    expect(wait.ended).toBe(WaitEnd.INTERRUPTED);
    expect(wait.polls).toBe(2);
  });
});

describe('deadLetterMark', () => {
  it("is the DLQ's visible count, or 0 without asking when no DLQ is watched", async () => {
    const { sqs, calls } = scriptedSqs({ [DLQ]: [{ visible: 7, inFlight: 2 }] });
    expect(await deadLetterMark(sqs, DLQ)).toBe(7);
    expect(await deadLetterMark(sqs, undefined)).toBe(0);
    expect(calls).toEqual({ [DLQ]: 1 });
  });
});
