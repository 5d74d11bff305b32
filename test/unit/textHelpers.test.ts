import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeText, splitLines } from '../../src/worker/textHelpers.js';
import { cuts, splitAt } from '../support/hostileCsv.js';

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const text = fc
  .array(fc.constantFrom('a', 'é', '😀', '温', '\r', '\n', '\r\n', ' '), { maxLength: 40 })
  .map((parts) => parts.join(''));

describe('decodeText and splitLines (the transform input text helpers)', () => {
  it('decode multi-byte UTF-8 whole at any chunk boundary, and split LF, CRLF and CR lines alike', async () => {
    await fc.assert(
      fc.asyncProperty(
        text.chain((t) => {
          const bytes = Buffer.from(t, 'utf8');
          return fc.record({ t: fc.constant(t), bytes: fc.constant(bytes), points: cuts(bytes.length) });
        }),
        async ({ t, bytes, points }) => {
          const chunks = splitAt(bytes, points);
          expect((await collect(decodeText(chunks))).join('')).toBe(t);
          const expected = t === '' ? [] : t.split(/\r\n|\r|\n/);
          if (expected.at(-1) === '') expected.pop();
          expect(await collect(splitLines(decodeText(chunks)))).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('removes a leading BOM and shows invalid bytes as U+FFFD', async () => {
    const chunks = [Buffer.from([0xef, 0xbb]), Buffer.from([0xbf, 0x61, 0xff, 0x62])];
    expect((await collect(decodeText(chunks))).join('')).toBe('a\ufffdb');
  });
});
