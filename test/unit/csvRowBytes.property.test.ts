import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toByteString } from '../../src/normalize/byteStrings.js';
import { compileCsvHeader } from '../../src/normalize/csvHeader.js';
import { CsvRecordReader } from '../../src/normalize/csvParser.js';
import {
  CsvRowBytes,
  firstByteOf,
  QUOTED_STOPS,
  stopBytes,
  UNQUOTED_STOPS,
  unicodeSpaceAt,
  unicodeSpaceEndsAt,
} from '../../src/normalize/csvRowBytes.js';
import { LineBytes } from '../../src/normalize/lineBytes.js';

/*
 * CsvRowBytes writes a data row's JSON line straight into the output buffer. Each generated line is
 * also read by CsvRecordReader and serialized by CsvHeader.toJson, the record path it stands in for:
 * a row it writes must be byte for byte that line, and a row it declines must leave the buffer as it
 * was. The values aim at where the two could part: white space at a value's ends (ASCII and Unicode,
 * whose UTF-8 bytes a byte-wise trim would misread), quotes, delimiters inside quotes, characters
 * JSON escapes, empty values, and rows with a field too many or too few.
 */

/** Value pieces, as text. */
const PIECES = [
  'a',
  'Z',
  '7',
  ' ',
  ' ',
  '\t',
  'à',
  'ü',
  '温度',
  '😀',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u2009',
  '\u200b', // not white space for String#trim
  '\u0085', // nor this one
  '\ufeff',
  '\u1680',
  '\u205f',
  '\u007f',
  '\\',
  '\u0001',
  '"',
];
const value = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('a', 'Z', '7', 'à', '温度', '😀') },
      // Past 32 bytes a value is copied in one piece (csvRowBytes.ts, LONG_VALUE).
      { weight: 1, arbitrary: fc.constant('abcdefghijklmnopqrstuvwxyz0123456789') },
      { weight: 2, arbitrary: fc.constantFrom(...PIECES) },
    ),
    { maxLength: 6 },
  )
  .map((pieces) => pieces.join(''));
/**
 * A field: its value, plain (a quote in it is literal) or quoted (and then maybe holding a comma), or
 * one the record path reads its slow way: a doubled quote, text or spaces after the closing quote.
 */
const field = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ value, quoted: fc.boolean(), comma: fc.boolean() }).map(({ value: v, quoted, comma }) => {
      const inner = quoted && comma ? `${v},${v}` : v;
      return { text: quoted ? `"${inner}"` : inner, quoted, inner };
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(value, fc.constantFrom('""', 'x', ' ', '" ', '"x'))
      .map(([v, odd]) => ({ text: `"${v}"${odd}`, quoted: true, inner: `${v}"${odd}` })),
  },
);

/** The key prefixes of a byte strings header of `keys`. */
function prefixesOf(keys: readonly string[]): readonly string[] {
  const header = compileCsvHeader(keys.map(toByteString), { byteStrings: true });
  if (!header.ok) throw new Error(header.reason);
  return header.keyPrefixes;
}

function recordPathLine(keys: readonly string[], line: string): string | undefined {
  const reader = new CsvRecordReader({}, { byteStrings: true });
  reader.push(`${line}\n`);
  reader.end();
  const record = reader.nextRecord();
  if (record === undefined || record.problem !== undefined || record.fields.length !== keys.length) return undefined;
  const header = compileCsvHeader(keys.map(toByteString), { byteStrings: true });
  if (!header.ok) throw new Error(header.reason);
  return `${header.toJson(record.fields, record.escapeFree)}\n`;
}

/** A value String#trim leaves whole and JSON does not escape: the rows made of these must all be written. */
function isSimple(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000-U+001F are characters JSON escapes.
  return !/[\u0000-\u001f"\\]/.test(text) && text === text.trim();
}

describe('CsvRowBytes: a row written as bytes is the line the record path makes (fast-check)', () => {
  it('writes the same bytes, or declines and writes nothing', () => {
    let written = 0;
    let simpleRows = 0;
    fc.assert(
      fc.property(
        fc
          .constantFrom(['id'], ['id', 'name'], ['Größe', '温度', 'x', 'y'])
          .chain((names) =>
            fc.tuple(
              fc.constant(names),
              fc.oneof(
                { weight: 4, arbitrary: fc.array(field, { minLength: names.length, maxLength: names.length }) },
                { weight: 1, arbitrary: fc.array(field, { minLength: 1, maxLength: 5 }) },
              ),
            ),
          ),
        ([names, fields]) => {
          const keys = names.map((n) => n.toLowerCase());
          const lineText = fields.map((f) => f.text).join(',');
          const line = toByteString(lineText);
          const sent: Buffer[] = [];
          const lines = new LineBytes({ write: async (b) => void sent.push(Buffer.from(b)) });
          lines.filled = 3; // something written before, which a declined row must leave alone
          lines.buffer.write('xyz', 0, 'latin1');
          const rows = new CsvRowBytes(prefixesOf(keys), lines);
          const expected = recordPathLine(keys, line);
          rows.load(`${line}\n`);
          const accepted = rows.write(0, line.length);
          if (accepted) {
            written++;
            expect(expected, `a row the record path would not output: ${JSON.stringify(lineText)}`).toBeDefined();
            expect(lines.buffer.subarray(3, lines.filled).toString('latin1')).toBe(expected);
          } else {
            expect(lines.filled).toBe(3);
          }
          // The common rows are never declined: plain values, trimmed, with nothing JSON escapes.
          const simple =
            fields.length === keys.length &&
            Buffer.byteLength(lineText) <= 64 * keys.length && // longer rows are left to the record path
            fields.every((f) => isSimple(f.inner) && (f.quoted || !f.inner.startsWith('"'))) &&
            !(keys.length === 1 && !fields[0]?.quoted && fields[0]?.inner === '');
          if (simple) {
            simpleRows++;
            expect(accepted, `a common row declined: ${JSON.stringify(lineText)}`).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
    // The generator must reach both outcomes, or the property proves little.
    expect(written).toBeGreaterThan(300);
    expect(simpleRows).toBeGreaterThan(100);
  });

  it('declines a row that does not fit the room left, and writes it once the batch is sent', async () => {
    const sent: Buffer[] = [];
    const lines = new LineBytes({ write: async (b) => void sent.push(Buffer.from(b)) }, { flushAt: 40, capacity: 64 });
    const rows = new CsvRowBytes(prefixesOf(['id', 'name']), lines);
    const row = '1,Ada Lovelace';
    rows.load(`${row}\n`);
    expect(rows.write(0, row.length)).toBe(true); // {"id":"1","name":"Ada Lovelace"}\n: 33 bytes
    expect(rows.write(0, row.length)).toBe(false); // 33 more do not fit in 64
    expect(rows.waitsForSend).toBe(false); // 33 bytes are not yet the batch (40): the record path takes it
    await lines.flush();
    expect(rows.write(0, row.length)).toBe(true);
    await lines.flush();
    expect(Buffer.concat(sent).toString()).toBe('{"id":"1","name":"Ada Lovelace"}\n'.repeat(2));
  });

  it('declines a row while the batch is due, which waits for the send; never one that no batch could hold', async () => {
    const sent: Buffer[] = [];
    const lines = new LineBytes({ write: async (b) => void sent.push(Buffer.from(b)) }, { flushAt: 20, capacity: 64 });
    const rows = new CsvRowBytes(prefixesOf(['id', 'name']), lines);
    const [short, long, longer] = ['1,Ada', '2,"Ada Lovelace"', '3,"Ada Lovelace, Countess of Lovelace"'];
    rows.load(`${short}\n${long}\n${longer}\n`);
    expect(rows.write(0, short.length)).toBe(true); // {"id":"1","name":"Ada"}\n: 24 bytes, past flushAt
    const second = short.length + 1;
    expect(rows.write(second, second + long.length)).toBe(false);
    expect(rows.waitsForSend).toBe(true);
    await lines.flush();
    expect(rows.write(second, second + long.length)).toBe(true);
    await lines.flush();
    // 41 bytes, and the overhead of two columns, are more than 64: the record path makes it.
    const third = second + long.length + 1;
    expect(rows.write(third, third + longer.length)).toBe(false);
    expect(rows.waitsForSend).toBe(false);
    expect(Buffer.concat(sent).toString()).toBe('{"id":"1","name":"Ada"}\n{"id":"2","name":"Ada Lovelace"}\n');
  });
});

describe('stopBytes and firstByteOf: four bytes tested at once find the first byte a value stops at', () => {
  /** The bytes around each stop (a borrow or a near miss would show there), and any byte. */
  const byte = fc.oneof(
    fc.constantFrom(
      0x00,
      0x01,
      0x0a,
      0x0d,
      0x1f,
      0x20,
      0x21,
      0x22,
      0x23,
      0x2b,
      0x2c,
      0x2d,
      0x5b,
      0x5c,
      0x5d,
      0x7f,
      0x80,
      0xff,
    ),
    fc.integer({ min: 0, max: 255 }),
  );

  it('agree with a byte-by-byte search, for quoted and unquoted values', () => {
    let stopped = 0;
    fc.assert(
      fc.property(fc.array(byte, { minLength: 4, maxLength: 4 }), fc.boolean(), (bytes, unquoted) => {
        const stops = (b: number) => b < 0x20 || b === 0x22 || b === 0x5c || (unquoted && b === 0x2c);
        const word = Buffer.from(bytes).readInt32LE(0);
        const marked = stopBytes(word, unquoted ? UNQUOTED_STOPS : QUOTED_STOPS);
        const first = bytes.findIndex(stops);
        expect(marked === 0, `any stop in ${JSON.stringify(bytes)}`).toBe(first === -1);
        if (first !== -1) {
          stopped++;
          expect(firstByteOf(marked), `first stop in ${JSON.stringify(bytes)}`).toBe(first);
        }
      }),
      { numRuns: 20000 },
    );
    expect(stopped).toBeGreaterThan(5000);
  });
});

describe('unicodeSpaceAt and unicodeSpaceEndsAt: the white space String#trim cuts, in UTF-8 bytes', () => {
  it('agree with String#trim on every code point of the Basic Multilingual Plane', () => {
    for (let cp = 0x80; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const char = String.fromCodePoint(cp);
      const trimmed = char.trim() === '';
      const bytes = Buffer.from(`a${char}`);
      expect(unicodeSpaceAt(bytes, 1, bytes.length) > 0, `U+${cp.toString(16)} at the start`).toBe(trimmed);
      expect(unicodeSpaceEndsAt(bytes, 0, bytes.length), `U+${cp.toString(16)} at the end`).toBe(trimmed);
    }
  });
});
