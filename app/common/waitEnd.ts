/**
 * How a tool's wait for its queued work ended: a backfill waits for its windows, a reprocess for its
 * inputs.
 */
export const WaitEnd = {
  /** Every planned window is published and current, or every selected input is current. */
  COMPLETE: 'complete',
  /** The queue is drained but some of the planned work is not done (failed, or changed again). */
  INCOMPLETE: 'incomplete',
  /** The tool's `--timeout` passed first. */
  TIMEOUT: 'timeout',
  /** Interrupted (Ctrl-C): the queued work goes on without the tool. */
  INTERRUPTED: 'interrupted',
} as const;
export type WaitEnd = (typeof WaitEnd)[keyof typeof WaitEnd];
