import { isProgressStep, renderProgressBar } from '../common/progressBar.js';
import type { RunEvent } from '../runs/runEvents.js';
import { type RunRenderersOptions, runRenderers } from '../runs/runRenderers.js';
import type { RedriveEvent, RedriveEvents } from './redriveEvents.js';
import { describeResult, formatLetters, redriveJson, redriveSummary } from './redriveReport.js';

/**
 * The events of a redrive rendered (app/runs/runRenderers.ts): notes and the moving's progress to
 * stderr (a line redrawn in place on a terminal, one per step otherwise), each DLQ's messages and
 * what became of them to stdout before the SUMMARY line. `--json` prints only the JSON object of
 * every DLQ's result.
 *
 * @example
 * const emit = redriveConsole({ io, json: false, liveLine });
 */
export function redriveConsole(options: Omit<RunRenderersOptions, 'run'>): RedriveEvents {
  const emit = runRenderers(options);
  const { io } = options;
  /** The kinds every run tells, for one of a redrive's events. */
  const said = (event: RedriveEvent): RunEvent => {
    switch (event.kind) {
      case 'note':
      case 'phaseEnd':
        return event;
      case 'queue':
        return { kind: 'result', text: `\n${event.label}: ${event.dlqUrl}` };
      case 'inspected':
        return { kind: 'result', text: formatLetters(event.letters, event.depth, event.inFlight) };
      case 'moved': {
        const { moved, total } = event;
        const line = io.isTTY
          ? { text: `moved ${renderProgressBar(moved, total)}`, inPlace: true, log: true }
          : { text: `moved ${moved}/${total}`, inPlace: false, log: isProgressStep(moved, total) };
        return { kind: 'progress', progress: { phase: 'moving', done: moved, total, unit: 'messages' }, line };
      }
      case 'queueEnd':
        return { kind: 'result', text: describeResult(event.result) };
      case 'end':
        return {
          kind: 'end',
          code: event.code,
          summary: redriveSummary(event.results, event.dryRun),
          json: redriveJson(event.results, event.dryRun),
        };
    }
  };
  return (event) => emit(said(event));
}
