import type { Readable } from 'node:stream';
import type { SourceIdentity } from '../done/outputMetadata.js';
import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import type { TransformInput } from './defineWorker.js';
import { decodeText, splitLines } from './textHelpers.js';

/** The names of {@link createTransformInput}'s input, checked by checkOptions (tsc fails when this list and the type differ). */
const TRANSFORM_INPUT_NAMES = {
  source: true,
  body: true,
  contentLength: true,
  countDecoded: true,
} as const satisfies OptionNames<Parameters<typeof createTransformInput>[0]>;

/**
 * Builds what a transform reads: the raw body, and the text helpers over it. The helpers read the
 * same stream as `body`: use one of `body`, `text()` or `lines()`, once.
 *
 * @example
 * const input = createTransformInput({ source, body: Readable.from([Buffer.from('a\nb')]), contentLength: 3 });
 * for await (const line of input.lines()) console.log(line); // 'a', 'b'
 */
export function createTransformInput(input: {
  readonly source: SourceIdentity;
  readonly body: Readable;
  readonly contentLength: number;
  /** Receives the transform's decoded byte counts (processObject passes its ReadGuard's). @default ignores them */
  readonly countDecoded?: (bytes: number) => void;
}): TransformInput {
  checkOptions('createTransformInput', input, TRANSFORM_INPUT_NAMES, (m) => new WorkerConfigurationError(m));
  const { source, body, contentLength } = input;
  return {
    source,
    body,
    contentLength,
    text: () => decodeText(body),
    lines: () => splitLines(decodeText(body)),
    countDecoded: input.countDecoded ?? (() => {}),
  };
}
