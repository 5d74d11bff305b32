import type { RunProgress } from './runProgressFile.js';

/** How a progress event shows on the terminal (stderr). */
export interface TerminalLine {
  readonly text: string;
  /** Redrawn in place on a terminal; otherwise (and always when false) a line of its own, when `log` says so. */
  readonly inPlace: boolean;
  /** Whether the line is written off a terminal (or, when not `inPlace`, at all): a step worth a line. */
  readonly log: boolean;
}

/**
 * What every run tells as it goes, whatever its command: the kinds the terminal, the run file
 * `rerun ui` reads (runProgressFile.ts) and `--json` each render (runRenderers.ts). A command's own
 * events (reprocessEvents.ts, backfillEvents.ts) carry `note` and `phaseEnd` as they are and say
 * the rest of theirs in these kinds.
 */
export type RunEvent =
  /** A note for the operator (stderr). */
  | { readonly kind: 'note'; readonly text: string }
  /** Where the run stands; `line` is how the terminal shows it (none: the terminal shows nothing). */
  | { readonly kind: 'progress'; readonly progress: RunProgress; readonly line?: TerminalLine }
  /** A phase with progress lines ended. */
  | { readonly kind: 'phaseEnd' }
  /** What the run found or did, for a reader (stdout, before the SUMMARY line). */
  | { readonly kind: 'result'; readonly text: string }
  /**
   * The run's end: its exit code (0 done, 1 not all done, 130 interrupted) and its closing figures,
   * `summary` for the SUMMARY line, `json` for the `--json` object. The run file is marked ended with
   * `code` from this event.
   */
  | { readonly kind: 'end'; readonly code: number; readonly summary: object; readonly json: object };

/** The kinds every command's events carry as they are. */
export type SharedRunEvent = Extract<RunEvent, { readonly kind: 'note' | 'phaseEnd' }>;

/**
 * The one interface a run reports through: it never writes, it tells its events to a sink, and each
 * destination is a renderer of them.
 */
export type RunEventSink<E = RunEvent> = (event: E) => void;
