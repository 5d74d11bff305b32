import type { Context } from 'aws-lambda';
import type { TransformAdmission } from '../worker/processObjectOptions.js';
import type { ReadDeadline } from '../worker/readGuard.js';
import { admitWithinDeadline } from './admitWithinDeadline.js';
import type { MemoryBudget } from './MemoryBudget.js';
import { defaultDeadlineMarginMs } from './runBatch.js';

/** The time and memory rules of one invocation, shared by every record or task it runs. */
export interface InvocationLimits {
  /** Nothing starts, and a read stops, when less than this much of the function's time is left. */
  readonly marginMs: number;
  /** The memory budget's admission of transforms, when there is a budget. */
  readonly admission?: TransformAdmission;
  /** What every read of the invocation judges its time by (src/worker/readGuard.ts). */
  readonly deadline: ReadDeadline;
}

/**
 * The limits of one invocation, as the SQS batch handler and the Batch Operations handler apply
 * them: the deadline margin (given, or a tenth of the time left), the memory budget's admission
 * within that margin, and the read deadline every read of the invocation shares.
 *
 * @example
 * const { marginMs, admission, deadline } = invocationLimits(context, { budget, timeLimitMs, now: Date.now });
 */
export function invocationLimits(
  context: Context,
  options: {
    readonly deadlineMarginMs?: number | undefined;
    readonly budget?: MemoryBudget | undefined;
    /** The time left when the invocation started: at most the function's timeout. */
    readonly timeLimitMs: number;
    readonly now: () => number;
  },
): InvocationLimits {
  const remainingTimeMs = () => context.getRemainingTimeInMillis();
  const marginMs = options.deadlineMarginMs ?? defaultDeadlineMarginMs(remainingTimeMs());
  return {
    marginMs,
    ...(options.budget ? { admission: admitWithinDeadline(options.budget, remainingTimeMs, marginMs) } : {}),
    deadline: {
      remainingTimeMs,
      marginMs,
      timeLimitMs: options.timeLimitMs,
      now: options.now,
      reads: { active: 0, started: 0 },
    },
  };
}
