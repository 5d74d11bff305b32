import type { CliIo } from '../common/command.js';
import { isProgressStep, renderProgressBar } from '../common/progressBar.js';
import type { RunEvent } from '../runs/runEvents.js';
import type { PublishedRun, RunProgress } from '../runs/runProgressFile.js';
import { runRenderers } from '../runs/runRenderers.js';
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
 * The events of a reprocess rendered (app/runs/runRenderers.ts): progress to the run file and to
 * stderr, notes to stderr, the result (the plan's table, what was done, the job's end) to stdout
 * before its SUMMARY line. `--json` prints neither, only the JSON object. A reprocess's own kinds
 * (planning and enqueueing, the SQS engine's wait, a Batch Operations job) are said here in the
 * kinds every run tells.
 */
export function reprocessConsole(options: ReprocessConsoleOptions): ReprocessEvents {
  const emit = runRenderers(options);
  const { io } = options;
  let lastLogged = -1;
  /** The kinds every run tells, for one of a reprocess's events. */
  const said = (event: ReprocessEvent): RunEvent => {
    switch (event.kind) {
      case 'note':
      case 'phaseEnd':
        return event;
      case 'progress': {
        const p = event.progress;
        if (event.phase === 'planning') return { kind: 'progress', progress: planningProgress(p) };
        // The total is known once the listings end: until then, the bar is against what is planned so far.
        const text =
          `enqueued ${renderProgressBar(p.enqueued, p.planned, 20)}` +
          `${p.planComplete ? '' : ` | listing: ${p.listedInputs} inputs`}${p.pruned > 0 ? ` | pruned ${p.pruned}` : ''}`;
        const log = p.planComplete || (p.enqueued !== lastLogged && isProgressStep(p.enqueued, 10_000));
        if (log && !io.isTTY) lastLogged = p.enqueued;
        return {
          kind: 'progress',
          progress: p.planComplete
            ? { phase: 'enqueueing', done: p.enqueued, total: p.planned, unit: 'inputs', figures: { pruned: p.pruned } }
            : planningProgress(p),
          line: { text, inPlace: true, log },
        };
      }
      case 'waiting': {
        const p = event.progress;
        const { queued, inFlight, deadLettered } = p;
        const text =
          `${renderProgressBar(p.done, p.total, 20)} done | queued ${p.queued}, in flight ${p.inFlight}` +
          `${p.deadLettered > 0 ? `, dead-lettered ${p.deadLettered}` : ''} | ${Math.round(p.elapsedMs / 1000)} s`;
        return {
          kind: 'progress',
          progress: {
            phase: 'waiting',
            done: p.done,
            total: p.total,
            unit: 'inputs done',
            figures: { queued, inFlight, deadLettered },
          },
          line: { text, inPlace: true, log: true },
        };
      }
      case 'job': {
        const { view, elapsedMs } = event;
        const done = view.succeeded + view.failed;
        const text =
          `job ${view.status.padEnd(10)} ${renderProgressBar(done, view.total, 20)} ` +
          `| failed ${view.failed} | ${Math.round(elapsedMs / 1000)} s`;
        return {
          kind: 'progress',
          progress: {
            phase: `job ${view.status}`,
            done,
            total: view.total,
            unit: 'tasks',
            figures: { failed: view.failed },
          },
          line: { text, inPlace: true, log: true },
        };
      }
      case 'jobSubmitted':
        return { kind: 'note', text: `${jobLine(event.job, event.runner)}\n` };
      case 'plan':
        return { kind: 'result', text: describeResult(event.result, event.inputBucket, event.sent) };
      case 'jobEnd':
        return { kind: 'result', text: describeJob(event.jobId, event.outcome, event.runner, event.waited) };
      case 'end':
        return {
          kind: 'end',
          code: event.code,
          summary: reprocessSummary(event.parts),
          json: reprocessJson(event.parts),
        };
    }
  };
  return (event) => emit(said(event));
}
