import type { SourceIdentity } from '../done/outputMetadata.js';
import type { OutputWriter } from '../publish/OutputWriter.js';
import type { SideOutputWriters } from './sideOutputs.js';

/*
 * What a round's transform built (src/worker/transformAndPublish.ts), and the part of it a lost
 * create keeps for the next round (src/worker/keptOutput.ts).
 */

/** A transform's result: its summary and the writers that hold the outputs, not yet published. */
export interface Built {
  readonly summary: Record<string, string | number>;
  readonly main: OutputWriter;
  readonly sides: SideOutputWriters;
}

/** A create-first round's built output, not published (its create answered 412), and what it was built from. */
export interface KeptOutput {
  readonly built: Built;
  readonly source: SourceIdentity;
  /** The side outputs the round published before its main output, name to ETag, for the output to list. */
  readonly listed: Readonly<Record<string, string>>;
}
