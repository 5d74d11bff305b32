import { alignColumns } from '../alignColumns.js';
import type { DeadLetter, RedriveResult } from './redriveDeadLetters.js';

/** The inspected dead letters of one DLQ as a table, with how many more it holds. */
export function formatLetters(letters: readonly DeadLetter[], depth: number, inFlight: number): string {
  if (letters.length === 0 && inFlight > 0) {
    // Received by someone else and not yet returned: the DLQ is not empty, only unreadable now.
    return (
      `No visible message in the DLQ: about ${inFlight} are held invisible by another reader (another rerun ` +
      "redrive, a console poll, a consumer of the DLQ). They return when that reader's visibility timeout ends: " +
      'run this again then.\n'
    );
  }
  if (letters.length === 0) return 'No message in the DLQ.\n';
  const header = ['MESSAGE', 'RECEIVES', 'SUBJECT', 'REASON'];
  const rows = letters.map((l) => [
    l.messageId,
    l.receiveCount === undefined ? '-' : String(l.receiveCount),
    l.subject,
    // A dead letter that would fail again for the same reason is marked: fix it, or drop it.
    l.wouldFailAgain ? `[WOULD FAIL AGAIN] ${l.reason ?? '-'}` : (l.reason ?? '-'),
  ]);
  const shown = depth > letters.length ? ` (${letters.length} of about ${depth} shown)` : '';
  const held =
    inFlight > 0 ? ` About ${inFlight} more are held invisible by another reader: not shown, not moved.` : '';
  return `${alignColumns([header, ...rows])}\n${letters.length} message(s)${shown}.${held}\n`;
}

/** What became of one DLQ's messages (or would, in a dry run). */
export function describeResult(result: RedriveResult): string {
  if (result.dryRun) {
    const kept = result.keptBack.length;
    const stay = kept > 0 ? `; ${kept} marked [WOULD FAIL AGAIN] would stay (--include-doomed moves them too)` : '';
    return `Dry run: ${result.inspected.length - kept} message(s) would be moved back${stay}; nothing was moved.\n`;
  }
  if (result.inspected.length === 0) {
    return result.inFlight > 0
      ? 'Nothing moved: the messages held elsewhere are not readable now.\n'
      : 'Nothing to move.\n';
  }
  const failed = result.failed.map((f) => `  ${f.messageId}: ${f.error}\n`).join('');
  const kept = result.keptBack.length > 0 ? `Kept in the DLQ (would fail again): ${result.keptBack.join(', ')}\n` : '';
  return (
    `Moved ${result.moved} message(s) back to ${result.sourceQueueUrl ?? 'their source queue'} (${result.method}).\n` +
    kept +
    (failed ? `Not moved:\n${failed}` : '')
  );
}

/** A redrive's totals over its DLQs. */
function totals(results: readonly RedriveResult[]) {
  return {
    inspected: results.reduce((n, r) => n + r.inspected.length, 0),
    moved: results.reduce((n, r) => n + r.moved, 0),
    keptBack: results.reduce((n, r) => n + r.keptBack.length, 0),
    failed: results.reduce((n, r) => n + r.failed.length, 0),
    inFlight: results.reduce((n, r) => n + r.inFlight, 0),
  };
}

/** The figures of a redrive's SUMMARY line: the totals over its DLQs, and how many DLQs. */
export function redriveSummary(results: readonly RedriveResult[], dryRun: boolean): object {
  return { dryRun, ...totals(results), queues: results.length };
}

/** A redrive's `--json` object: the totals over its DLQs, and every DLQ's result. */
export function redriveJson(results: readonly RedriveResult[], dryRun: boolean): object {
  return { dryRun, ...totals(results), queues: results };
}
