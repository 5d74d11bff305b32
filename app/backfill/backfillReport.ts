import { WaitEnd } from '../common/waitEnd.js';
import { formatStatusCounts, formatStatusTable } from '../status/formatStatusTable.js';
import type { BackfillResult } from './backfillResult.js';
import type { BackfillPlan } from './planBackfill.js';

/** Most task lines printed in a plan (the JSON output always has them all). */
const PLAN_LINES = 40;

/** The SUMMARY line's document: what was planned and sent, and how the wait ended. */
export function backfillSummary(result: BackfillResult, mode: string, dryRun: boolean) {
  const ended = result.wait?.ended;
  return {
    from: result.from,
    to: result.to,
    mode,
    dryRun,
    planned: result.tasks.length,
    enqueued: result.enqueued,
    interrupted: result.interrupted,
    planRequests: result.planRequests,
    ...(result.wait
      ? {
          waited: ended,
          published: result.wait.published,
          notPublished: result.wait.remaining.length,
          deadLettered: result.wait.deadLettered,
          seconds: Math.round(result.wait.elapsedMs / 1000),
        }
      : {}),
  };
}

/** The plan of a backfill: the window's counts, what the mode sends, and the first days it sends. */
export function describePlan(plan: BackfillPlan, from: string, to: string, dryRun: boolean): string {
  const lines = [
    `Window ${from}..${to}: ${formatStatusCounts(plan.counts)}.`,
    `Mode ${plan.mode}: ${plan.tasks.length} partition(s) to ${dryRun ? 'enqueue (dry run: nothing is sent)' : 'enqueue'}.`,
  ];
  if (plan.tasks.length === 0) return `${lines.join('\n')}\n`;
  const byDay = new Map(plan.partitions.map((p) => [p.day, p]));
  const shown = plan.tasks.slice(0, PLAN_LINES).flatMap((t) => {
    const p = byDay.get(t.day);
    return p ? [p] : [];
  });
  const more = plan.tasks.length - shown.length;
  return `${lines.join('\n')}\n${formatStatusTable(shown)}${more > 0 ? `... and ${more} more (--json lists all)\n` : ''}`;
}

/** How a backfill ended: what it sent, and with --wait what got published. */
export function describeEnd(result: BackfillResult, dryRun: boolean): string {
  if (dryRun) return `Dry run: ${result.tasks.length} task(s) would be enqueued.\n`;
  if (result.tasks.length === 0) return 'Nothing to do: every partition of the window is up to date for this mode.\n';
  if (result.interrupted) {
    return `Interrupted after enqueueing ${result.enqueued}/${result.tasks.length}: run the same backfill again to resume.\n`;
  }
  const sent = `Enqueued ${result.enqueued} task(s).`;
  const w = result.wait;
  if (!w) return `${sent} Follow with: rerun status --from ${result.from} --to ${result.to}\n`;
  const remaining = w.remaining.map((r) => `  dt=${r.day} ${r.status}: ${r.reason}\n`).join('');
  switch (w.ended) {
    case WaitEnd.COMPLETE:
      return `${sent} All ${w.total} partition(s) published in ${Math.round(w.elapsedMs / 1000)} s.\n`;
    case WaitEnd.INCOMPLETE:
      return (
        `${sent} The queue is drained but ${w.remaining.length} partition(s) are not published:\n${remaining}` +
        (w.deadLettered > 0
          ? `${w.deadLettered} message(s) reached the DLQ: rerun redrive --queue summarize --dry-run shows why.\n`
          : 'Their inputs changed after their task ran: run the backfill again.\n')
      );
    case WaitEnd.TIMEOUT:
      return `${sent} Timed out with ${w.published}/${w.total} published; the tasks keep running. Check with rerun status.\n`;
    default:
      return `${sent} Stopped waiting (${w.published}/${w.total} published); the tasks keep running.\n`;
  }
}
