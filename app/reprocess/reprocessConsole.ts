import type { CliIo } from '../common/command.js';
import { isProgressStep, renderProgressBar } from '../common/progressBar.js';
import type { PublishedRun, RunProgress } from '../runs/runProgressFile.js';
import type { ReprocessEvent, ReprocessEvents } from './reprocessEvents.js';
import { describeJob, describeResult, jobLine, reprocessJson, reprocessSummary } from './reprocessReport.js';
import type { ReprocessProgress } from './reprocessResult.js';

/** What {@link reprocessConsole} writes to. */
export interface ReprocessConsoleOptions {
  readonly io: Pick<CliIo, 'stdout' | 'stderr' | 'isTTY' | 'stderrColumns'>;
  /** `--json`: one JSON object on stdout, no notes, progress or table. */
  readonly json: boolean;
  /** The run file `rerun ui` reads (app/runs/runProgressFile.ts). */
  readonly run: PublishedRun;
  /** A progress line redrawn in place on a terminal (the command line's liveLine). */
  readonly liveLine: (line: string, columns: number | undefined) => string;
}

/** A planning step's progress, as a run file says it. */
function planningProgress(p: ReprocessProgress): RunProgress {
  return { phase: 'planning', done: p.listedInputs, unit: 'inputs listed', figures: { planned: p.planned } };
}

/**
 * The events of a reprocess rendered: progress to the run file and to stderr (a line rewritten on a
 * terminal, one per step otherwise), notes to stderr, the result (the plan's table, what was done,
 * the job's end) to stdout before its SUMMARY line, so `rerun reprocess ... | less` shows it.
 * `--json` prints neither, only the JSON object.
 */
export function reprocessConsole(options: ReprocessConsoleOptions): ReprocessEvents {
  const { io, json, run } = options;
  let lineOpen = false;
  let lastLogged = -1;
  const human = (text: string) => {
    if (!json) io.stderr(text);
  };
  const result = (text: string) => {
    if (!json) io.stdout(text.replace(/\n$/, ''));
  };
  /** A progress line: redrawn on a terminal; otherwise logged when `log` says so. */
  const progressLine = (line: string, log: boolean) => {
    if (io.isTTY) {
      human(options.liveLine(line, io.stderrColumns));
      lineOpen = true;
    } else if (log) human(`${line}\n`);
  };
  return (event: ReprocessEvent) => {
    switch (event.kind) {
      case 'note':
        return human(event.text);
      case 'progress': {
        const p = event.progress;
        if (event.phase === 'planning') return run.progress(planningProgress(p));
        run.progress(
          p.planComplete
            ? { phase: 'enqueueing', done: p.enqueued, total: p.planned, unit: 'inputs', figures: { pruned: p.pruned } }
            : planningProgress(p),
        );
        // The total is known once the listings end: until then, the bar is against what is planned so far.
        const line =
          `enqueued ${renderProgressBar(p.enqueued, p.planned, 20)}` +
          `${p.planComplete ? '' : ` | listing: ${p.listedInputs} inputs`}${p.pruned > 0 ? ` | pruned ${p.pruned}` : ''}`;
        const log = p.planComplete || (p.enqueued !== lastLogged && isProgressStep(p.enqueued, 10_000));
        if (log && !io.isTTY) lastLogged = p.enqueued;
        return progressLine(line, log);
      }
      case 'waiting': {
        const p = event.progress;
        const { queued, inFlight, deadLettered } = p;
        run.progress({
          phase: 'waiting',
          done: p.done,
          total: p.total,
          unit: 'inputs done',
          figures: { queued, inFlight, deadLettered },
        });
        const line =
          `${renderProgressBar(p.done, p.total, 20)} done | queued ${p.queued}, in flight ${p.inFlight}` +
          `${p.deadLettered > 0 ? `, dead-lettered ${p.deadLettered}` : ''} | ${Math.round(p.elapsedMs / 1000)} s`;
        return progressLine(line, true);
      }
      case 'job': {
        const { view, elapsedMs } = event;
        const done = view.succeeded + view.failed;
        run.progress({
          phase: `job ${view.status}`,
          done,
          total: view.total,
          unit: 'tasks',
          figures: { failed: view.failed },
        });
        const line =
          `job ${view.status.padEnd(10)} ${renderProgressBar(done, view.total, 20)} ` +
          `| failed ${view.failed} | ${Math.round(elapsedMs / 1000)} s`;
        return progressLine(line, true);
      }
      case 'phaseEnd':
        if (lineOpen) human('\n');
        lineOpen = false;
        return;
      case 'jobSubmitted':
        return human(`${jobLine(event.job, event.runner)}\n`);
      case 'plan':
        return result(describeResult(event.result, event.inputBucket, event.sent));
      case 'jobEnd':
        return result(describeJob(event.jobId, event.outcome, event.runner, event.waited));
      case 'summary':
        return io.stdout(
          json
            ? JSON.stringify(reprocessJson(event.parts))
            : `SUMMARY ${JSON.stringify(reprocessSummary(event.parts))}`,
        );
    }
  };
}
