import { describe, expect, it } from 'vitest';
import { compileCsvHeader, normalizeHeaderName } from '../../src/normalize/csvHeader.js';

describe('normalizeHeaderName', () => {
  it('trims, lower-cases, turns non-alphanumeric runs into one underscore and trims underscores', () => {
    expect(normalizeHeaderName('  Order ID (EUR) ')).toBe('order_id_eur');
    expect(normalizeHeaderName('__a--b__')).toBe('a_b');
    expect(normalizeHeaderName('Unit.Price')).toBe('unit_price');
    expect(normalizeHeaderName('2024')).toBe('2024');
  });

  it('keeps Unicode letters and digits, composing to NFC first', () => {
    expect(normalizeHeaderName('Menge (Stück)')).toBe('menge_stück');
    expect(normalizeHeaderName('Cafe\u0301 Name')).toBe('café_name'); // decomposed é
    expect(normalizeHeaderName('温度')).toBe('温度');
  });

  it('yields an empty name for blank or symbol-only headers', () => {
    expect(normalizeHeaderName('   ')).toBe('');
    expect(normalizeHeaderName('€ / %')).toBe('');
  });
});

describe('compileCsvHeader', () => {
  it('serializes rows with keys in header order, even integer-like keys a JS object would reorder', () => {
    const header = compileCsvHeader(['Name', '2024', '1']);
    if (!header.ok) throw new Error(header.reason);
    expect(header.keys).toEqual(['name', '2024', '1']);
    expect(header.toJson(['a', 'b', 'c'])).toBe('{"name":"a","2024":"b","1":"c"}');
  });

  it('trims values (String#trim, so NBSP and U+2029 too), maps empty ones to null and escapes what JSON requires', () => {
    const header = compileCsvHeader(['a', 'b', 'c', 'd', 'e']);
    if (!header.ok) throw new Error(header.reason);
    const json = header.toJson(['  x  ', '   ', '', 'q"\\\n\t\u0001', '\u00a0é😀\u2028\ud800\u2029']);
    expect(json).toBe('{"a":"x","b":null,"c":null,"d":"q\\"\\\\\\n\\t\\u0001","e":"é😀\u2028\\ud800"}');
    expect(JSON.parse(json)).toEqual({ a: 'x', b: null, c: null, d: 'q"\\\n\t\u0001', e: 'é😀\u2028\ud800' });
  });

  it('gives the same JSON when the caller vouches for escape-free fields', () => {
    const header = compileCsvHeader(['a', 'b']);
    if (!header.ok) throw new Error(header.reason);
    expect(header.toJson([' plain ', 'ü'], true)).toBe(header.toJson([' plain ', 'ü'], false));
  });

  it('rejects an empty column name, naming the column', () => {
    expect(compileCsvHeader(['id', ' ', 'x'])).toEqual({ ok: false, reason: 'column 2 is empty' });
    expect(compileCsvHeader(['id', '%%'])).toEqual({ ok: false, reason: 'column 2 ("%%") has no letters or digits' });
  });

  it('rejects two names that normalize to the same key, naming both columns', () => {
    expect(compileCsvHeader(['id', 'Name', 'city', ' NAME '])).toEqual({
      ok: false,
      reason: 'columns 2 and 4 both normalize to "name"',
    });
  });
});
