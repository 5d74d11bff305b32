import { describe, expect, it } from 'vitest';
import { LineReader, type TextLine } from '../../src/normalize/lineReader.js';

function readLines(chunks: string[], limits: { maxRecordBytes?: number; maxRawChars?: number } = {}): TextLine[] {
  const reader = new LineReader(limits);
  const lines: TextLine[] = [];
  const drain = () => {
    for (let l = reader.nextLine(); l !== undefined; l = reader.nextLine()) lines.push(l);
  };
  for (const chunk of chunks) {
    reader.push(chunk);
    drain();
  }
  reader.end();
  drain();
  return lines;
}

describe('LineReader', () => {
  it('splits on LF, CRLF and a lone CR (classic Mac OS), and returns an unterminated last line at end()', () => {
    expect(readLines(['a\r\nb\rc\n\nlast'])).toEqual([
      { line: 1, text: 'a', chars: 1, oversized: false },
      { line: 2, text: 'b', chars: 1, oversized: false },
      { line: 3, text: 'c', chars: 1, oversized: false },
      { line: 4, text: '', chars: 0, oversized: false },
      { line: 5, text: 'last', chars: 4, oversized: false },
    ]);
  });

  it('returns no phantom line after a final newline, and nothing for empty input', () => {
    expect(readLines(['x\n']).map((l) => l.text)).toEqual(['x']);
    expect(readLines([])).toEqual([]);
    expect(readLines(['', ''])).toEqual([]);
  });

  it('waits for the rest of a line that continues in the next chunk', () => {
    const reader = new LineReader();
    reader.push('{"a":');
    expect(reader.nextLine()).toBeUndefined();
    reader.push('1}\r');
    // A CR ends the line at once; an LF starting the next chunk completes the CRLF, not a new line.
    expect(reader.nextLine()).toEqual({ line: 1, text: '{"a":1}', chars: 7, oversized: false });
    expect(reader.nextLine()).toBeUndefined();
    reader.push('\nrest');
    expect(reader.nextLine()).toBeUndefined();
    reader.end();
    expect(reader.nextLine()).toEqual({ line: 2, text: 'rest', chars: 4, oversized: false });
    expect(reader.nextLine()).toBeUndefined();
  });

  it('marks a line over maxRecordBytes (UTF-8 bytes) as oversized, keeping only an excerpt', () => {
    expect(readLines(['ééé\nabcdef\nok\n'], { maxRecordBytes: 5, maxRawChars: 2 })).toEqual([
      { line: 1, text: 'ééé', chars: 3, oversized: true },
      { line: 2, text: 'abc', chars: 6, oversized: true },
      { line: 3, text: 'ok', chars: 2, oversized: false },
    ]);
  });

  it('refuses a push before draining and after end()', () => {
    const reader = new LineReader();
    reader.push('a\nb\n');
    expect(() => reader.push('c')).toThrow(/drained/);
    reader.nextLine();
    reader.nextLine();
    reader.nextLine();
    reader.end();
    expect(() => reader.push('c')).toThrow(/after end/);
  });

  it('agrees with a whole-text split under 2000 random chunkings', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const alphabet = ['a', 'é', '\n', '\r', ' ', '😀'];
    const limits = { maxRecordBytes: 9, maxRawChars: 4 };
    for (let n = 0; n < 2000; n++) {
      let text = '';
      const length = Math.floor(random() * 30);
      for (let k = 0; k < length; k++) text += alphabet[Math.floor(random() * alphabet.length)];
      const parts = text.split(/\r\n|\r|\n/);
      if (parts.at(-1) === '') parts.pop();
      const expected = parts.map((part, index) => {
        const content = part;
        const oversized = Buffer.byteLength(part) > limits.maxRecordBytes;
        return { line: index + 1, chars: content.length, oversized, excerpt: content.slice(0, limits.maxRawChars) };
      });
      const chunks: string[] = [];
      for (let pos = 0; pos < text.length; ) {
        const size = 1 + Math.floor(random() * 6);
        chunks.push(text.slice(pos, pos + size));
        pos += size;
      }
      for (const input of [[text], chunks]) {
        const actual = readLines(input, limits).map((l) => ({
          line: l.line,
          chars: l.chars,
          oversized: l.oversized,
          excerpt: l.text.slice(0, limits.maxRawChars),
        }));
        expect(actual, JSON.stringify(input)).toEqual(expected);
      }
    }
  });
});

describe('LineReader and a lone high surrogate at end of input', () => {
  it('keeps it as the last character, even when end() follows push() without a drain', () => {
    const reader = new LineReader();
    reader.push('a\nb\ud83d');
    reader.end();
    expect(reader.nextLine()?.text).toBe('a');
    expect(reader.nextLine()).toEqual({ line: 2, text: 'b\ud83d', chars: 2, oversized: false });
    expect(reader.nextLine()).toBeUndefined();
  });
});
