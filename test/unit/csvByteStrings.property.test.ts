import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fromByteString,
  incompleteTailStart,
  toByteString,
  trimmedByteString,
} from '../../src/normalize/byteStrings.js';
import { InputFormat } from '../../src/normalize/normalizeRecords.js';
import { cuts, splitAt } from '../support/hostileCsv.js';
import { normalizeChunks } from '../support/normalizeRun.js';

/*
 * normalizeRecords' byteStrings mode (the normalize worker's CSV path) reads the input's UTF-8 bytes as
 * byte strings instead of decoding them. normalizeChunks runs every byte input both ways and expects
 * the same result and the same bytes; these inputs aim at where the two could part: multi-byte
 * characters cut between chunks, invalid UTF-8, Unicode white space at a value's ends (whose bytes
 * String#trim would misread), and `raw` excerpts and size limits counted in characters or bytes.
 */

/** Text pieces: CSV syntax, ASCII and Unicode white space, multi-byte and astral characters. */
const PIECES = [
  'a',
  'Z',
  '7',
  'id',
  ',',
  ',',
  '"',
  '""',
  ' ',
  '\t',
  '\n',
  '\n',
  '\r\n',
  '\r',
  'à',
  'ü',
  'é',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u2009',
  '\ufeff',
  '温度',
  '😀',
  '\\',
  '\u0001',
  '\u007f',
].map((piece) => Buffer.from(piece, 'utf8'));
/** Invalid UTF-8: a cut sequence, stray continuation bytes, an encoded surrogate, an overlong form. */
const INVALID = [
  [0xc3],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0x80],
  [0xbf, 0xbf],
  [0xff],
  [0xed, 0xa0, 0x80],
  [0xc0, 0xaf],
].map((bytes) => Buffer.from(bytes));

const file = fc
  .array(
    fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...PIECES) },
      { weight: 1, arbitrary: fc.constantFrom(...INVALID) },
    ),
    {
      maxLength: 80,
    },
  )
  .chain((pieces) =>
    // Headers with non-ASCII names, and unusable ones whose reasons quote a name.
    fc
      .constantFrom('id,name,note\n', 'Größe,温度,x\n', 'Café,CAFÉ,b\n', '\u00a0,b,c\n', '')
      .map((header) => Buffer.concat([Buffer.from(header, 'utf8'), ...pieces])),
  );

const limits = fc.oneof(
  fc.constant({}),
  fc.record({ maxRawChars: fc.integer({ min: 1, max: 12 }), maxRecordBytes: fc.integer({ min: 1, max: 48 }) }),
);

describe('byteStrings: the CSV read as UTF-8 bytes gives the records and bytes of the decoded text (fast-check)', () => {
  it('on hostile text with invalid UTF-8, cut anywhere, small raw and size limits', async () => {
    const arbitrary = file.chain((bytes) =>
      fc.record({ bytes: fc.constant(bytes), points: cuts(bytes.length), limits }),
    );
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ bytes, points, limits }) => {
        // normalizeChunks compares the two modes; here, that it ran.
        const run = await normalizeChunks(splitAt(bytes, points), InputFormat.CSV, limits);
        expect(run.result.encoding).toBe('utf-8');
      }),
      { numRuns: 1500 },
    );
  });

  it('on the same text gzipped, and in UTF-16 (decoded, then encoded as UTF-8)', async () => {
    const arbitrary = file.chain((bytes) => fc.record({ bytes: fc.constant(bytes), points: cuts(bytes.length + 8) }));
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ bytes, points }) => {
        const text = bytes.toString('utf8');
        for (const stored of [gzipSync(bytes), Buffer.from(`\ufeff${text}`, 'utf16le')]) {
          await normalizeChunks(
            splitAt(
              stored,
              points.filter((p) => p <= stored.length),
            ),
            InputFormat.CSV,
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('trims a byte string as String#trim trims its text, never cutting a UTF-8 byte that looks like U+00A0', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }), (pieces) => {
        const text = Buffer.concat(pieces).toString('utf8');
        expect(fromByteString(trimmedByteString(toByteString(text)))).toBe(text.trim());
      }),
      { numRuns: 2000 },
    );
    // `à` is C3 A0: its second byte, read as Latin-1, is a no-break space.
    expect(trimmedByteString(toByteString(' voilà '))).toBe(toByteString('voilà'));
    expect(trimmedByteString(toByteString('\u00a0x\u3000'))).toBe('x');
  });

  it('holds back exactly a UTF-8 sequence the end cuts short', () => {
    const euro = Buffer.from('a€', 'utf8'); // 61 E2 82 AC
    expect([1, 2, 3, 4].map((n) => incompleteTailStart(euro.subarray(0, n)))).toEqual([1, 1, 1, 4]);
    const face = Buffer.from('😀', 'utf8'); // F0 9F 98 80
    expect([1, 2, 3, 4].map((n) => incompleteTailStart(face.subarray(0, n)))).toEqual([0, 0, 0, 4]);
    expect(incompleteTailStart(Buffer.from([0x80, 0x80, 0x80]))).toBe(3);
  });
});
