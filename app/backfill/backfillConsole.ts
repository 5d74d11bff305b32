import { type CliIo, writeResult } from '../common/command.js';
import { isProgressStep, renderProgressBar } from '../common/progressBar.js';
import type { PublishedRun } from '../runs/runProgressFile.js';
import type { BackfillEvent, BackfillEvents } from './backfillEvents.js';
import { backfillSummary, describeEnd, describePlan } from './backfillReport.js';
import type { BackfillProgress } from './backfillResult.js';
import { describeStageEnd, describeStagePlan, windowBackfillSummary } from './windowBackfillReport.js';

/** What {@link backfillConsole} writes to. */
export interface BackfillConsoleOptions {
  readonly io: Pick<CliIo, 'stdout' | 'stderr' | 'isTTY' | 'stderrColumns'>;
  /** `--json`: one JSON object on stdout, no notes, progress or table. */
  readonly json: boolean;
  /**
   * The run file `rerun ui` reads (app/runs/runProgressFile.ts): a backfill of the daily summaries
   * counts days in it, one of window stages counts each stage's windows, named by the stage.
   */
  readonly run?: PublishedRun;
  /** A progress line redrawn in place on a terminal (the command line's liveLine). */
  readonly liveLine: (line: string, columns: number | undefined) => string;
}

/** A progress check while waiting, as its progress line says it. */
function waitingLine(p: BackfillProgress): string {
  return (
    `${renderProgressBar(p.published, p.total)} published | queued ${p.queued}, in flight ${p.inFlight}` +
    `${p.deadLettered > 0 ? `, dead-lettered ${p.deadLettered}` : ''} | ${Math.round(p.elapsedMs / 1000)} s`
  );
}

/**
 * The events of a backfill rendered: progress to the run file and to stderr, notes to stderr, the
 * plan and how the backfill ended to stdout before its SUMMARY line, so `rerun backfill ... | less`
 * shows them. The daily summaries' progress is one line redrawn in place on a terminal (a line per
 * step otherwise); a window stage's is a line per step, named by its stage. `--json` prints neither,
 * only the JSON object.
 */
export function backfillConsole(options: BackfillConsoleOptions): BackfillEvents {
  const { io, json, run } = options;
  let lineOpen = false;
  const human = (text: string) => {
    if (!json) io.stderr(text);
  };
  const table = (text: string) => {
    if (!json) writeResult(io, text);
  };
  /** A progress line of the daily summaries: redrawn on a terminal; otherwise logged when `log` says so. */
  const progressLine = (line: string, log: boolean) => {
    if (io.isTTY) {
      human(options.liveLine(line, io.stderrColumns));
      lineOpen = true;
    } else if (log) human(`${line}\n`);
  };
  return (event: BackfillEvent) => {
    switch (event.kind) {
      case 'note':
        return human(event.text);
      case 'plan':
        run?.progress({ phase: 'planned', done: 0, total: event.plan.tasks.length, unit: 'days' });
        return table(describePlan(event.plan, event.from, event.to, event.dryRun));
      case 'stagePlan': {
        const { stage, tasks } = event.plan;
        run?.progress({ phase: 'planned', done: 0, total: tasks.length, unit: `${stage} windows` });
        return table(describeStagePlan(event.plan, event.dryRun));
      }
      case 'enqueued': {
        const { stage, sent, total } = event;
        if (stage !== undefined) {
          run?.progress({ phase: 'enqueueing', done: sent, total, unit: `${stage} windows` });
          if (isProgressStep(sent, total)) human(`${stage}: enqueued ${sent}/${total}\n`);
          return;
        }
        run?.progress({ phase: 'enqueueing', done: sent, total, unit: 'days' });
        return io.isTTY
          ? progressLine(`enqueued ${renderProgressBar(sent, total)}`, true)
          : progressLine(`enqueued ${sent}/${total}`, isProgressStep(sent, total));
      }
      case 'waiting': {
        const p = event.progress;
        const { queued, inFlight, deadLettered } = p;
        run?.progress({
          phase: 'waiting',
          done: p.published,
          total: p.total,
          unit: event.stage !== undefined ? `${event.stage} windows published` : 'days published',
          figures: { queued, inFlight, deadLettered },
        });
        if (event.stage !== undefined) return human(`${event.stage}: ${waitingLine(p)}\n`);
        return progressLine(waitingLine(p), true);
      }
      case 'phaseEnd':
        if (lineOpen) human('\n');
        lineOpen = false;
        return;
      case 'end':
        return table(describeEnd(event.result, event.result.dryRun));
      case 'summary': {
        const { result } = event;
        const summary = backfillSummary(result, result.mode, result.dryRun);
        return io.stdout(
          json
            ? JSON.stringify({ ...summary, counts: result.counts, tasks: result.tasks, wait: result.wait })
            : `SUMMARY ${JSON.stringify(summary)}`,
        );
      }
      case 'stageEnd':
        return table(describeStageEnd(event.result, event.from, event.to));
      case 'stageSummary': {
        const summary = windowBackfillSummary(event.result, event.stage, event.from, event.to);
        return io.stdout(
          json ? JSON.stringify({ ...summary, stages: event.result.stages }) : `SUMMARY ${JSON.stringify(summary)}`,
        );
      }
    }
  };
}
