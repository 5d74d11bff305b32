import type { KeptOutput } from './builtOutput.js';
import type { ObjectOutcome } from './ObjectOutcome.js';
import type { FinalOutput } from './sideOutputs.js';

/*
 * How one round of processObject ends (src/worker/processObject.ts reads it to choose between
 * returning, a closing check and another round).
 */

/**
 * How one round ended: an outcome with the side outputs the final output lists and how many side
 * objects (or outputs listing one) this round changed, or a lost race with the side objects it created.
 */
export type AttemptResult =
  | {
      readonly outcome: ObjectOutcome;
      readonly final: FinalOutput;
      readonly changedSideObjects: number;
      /** The input did not exist when this round read it. */
      readonly inputGone?: boolean;
      /** With inputGone: the output in place names this input and lists a side object that is missing or changed. */
      readonly listedSideGone?: string;
      /** This round published the output with `If-None-Match: *`: there was none before it. */
      readonly created?: boolean;
      /** The round's done-check found an output at the key (false when it skipped the check and created). */
      readonly outputWasInPlace: boolean;
    }
  | {
      readonly lostRace: true;
      readonly created: Readonly<Record<string, string>>;
      /** The main output the round built and could not publish, when it can be published later (keptOutput.ts). */
      readonly kept?: KeptOutput;
    };
