import type { RunEvent } from '../runs/runEvents.js';
import { type RunRenderersOptions, runRenderers } from '../runs/runRenderers.js';
import { formatStatusCounts, formatStatusTable } from './formatStatusTable.js';
import { formatObjectStageStatus } from './objectStageStatus.js';
import type { JudgedStatus, StatusEvent, StatusEvents } from './statusEvents.js';
import { formatWindowStageStatus } from './windowStageStatus.js';

/** How the terminal says what was judged: its header or hint (stderr), its table and counts (stdout). */
function described(judged: JudgedStatus): RunEvent[] {
  const requests = `(${judged.report.requests.list} list + ${judged.report.requests.head} HEAD requests)`;
  switch (judged.of) {
    case 'summaries': {
      const { report } = judged;
      return [
        { kind: 'result', text: formatStatusTable(report.partitions) },
        ...(judged.hint ? [{ kind: 'note', text: judged.hint } as const] : []),
        { kind: 'result', text: `${formatStatusCounts(report.counts)} ${requests}` },
      ];
    }
    case 'objectStage': {
      const { report } = judged;
      const toDo = report.toDo > 0 ? ' (rerun reprocess enqueues them)' : '';
      return [
        {
          kind: 'note',
          text:
            `Stage "${report.stage}" (${report.from}): ${report.prefix} of ${report.inputBucket}. ` +
            `Note: ${report.codeVersion.note}.\n`,
        },
        { kind: 'result', text: formatObjectStageStatus(report) },
        {
          kind: 'result',
          text: `${report.inputs} input(s): ${report.counts.current} current, ${report.toDo} to do${toDo} ${requests}`,
        },
      ];
    }
    case 'windowStage': {
      const { report } = judged;
      const skipped = report.skipped.count > 0 ? `, ${report.skipped.count} key(s) in no window skipped` : '';
      return [
        {
          kind: 'note',
          text: `Window stage "${report.stage}" (${report.from}), ${judged.forms}, code version ${report.codeVersion}.\n`,
        },
        { kind: 'result', text: formatWindowStageStatus(report) },
        { kind: 'result', text: `${formatStatusCounts(report.counts)}${skipped} ${requests}` },
      ];
    }
  }
}

/** The figures of a status's SUMMARY line. */
function summaryOf(judged: JudgedStatus): object {
  const { report } = judged;
  switch (judged.of) {
    case 'summaries':
      return { from: judged.report.from, to: judged.report.to, ...judged.report.counts, requests: report.requests };
    case 'objectStage': {
      const { stage, prefix, inputs, toDo, counts } = judged.report;
      return { stage, prefix, inputs, toDo, ...counts, requests: report.requests };
    }
    case 'windowStage': {
      const { stage, range, counts, skipped } = judged.report;
      return { stage, from: range.from, to: range.to, ...counts, skipped: skipped.count, requests: report.requests };
    }
  }
}

/**
 * The events of a `rerun status` rendered (app/runs/runRenderers.ts): its header or hint to stderr,
 * the table and its counts to stdout before the SUMMARY line. `--json` prints only the whole report.
 *
 * @example
 * const emit = statusConsole({ io, json: false, liveLine });
 */
export function statusConsole(options: Omit<RunRenderersOptions, 'run'>): StatusEvents {
  const emit = runRenderers(options);
  const said = (event: StatusEvent): RunEvent[] => {
    switch (event.kind) {
      case 'note':
      case 'phaseEnd':
        return [event];
      case 'judged':
        return described(event.judged);
      case 'end':
        return [{ kind: 'end', code: event.code, summary: summaryOf(event.judged), json: event.judged.report }];
    }
  };
  return (event) => {
    for (const told of said(event)) emit(told);
  };
}
