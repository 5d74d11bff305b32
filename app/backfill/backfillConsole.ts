import type { CliIo } from '../common/command.js';
import { isProgressStep, renderProgressBar } from '../common/progressBar.js';
import type { RunEvent } from '../runs/runEvents.js';
import type { PublishedRun } from '../runs/runProgressFile.js';
import { runRenderers } from '../runs/runRenderers.js';
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
 * The events of a backfill rendered (app/runs/runRenderers.ts): progress to the run file and to
 * stderr, notes to stderr, the plan and how the backfill ended to stdout before its SUMMARY line.
 * The daily summaries' progress is one line redrawn in place on a terminal (a line per step
 * otherwise); a window stage's is a line per step, named by its stage. `--json` prints neither, only
 * the JSON object. A backfill's own kinds (its plans, batches enqueued, checks while waiting, its
 * ends) are said here in the kinds every run tells.
 */
export function backfillConsole(options: BackfillConsoleOptions): BackfillEvents {
  const emit = runRenderers(options);
  const { io } = options;
  /** The kinds every run tells, for one of a backfill's events (a plan is both a count and a table). */
  const said = (event: BackfillEvent): RunEvent[] => {
    switch (event.kind) {
      case 'note':
      case 'phaseEnd':
        return [event];
      case 'plan':
        return [
          { kind: 'progress', progress: { phase: 'planned', done: 0, total: event.plan.tasks.length, unit: 'days' } },
          { kind: 'result', text: describePlan(event.plan, event.from, event.to, event.dryRun) },
        ];
      case 'stagePlan': {
        const { stage, tasks } = event.plan;
        return [
          { kind: 'progress', progress: { phase: 'planned', done: 0, total: tasks.length, unit: `${stage} windows` } },
          { kind: 'result', text: describeStagePlan(event.plan, event.dryRun) },
        ];
      }
      case 'enqueued': {
        const { stage, sent, total } = event;
        const step = isProgressStep(sent, total);
        if (stage !== undefined) {
          const progress = { phase: 'enqueueing', done: sent, total, unit: `${stage} windows` };
          return [
            {
              kind: 'progress',
              progress,
              line: { text: `${stage}: enqueued ${sent}/${total}`, inPlace: false, log: step },
            },
          ];
        }
        const progress = { phase: 'enqueueing', done: sent, total, unit: 'days' };
        const line = io.isTTY
          ? { text: `enqueued ${renderProgressBar(sent, total)}`, inPlace: true, log: true }
          : { text: `enqueued ${sent}/${total}`, inPlace: true, log: step };
        return [{ kind: 'progress', progress, line }];
      }
      case 'waiting': {
        const p = event.progress;
        const { queued, inFlight, deadLettered } = p;
        const { stage } = event;
        const progress = {
          phase: 'waiting',
          done: p.published,
          total: p.total,
          unit: stage !== undefined ? `${stage} windows published` : 'days published',
          figures: { queued, inFlight, deadLettered },
        };
        const line =
          stage !== undefined
            ? { text: `${stage}: ${waitingLine(p)}`, inPlace: false, log: true }
            : { text: waitingLine(p), inPlace: true, log: true };
        return [{ kind: 'progress', progress, line }];
      }
      case 'end':
        return [{ kind: 'result', text: describeEnd(event.result, event.result.dryRun) }];
      case 'summary': {
        const { result } = event;
        const summary = backfillSummary(result, result.mode, result.dryRun);
        return [
          {
            kind: 'end',
            code: event.code,
            summary,
            json: { ...summary, counts: result.counts, tasks: result.tasks, wait: result.wait },
          },
        ];
      }
      case 'stageEnd':
        return [{ kind: 'result', text: describeStageEnd(event.result, event.from, event.to) }];
      case 'stageSummary': {
        const summary = windowBackfillSummary(event.result, event.stage, event.from, event.to);
        return [{ kind: 'end', code: event.code, summary, json: { ...summary, stages: event.result.stages } }];
      }
    }
  };
  return (event) => {
    for (const told of said(event)) emit(told);
  };
}
