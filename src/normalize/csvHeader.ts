import { fromByteString, toByteString, trimmedByteString } from './byteStrings.js';
import { JSON_ESCAPED_CHARACTER } from './jsonEscapes.js';

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
   * Per column, what comes before its value in a line: `{"id":` for the first, `,"name":` for the
   * others (byte strings with `byteStrings`).
   */
  readonly keyPrefixes: readonly string[];
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
 *
 * With `{ byteStrings: true }` the names and the rows' fields are byte strings (src/normalize/byteStrings.ts)
 * and `toJson` returns one; `keys` and the reason are text.
 */
export function compileCsvHeader(
  header: readonly string[],
  options: { readonly byteStrings?: boolean } = {},
): CsvHeader | CsvHeaderProblem {
  const bytes = options.byteStrings ?? false;
  const names = bytes ? header.map(fromByteString) : header;
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
  // Precomputed key prefixes, so a row is a handful of concatenations with no object. A quoted value
  // leaves its closing quote open, and the next prefix carries it (`","b":"`): one concatenation per
  // field instead of three, which halves the serializer's time and the garbage it leaves.
  const encoded = bytes ? toByteString : (text: string) => text;
  const key = (i: number) => encoded(`${i === 0 ? '{' : ','}${JSON.stringify(keys[i])}:`);
  const toQuoted = keys.map((_, i) => `${key(i)}"`);
  const toQuotedAfterQuoted = keys.map((_, i) => `${i === 0 ? '' : '"'}${key(i)}"`);
  const toLiteral = keys.map((_, i) => key(i));
  const toLiteralAfterQuoted = keys.map((_, i) => `${i === 0 ? '' : '"'}${key(i)}`);
  return {
    ok: true,
    keys,
    keyPrefixes: toLiteral,
    toJson(fields: readonly string[], escapeFree = false): string {
      let json = '';
      let open = false; // the last value is a string whose closing quote is still to come
      for (let i = 0; i < keys.length; i++) {
        const value = trimmed(fields[i] ?? '', bytes);
        if (value !== '' && (escapeFree || !JSON_ESCAPED_CHARACTER.test(value))) {
          json += (open ? toQuotedAfterQuoted[i] : toQuoted[i]) + value;
          open = true;
        } else {
          json += (open ? toLiteralAfterQuoted[i] : toLiteral[i]) + (value === '' ? 'null' : JSON.stringify(value));
          open = false;
        }
      }
      return open ? `${json}"}` : `${json}}`;
    },
  };
}

/**
 * A field trimmed (a byte string with `bytes`); the hot path of CSV output, so the common case avoids
 * trim() and stays small enough to be inlined.
 */
function trimmed(field: string, bytes: boolean): string {
  const len = field.length;
  if (len === 0) return field;
  // Printable ASCII at both ends cannot be trimmed (String#trim only strips whitespace and line terminators).
  const first = field.charCodeAt(0);
  const last = field.charCodeAt(len - 1);
  if (first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f) return field;
  return bytes ? trimmedByteString(field) : field.trim();
}

function shorten(name: string): string {
  return name.length <= 40 ? name : `${name.slice(0, 40)}...`;
}
