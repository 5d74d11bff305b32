import { setTimeout as sleep } from 'node:timers/promises';
import { queueCounts } from '../../src/aws/queueCounts.js';
import { emptyPlanCounts, isSelected, type ReprocessMode, ReprocessState } from './planReprocess.js';
import { type ReprocessResult, ReprocessWaitEnd } from './reprocessResult.js';
import { type RunState, requestCounts } from './reprocessRunState.js';
import type { RunReprocessOptions } from './runReprocessOptions.js';
import { verdictStream } from './verdictStream.js';

/** `--wait`: the same plan again, until every planned input is current (or cannot become so). */
export async function waitForPlan(
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
