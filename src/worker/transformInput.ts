import type { Readable } from 'node:stream';
import type { SourceIdentity } from '../done/outputMetadata.js';
import type { TransformInput } from './defineWorker.js';
import { decodeText, splitLines } from './textHelpers.js';

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
