import { describe, expect, it } from 'vitest';
import {
  boundedLines,
  boundedText,
  ManifestLineTooLongError,
  ManifestTooLargeError,
} from '../../src/intake/manifestLines.js';

const lines = async (chunks: readonly (string | Uint8Array)[], maxLineBytes?: number) => {
  const out: string[] = [];
  async function* source() {
    yield* chunks;
  }
  for await (const line of boundedLines(source(), { file: 's3://b/k', ...(maxLineBytes ? { maxLineBytes } : {}) })) {
    out.push(line);
  }
  return out;
};

describe('boundedLines: the lines of a manifest, each held up to a limit', () => {
  it('splits on LF and CRLF across chunk boundaries, multi-byte characters whole, the last line without an end too', async () => {
    const bytes = Buffer.from('a,b\r\nc,ü\nlast');
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(await lines([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(['a,b', 'c,ü', 'last']);
    }
  });

  it('accepts a line of exactly the limit and refuses one byte more, naming the file, the line and the limit', async () => {
    expect(await lines(['ok\n', 'x'.repeat(8), '\n'], 8)).toEqual(['ok', 'x'.repeat(8)]);
    const refused = lines(['ok\n', 'x'.repeat(5), 'y'.repeat(4)], 8);
    await expect(refused).rejects.toBeInstanceOf(ManifestLineTooLongError);
    await expect(lines(['ok\n', 'x'.repeat(9)], 8)).rejects.toThrow(/^s3:\/\/b\/k: line 2 is longer than 8 bytes/);
  });
});

describe('boundedText: a manifest.json, held up to a limit', () => {
  async function* chunks(...parts: string[]) {
    for (const part of parts) yield Buffer.from(part);
  }

  it('returns the whole text within the limit and refuses one byte more, naming the file and the limit', async () => {
    expect(await boundedText(chunks('{"a":', '1}'), { file: 's3://b/m.json', maxBytes: 7 })).toBe('{"a":1}');
    const refused = boundedText(chunks('{"a":', '12}'), { file: 's3://b/m.json', maxBytes: 7 });
    await expect(refused).rejects.toBeInstanceOf(ManifestTooLargeError);
    await expect(boundedText(chunks('x'.repeat(8)), { file: 's3://b/m.json', maxBytes: 7 })).rejects.toThrow(
      /^s3:\/\/b\/m\.json is larger than 7 bytes/,
    );
  });
});
