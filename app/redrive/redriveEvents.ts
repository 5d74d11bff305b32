import type { RunEventSink, SharedRunEvent } from '../runs/runEvents.js';
import type { DeadLetter, RedriveResult } from './redriveDeadLetters.js';

/**
 * What a redrive tells as it runs, in one stream: the kinds every run tells (app/runs/runEvents.ts)
 * and its own, which redriveConsole.ts says in those kinds for the terminal and `--json`.
 */
export type RedriveEvent =
  | SharedRunEvent
  /** A DLQ's turn begins: `label` names it (a worker's or a stage's DLQ). */
  | { readonly kind: 'queue'; readonly label: string; readonly dlqUrl: string }
  /** The DLQ's messages were inspected: each with the reason it last failed, of about `depth`. */
  | {
      readonly kind: 'inspected';
      readonly letters: readonly DeadLetter[];
      readonly depth: number;
      readonly inFlight: number;
    }
  /** Messages moved (or resent) back so far: `moved` of `total`. */
  | { readonly kind: 'moved'; readonly moved: number; readonly total: number }
  /** What became of the DLQ's messages. */
  | { readonly kind: 'queueEnd'; readonly result: RedriveResult }
  /** The run's end: its exit code (1 when a message could not be moved) and every DLQ's result. */
  | {
      readonly kind: 'end';
      readonly code: number;
      readonly dryRun: boolean;
      readonly results: readonly RedriveResult[];
    };

/** Where a redrive sends its events. */
export type RedriveEvents = RunEventSink<RedriveEvent>;
