import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputFormat } from '../../src/normalize/normalizeRecords.js';
import { cuts, splitAt } from '../support/hostileCsv.js';
import { normalizeChunks } from '../support/normalizeRun.js';

const KEYS = ['a', 'b', 'c', '1'];

/** What a CSV row must become, written the slow, obvious way: JSON.stringify of each trimmed value. */
function expectedLine(values: readonly string[]): string {
  const members = values.map((v, i) => {
    const value = v.trim();
    return `${JSON.stringify(KEYS[i])}:${value === '' ? 'null' : JSON.stringify(value)}`;
  });
  return `{${members.join(',')}}`;
}

/** One CSV field as a writer might put it: quoted when it must be, and sometimes when it need not be. */
function csvField(value: string, quote: boolean): string {
  const mustQuote = /[,\r\n]/.test(value) || value.startsWith('"');
  return mustQuote || quote ? `"${value.replaceAll('"', '""')}"` : value;
}

// Characters the serializer's shortcuts turn on: quotes, backslashes, controls, line breaks, blanks,
// multi-byte text and a surrogate pair.
const character = fc.constantFrom(...['a', 'Z', '1', ' ', '\t', '"', '\\', ',', '\n', '\r', '\u0001', 'é', '😀', '']);
const value = fc.array(character, { maxLength: 6 }).map((chars) => chars.join(''));
const row = fc.array(fc.record({ value, quote: fc.boolean() }), { minLength: KEYS.length, maxLength: KEYS.length });

describe('CSV serialization: every shortcut writes what JSON.stringify would', () => {
  it('random rows of hostile values, quoted or not, cut anywhere, give the reference JSON line by line', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 8 }).chain((rows) => {
          const text = `${KEYS.join(',')}\n${rows.map((r) => r.map((f) => csvField(f.value, f.quote)).join(',')).join('\n')}\n`;
          const bytes = new Uint8Array(Buffer.from(text, 'utf8'));
          return fc.record({ rows: fc.constant(rows), bytes: fc.constant(bytes), points: cuts(bytes.length) });
        }),
        async ({ rows, bytes, points }) => {
          const run = await normalizeChunks(splitAt(bytes, points), InputFormat.CSV);
          expect(run.quarantine).toEqual([]);
          expect(run.output).toEqual(rows.map((r) => expectedLine(r.map((f) => f.value))));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
