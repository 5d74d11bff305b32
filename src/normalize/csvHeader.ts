import { JSON_ESCAPED_CHARACTER } from './csvParser.js';

/**
 * Normalizes one CSV header name into a JSON key: trim, Unicode NFC, lower-case, every run of
 * characters that are not letters, digits or combining marks becomes `_`, and leading/trailing `_`
 * are removed. Letters and digits are Unicode-aware on purpose: an ASCII-only rule would turn a
 * header such as `温度` into an empty name and make the whole file unusable.
 *
 * @example
 * normalizeHeaderName('  Order ID (EUR) '); // 'order_id_eur'
 * normalizeHeaderName('Café  Name');        // 'café_name'
 * normalizeHeaderName('---');               // ''
 */
export function normalizeHeaderName(name: string): string {
  return name
    .trim()
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}

/** A usable header: its normalized keys and a serializer for data rows. */
export interface CsvHeader {
  readonly ok: true;
  /** Normalized keys, in header order. */
  readonly keys: readonly string[];
  /**
   * Serializes a data row (exactly `keys.length` fields) as one JSON object line: keys in header order
   * (even integer-like keys, which a JS object would reorder), values trimmed, empty values `null`.
   * Pass `escapeFree: true` only when no field holds a character JSON escapes (see CsvRecord.escapeFree).
   */
  toJson(fields: readonly string[], escapeFree?: boolean): string;
}

/** A header that makes the file unusable, with the reason (e.g. `column 2 is empty`). */
export interface CsvHeaderProblem {
  readonly ok: false;
  readonly reason: string;
}

/**
 * Checks and compiles a CSV header record. An empty name or two names that normalize to the same key
 * make the header unusable: guessing which column a value belongs to would silently corrupt data.
 *
 * @example
 * const header = compileCsvHeader(['Id', ' Name ']);
 * if (header.ok) header.toJson(['1', ' Ada ']); // '{"id":"1","name":"Ada"}'
 * compileCsvHeader(['id', 'ID']); // { ok: false, reason: 'columns 1 and 2 both normalize to "id"' }
 */
export function compileCsvHeader(names: readonly string[]): CsvHeader | CsvHeaderProblem {
  const keys: string[] = [];
  const firstColumn = new Map<string, number>();
  for (let i = 0; i < names.length; i++) {
    const name = names[i] ?? '';
    const key = normalizeHeaderName(name);
    if (key === '') {
      const trimmed = name.trim();
      const reason =
        trimmed === ''
          ? `column ${i + 1} is empty`
          : `column ${i + 1} (${JSON.stringify(shorten(trimmed))}) has no letters or digits`;
      return { ok: false, reason };
    }
    const seen = firstColumn.get(key);
    if (seen !== undefined) return { ok: false, reason: `columns ${seen} and ${i + 1} both normalize to "${key}"` };
    firstColumn.set(key, i + 1);
    keys.push(key);
  }
  // Precomputed `{"a":` / `,"b":` prefixes: a row becomes a handful of concatenations, with no object.
  const prefixes = keys.map((key, i) => `${i === 0 ? '{' : ','}${JSON.stringify(key)}:`);
  return {
    ok: true,
    keys,
    toJson(fields: readonly string[], escapeFree = false): string {
      let json = '';
      for (let i = 0; i < prefixes.length; i++) json += prefixes[i] + jsonValue(fields[i] ?? '', escapeFree);
      return `${json}}`;
    },
  };
}

/** JSON for one trimmed field; the hot path of CSV output, so the common case avoids trim() and stringify. */
function jsonValue(field: string, escapeFree: boolean): string {
  const len = field.length;
  if (len === 0) return 'null';
  // Printable ASCII at both ends cannot be trimmed (String#trim only strips whitespace and line terminators).
  const first = field.charCodeAt(0);
  const last = field.charCodeAt(len - 1);
  const value = first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f ? field : field.trim();
  if (value === '') return 'null';
  return escapeFree || !JSON_ESCAPED_CHARACTER.test(value) ? `"${value}"` : JSON.stringify(value);
}

function shorten(name: string): string {
  return name.length <= 40 ? name : `${name.slice(0, 40)}...`;
}
