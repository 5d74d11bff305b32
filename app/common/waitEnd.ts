/**
 * How a tool's wait for its queued work ended: a backfill waits for its windows, a reprocess for its
 * inputs.
 */
export const BackfillWaitEnd = {
  /** Every planned partition is published and current. */
  COMPLETE: 'complete',
  /** The queue is drained but some planned partitions are not published (failed, or changed again). */
  INCOMPLETE: 'incomplete',
  TIMEOUT: 'timeout',
  INTERRUPTED: 'interrupted',
} as const;
export type BackfillWaitEnd = (typeof BackfillWaitEnd)[keyof typeof BackfillWaitEnd];
