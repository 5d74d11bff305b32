import { ReprocessWaitEnd } from './reprocessResult.js';

/** `rerun reprocess`'s exit: 130 interrupted, 1 when waiting ended with inputs not done or timed out, else 0. */
export function reprocessExitCode(interrupted: boolean, ended: ReprocessWaitEnd | undefined): number {
  if (interrupted || ended === ReprocessWaitEnd.INTERRUPTED) return 130;
  return ended === ReprocessWaitEnd.INCOMPLETE || ended === ReprocessWaitEnd.TIMEOUT ? 1 : 0;
}
