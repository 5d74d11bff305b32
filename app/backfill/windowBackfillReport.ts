import { WaitEnd } from '../common/waitEnd.js';
import { formatStatusCounts } from '../status/formatStatusTable.js';
import { formatWindowStageStatus } from '../status/windowStageStatus.js';
import type { WindowBackfillResult, WindowStagePlan } from './windowBackfillResult.js';

/** Most window lines printed per stage in a plan (the JSON output always has them all). */
const PLAN_LINES = 40;

/** One window stage's plan: its range's counts, what is sent, and the first windows it sends. */
export function describeStagePlan(plan: WindowStagePlan, dryRun: boolean): string {
  const lines = [
    `Stage ${plan.stage}${plan.upstream ? ` (reads ${plan.upstream})` : ''}, windows ${plan.range.from}..` +
      `${plan.range.to}: ${formatStatusCounts(plan.counts)}.`,
    `${plan.tasks.length} window(s) to ${dryRun ? 'enqueue (dry run: nothing is sent)' : 'enqueue'}.`,
  ];
  if (plan.tasks.length === 0) return `${lines.join('\n')}\n`;
  const planned = new Map(plan.tasks.map((t) => [t.window, t]));
  const shown = plan.windows
    .filter((w) => planned.has(w.window))
    .slice(0, PLAN_LINES)
    .map((w) => ({ ...w, reason: planned.get(w.window)?.reason ?? w.reason }));
  const more = plan.tasks.length - shown.length;
  const tableText = formatWindowStageStatus({ windows: shown, skipped: { count: 0, first: [] } });
  return `${lines.join('\n')}\n${tableText}${more > 0 ? `... and ${more} more (--json lists all)\n` : ''}`;
}

/** How a window stage backfill ended: per stage what it sent, and with --wait what got published. */
export function describeStageEnd(result: WindowBackfillResult, from: string, to: string): string {
  const planned = result.stages.reduce((n, s) => n + s.tasks.length, 0);
  if (result.dryRun) return `Dry run: ${planned} task(s) would be enqueued.\n`;
  if (planned === 0 && result.stages.every((s) => s.notSent === undefined)) {
    return 'Nothing to do: every window of the range is up to date for this mode.\n';
  }
  const lines: string[] = [];
  for (const s of result.stages) {
    if (s.notSent !== undefined) {
      lines.push(`${s.stage}: ${s.notSent}; run the same backfill again once it is.`);
      continue;
    }
    const sent = `${s.stage}: enqueued ${s.enqueued}/${s.tasks.length}.`;
    const w = s.wait;
    if (!w) {
      lines.push(`${sent}${result.interrupted ? ' Interrupted: run the same backfill again to resume.' : ''}`);
      continue;
    }
    if (w.ended === WaitEnd.COMPLETE) {
      lines.push(`${sent} All ${w.total} window(s) published in ${Math.round(w.elapsedMs / 1000)} s.`);
    } else if (w.ended === WaitEnd.INCOMPLETE) {
      lines.push(`${sent} The queue is drained but ${w.remaining.length} window(s) are not published:`);
      for (const r of w.remaining) lines.push(`  ${r.window} ${r.status}: ${r.reason}`);
      lines.push(
        w.deadLettered > 0
          ? `${w.deadLettered} message(s) reached the stage's DLQ: rerun redrive --queue <its URL> --dry-run shows why.`
          : 'Their inputs changed after their task ran: run the backfill again.',
      );
    } else if (w.ended === WaitEnd.TIMEOUT) {
      lines.push(`${sent} Timed out with ${w.published}/${w.total} published; the tasks keep running.`);
    } else {
      lines.push(`${sent} Stopped waiting (${w.published}/${w.total} published); the tasks keep running.`);
    }
  }
  if (!result.stages.some((s) => s.wait)) {
    lines.push(`Follow with: rerun status --stage ${result.stages[0]?.stage} --from ${from} --to ${to}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The SUMMARY line's document: per stage what was planned and sent, with the requests it cost. */
export function windowBackfillSummary(result: WindowBackfillResult, stage: string, from: string, to: string) {
  return {
    stage,
    from,
    to,
    mode: result.mode,
    dryRun: result.dryRun,
    token: result.token,
    planned: result.stages.reduce((n, s) => n + s.tasks.length, 0),
    enqueued: result.stages.reduce((n, s) => n + s.enqueued, 0),
    interrupted: result.interrupted,
    stages: result.stages.map((s) => ({
      stage: s.stage,
      windows: s.windows.length,
      planned: s.tasks.length,
      enqueued: s.enqueued,
      requests: { ...s.requests, send: s.sendRequests },
      ...(s.wait
        ? { waited: s.wait.ended, published: s.wait.published, polls: s.wait.polls, waitRequests: s.wait.requests }
        : {}),
      ...(s.notSent !== undefined ? { notSent: s.notSent } : {}),
    })),
  };
}
