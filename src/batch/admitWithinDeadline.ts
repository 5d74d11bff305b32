import { DeadlineNearError } from '../errors.js';
import type { TransformAdmission } from '../worker/processObjectOptions.js';
import type { MemoryBudget } from './MemoryBudget.js';

/**
 * A {@link MemoryBudget}'s admission for one invocation: a transform that waited for memory until
 * less than `marginMs` of the function's time is left does not start (it would run into the
 * timeout, and a timeout returns the whole batch: docs/AWS-BEHAVIOUR.md, "A thrown error or a
 * timeout fails the whole batch"); it fails retryably, gives its reservation back, and its message comes back.
 *
 * @example
 * const admission = admitWithinDeadline(budget, () => context.getRemainingTimeInMillis(), 5000);
 */
export function admitWithinDeadline(
  budget: MemoryBudget,
  remainingTimeMs: () => number,
  marginMs: number,
): TransformAdmission {
  return {
    tryAcquire: (contentLength) => budget.tryAcquire(contentLength),
    async acquire(contentLength) {
      const release = await budget.acquire(contentLength);
      if (remainingTimeMs() < marginMs) {
        release();
        throw new DeadlineNearError(
          `not started: the function deadline came near (less than ${marginMs} ms left) while the transform waited for memory; ` +
            'the message will be retried (raise the function memory or timeout if this repeats)',
        );
      }
      return release;
    },
  };
}
