import { afterEach, describe, expect, it, vi } from 'vitest';
import { CsvRecordReader } from '../../src/normalize/csvParser.js';

function records(text: string): { fields: string[]; escapeFree: boolean }[] {
  const reader = new CsvRecordReader();
  reader.push(text);
  reader.end();
  const out: { fields: string[]; escapeFree: boolean }[] = [];
  for (let r = reader.nextRecord(); r !== undefined; r = reader.nextRecord()) {
    out.push({ fields: r.fields, escapeFree: r.escapeFree });
  }
  return out;
}

describe('CsvRecordReader: the characters JSON escapes are searched per chunk, not per line', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a chunk of 1,000 plain lines is searched once', () => {
    const exec = vi.spyOn(RegExp.prototype, 'exec'); // what RegExp#test calls too
    const text = `id,name\n${Array.from({ length: 1000 }, (_, i) => `${i},row ${i}`).join('\n')}\n`;
    const out = records(text);
    expect(out).toHaveLength(1001);
    expect(out.every((r) => r.escapeFree)).toBe(true);
    const escapeSearches = exec.mock.contexts.filter((re) => (re as RegExp).source.includes('\\ud800'));
    expect(escapeSearches.length).toBeGreaterThanOrEqual(1);
    expect(escapeSearches.length).toBeLessThanOrEqual(2);
  });

  it('marks exactly the lines that hold a backslash, a control character or a surrogate', () => {
    const lines = ['id,name', '1,plain', '2,back\\slash', '3,plain', '4,tab\there', '5,emoji 😀', '6,plain\r', '7,end'];
    expect(records(`${lines.join('\n')}\n`).map((r) => r.escapeFree)).toEqual([
      true,
      true,
      false,
      true,
      false,
      false,
      true, // the CR is its terminator (CRLF), not its content
      true,
    ]);
  });
});
