import { type CliIo, writeResult } from '../common/command.js';
import type { RunEvent, RunEventSink } from './runEvents.js';
import type { PublishedRun } from './runProgressFile.js';

/** What the terminal renderer writes to. */
export type RunTerminalIo = Pick<CliIo, 'stdout' | 'stderr' | 'isTTY' | 'stderrColumns'>;

/**
 * The terminal's rendering of a run: notes and progress lines on stderr (a line redrawn in place on a
 * terminal, one per step otherwise), the result and then the SUMMARY line on stdout, so
 * `rerun ... | less` shows them.
 *
 * @example
 * const sink = terminalRenderer(io, liveLine);
 * sink({ kind: 'note', text: 'Planning...\n' });
 */
export function terminalRenderer(
  io: RunTerminalIo,
  liveLine: (line: string, columns: number | undefined) => string,
): RunEventSink {
  let lineOpen = false;
  return (event) => {
    switch (event.kind) {
      case 'note':
        return io.stderr(event.text);
      case 'progress': {
        const { line } = event;
        if (line?.inPlace && io.isTTY) {
          io.stderr(liveLine(line.text, io.stderrColumns));
          lineOpen = true;
        } else if (line?.log) io.stderr(`${line.text}\n`);
        return;
      }
      case 'phaseEnd':
        if (lineOpen) io.stderr('\n');
        lineOpen = false;
        return;
      case 'result':
        return writeResult(io, event.text);
      case 'end':
        return io.stdout(`SUMMARY ${JSON.stringify(event.summary)}`);
    }
  };
}

/**
 * The run file's rendering of a run (runProgressFile.ts): where it stands, and at its end the exit
 * code, for `rerun ui`.
 *
 * @example
 * runFileRenderer(run)({ kind: 'progress', progress: { phase: 'waiting', done: 1, total: 3, unit: 'days' } });
 */
export function runFileRenderer(run: PublishedRun): RunEventSink {
  return (event) => {
    if (event.kind === 'progress') run.progress(event.progress);
    else if (event.kind === 'end') run.end(event.code);
  };
}

/**
 * `--json`'s rendering of a run: one JSON object on stdout, from its end event, nothing else.
 *
 * @example
 * jsonRenderer(io)({ kind: 'end', code: 0, summary: { ok: true }, json: { ok: true, counts: {} } });
 */
export function jsonRenderer(io: Pick<CliIo, 'stdout'>): RunEventSink {
  return (event) => {
    if (event.kind === 'end') io.stdout(JSON.stringify(event.json));
  };
}

/** What {@link runRenderers} writes to. */
export interface RunRenderersOptions {
  readonly io: RunTerminalIo;
  /** `--json`: the JSON object instead of the terminal's lines. */
  readonly json: boolean;
  /** The run file `rerun ui` reads, when the run has one. */
  readonly run?: PublishedRun;
  /** A progress line redrawn in place on a terminal (the command line's liveLine). */
  readonly liveLine: (line: string, columns: number | undefined) => string;
}

/**
 * A run's events told to every destination it has: the run file (when there is one), and the
 * terminal or, with `--json`, the JSON object.
 *
 * @example
 * const emit = runRenderers({ io, json: false, run, liveLine });
 * emit({ kind: 'progress', progress: { phase: 'enqueueing', done: 2, total: 5, unit: 'days' } });
 */
export function runRenderers(options: RunRenderersOptions): RunEventSink {
  const { io, json, run, liveLine } = options;
  const sinks = [...(run ? [runFileRenderer(run)] : []), json ? jsonRenderer(io) : terminalRenderer(io, liveLine)];
  return (event: RunEvent) => {
    for (const sink of sinks) sink(event);
  };
}
