import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { OUTPUT_BUCKET } from './SimWorld.js';

/** Where the simulation's worker reads: inputs under `incoming/` in the input bucket. */
export const INPUT_PREFIX = 'incoming/';

/** The main output key of an input (`out/{bucket}/{path}.txt`). */
export function outputKeyOf(source: { readonly bucket: string; readonly key: string }): string {
  return deterministicKey({ prefix: 'out/', source, stripPrefix: INPUT_PREFIX, suffix: '.txt' });
}

/** The quarantine side output's key of an input (`quarantine/{bucket}/{path}.txt`). */
export function quarantineKeyOf(source: { readonly bucket: string; readonly key: string }): string {
  return deterministicKey({ prefix: 'quarantine/', source, stripPrefix: INPUT_PREFIX, suffix: '.txt' });
}

/**
 * What the worker makes of an input, computed directly (no S3): the reference every final state
 * is checked against. A line starting with `!` is a bad row and goes to the quarantine; every other
 * line is upper-cased into the main output.
 */
export function expectedOutputs(content: string): {
  main: string;
  quarantine: string;
  rows: number;
  quarantined: number;
} {
  let main = '';
  let quarantine = '';
  let rows = 0;
  let quarantined = 0;
  for (const line of splitLines(content)) {
    if (line.startsWith('!')) {
      quarantine += `${line}\n`;
      quarantined++;
    } else {
      main += `${line.toUpperCase()}\n`;
      rows++;
    }
  }
  return { main, quarantine, rows, quarantined };
}

function splitLines(content: string): string[] {
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The simulation's worker: a line transform with a quarantine side output, so that every part of
 * the publish protocol runs (side outputs first, the main output as the commit point, multipart
 * outputs sealed). Parts of `partBytes` bytes make a few hundred bytes a multipart output.
 */
export function simWorker(options: { partBytes: number; codeVersion?: string }): WorkerDefinition {
  return defineWorker({
    name: 'sim',
    codeVersion: options.codeVersion ?? 'sim@1',
    outputBucket: OUTPUT_BUCKET,
    outputKey: outputKeyOf,
    sideOutputs: { quarantine: quarantineKeyOf },
    partBytes: options.partBytes,
    contentType: 'text/plain',
    skipReason: (object) => (object.key.startsWith(INPUT_PREFIX) ? undefined : 'outside incoming/'),
    async transform({ lines }, { output, side }) {
      let rows = 0;
      let quarantined = 0;
      for await (const line of lines()) {
        if (line.startsWith('!')) {
          quarantined++;
          await side('quarantine').write(`${line}\n`);
        } else {
          rows++;
          await output.write(`${line.toUpperCase()}\n`);
        }
      }
      return { rows, quarantined };
    },
  });
}
