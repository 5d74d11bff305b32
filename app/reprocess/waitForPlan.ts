import { deadLetterMark, waitForQueue } from '../common/waitForQueue.js';
import { emptyPlanCounts, isSelected, type ReprocessMode, ReprocessState } from './planReprocess.js';
import type { ReprocessResult } from './reprocessResult.js';
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
  const wait = await waitForQueue({
    sqs: options.sqs,
    queueUrl: options.queueUrl,
    dlqUrl: options.dlqUrl,
    deadLetteredBefore: await deadLetterMark(options.sqs, options.dlqUrl),
    timing: options,
    started: at.started,
    now: at.now,
    judge: async () => {
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
      return { remaining, done };
    },
    complete: ({ remaining }) => remaining === 0,
    onProgress: ({ done }, queue) => options.onWait?.({ done, total: run.selected, ...queue }),
  });
  const { done, remaining } = wait.judged;
  const gone = run.tracked ? Math.max(0, run.selected - done - remaining) : 0;
  const total = requestCounts(options, run);
  const requests = {
    list: total.list - at.planRequests.list,
    lookup: total.lookup - at.planRequests.lookup,
    head: total.head - at.planRequests.head,
  };
  const { deadLettered, elapsedMs } = wait.queue;
  return { ended: wait.ended, done, remaining, gone, deadLettered, elapsedMs, tracked: run.tracked, requests };
}
