import { CLOCK_SKEW_ALLOWANCE_MS } from './clockSkew.js';

/**
 * Whether a delivery is provably the first of its event, so that no earlier attempt of it can have
 * died part-way (after its publish and before its closing check, or between a side output and the
 * main output). Only such a delivery may let the event's eTag alone prove an output current
 * (src/done/eventProvesCurrent.ts); every other one runs the full done-check.
 *
 * Fresh means both:
 * - the message's first receive (`ApproximateReceiveCount` 1): a deferral or a failure brings it
 *   back with a higher count;
 * - the event is younger than one invocation's time limit. An earlier receive of the same message
 *   comes back no sooner than the queue's visibility timeout after it, and Lambda refuses an event
 *   source mapping whose queue's visibility timeout is below the function's timeout (AWS Lambda
 *   Developer Guide, "Creating and configuring an Amazon SQS event source mapping"; a queue whose
 *   timeout is lowered after the mapping exists breaks this, as it breaks Lambda's own retries). So a delivery within the function's timeout of
 *   the event's time has had no earlier receive. This also covers what the receive count cannot: a
 *   message that came back from the DLQ (a redrive sends a new message) and a re-sent message,
 *   which are older than that.
 *
 * An event without a time (rerun's own reprocess messages) is never fresh, nor one dated further
 * ahead of the clock than CLOCK_SKEW_ALLOWANCE_MS (clockSkew.ts). The time limit passed in
 * is the invocation's remaining time when it started, which is at most the function's timeout.
 *
 * @example
 * isFreshDelivery({ receiveCount: 1, eventTime: '2026-12-02T10:00:00.000Z' }, Date.parse('2026-12-02T10:00:05Z'), 60_000); // true
 * isFreshDelivery({ receiveCount: 2, eventTime: '2026-12-02T10:00:00.000Z' }, Date.parse('2026-12-02T10:00:05Z'), 60_000); // false
 */
export function isFreshDelivery(
  delivery: { readonly receiveCount: number; readonly eventTime?: string | undefined },
  now: number,
  timeLimitMs: number,
): boolean {
  if (delivery.receiveCount !== 1 || delivery.eventTime === undefined) return false;
  const eventTime = Date.parse(delivery.eventTime);
  if (Number.isNaN(eventTime)) return false;
  // An event dated in the future beyond clock skew is forged or mistimed: judged fresh, it would
  // stay fresh for every redelivery until that date.
  if (eventTime - now > CLOCK_SKEW_ALLOWANCE_MS) return false;
  return now - eventTime < timeLimitMs;
}
