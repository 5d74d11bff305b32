/**
 * Version of the daily summary's code and format. Bump it when the summary bytes would change: every
 * published summary then reads as stale in `rerun status` (its manifest names the old version), and
 * the next backfill rebuilds it. The CLI plans with this constant, so deploy the stack and run the
 * CLI from the same release.
 *
 * @example
 * judgePartition(listing, SUMMARIZE_CODE_VERSION);
 */
export const SUMMARIZE_CODE_VERSION = 'summarize@1';
