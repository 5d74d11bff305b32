import { JSON_STRING_RUN, jsonSafeRunEnd } from './jsonEscapes.js';

/** What {@link classifyJsonLine} proved about a line. */
export const JsonLineForm = {
  /** Exactly what `JSON.stringify(JSON.parse(line))` writes, and an object: output it as it is. */
  CANONICAL: 'canonical',
  /** Valid JSON up to where the line stops, with an object or string still open: invalid JSON. */
  CUT_SHORT: 'cut-short',
  /** Not proved either way: parse and serialize it (the slow path, always right). */
  OTHER: 'other',
} as const;
export type JsonLineForm = (typeof JsonLineForm)[keyof typeof JsonLineForm];

/**
 * Recognizes NDJSON lines that are already in the form `JSON.stringify(JSON.parse(line))` writes, so
 * the normalizer can output them as they are: parsing a short line and serializing it again took
 * about 60 % of the worker's CPU over a large NDJSON file, and most producers write exactly this form.
 * It also recognizes a line cut short (a partial write: JSON up to where the line stops, with its
 * object still open), which is invalid JSON without asking JSON.parse to throw, at several
 * microseconds per exception.
 *
 * The recognizer is deliberately conservative. It accepts a subset of canonical JSON and answers
 * OTHER for anything it does not prove, and OTHER only means "take the slow path" (parse and
 * serialize), which is always right:
 * - no whitespace outside strings;
 * - strings with raw characters and only the escapes JSON.stringify writes for them (`\"`, `\\`,
 *   `\b`, `\f`, `\n`, `\r`, `\t`); any `\u` escape, `\/` or UTF-16 surrogate is left to the slow path;
 * - numbers without an exponent, with at most 15 significant digits (DBL_DIG: such a decimal survives
 *   the round trip through a double, and no shorter decimal maps to the same double), no trailing zero
 *   in the fraction, at most 5 zeros between the point and the first digit (from 1e-7 down,
 *   Number#toString switches to exponent form), and no `-0`;
 * - objects without a duplicate key (JSON.parse keeps the last value at the first position) and
 *   without a key made of digits only (integer-like keys are reordered first);
 * - nesting at most `maxDepth` and at most {@link FAST_PATH_MAX_DEPTH} levels deep (counted as
 *   exceedsNestingDepth counts), at most {@link FAST_PATH_MAX_KEYS} keys per object.
 *
 * @example
 * classifyJsonLine('{"id":1,"name":"Ada"}'); // 'canonical': written as it is
 * classifyJsonLine('{"id":1,"na');           // 'cut-short': quarantined as invalid JSON
 * classifyJsonLine('{"id": 1}');              // 'other': the slow path removes the space
 * classifyJsonLine('{"a":1.50}');             // 'other': the slow path writes 1.5
 */
export function classifyJsonLine(text: string, maxDepth: number = FAST_PATH_MAX_DEPTH): JsonLineForm {
  if (text.charCodeAt(0) !== OPEN_BRACE) return JsonLineForm.OTHER;
  keyCount = 0;
  cutShort = false;
  depthLimit = Math.min(maxDepth, FAST_PATH_MAX_DEPTH);
  if (value(text, 0, 0) === text.length) return JsonLineForm.CANONICAL;
  return cutShort ? JsonLineForm.CUT_SHORT : JsonLineForm.OTHER;
}

/** Deeper lines take the slow path, which applies the configured nesting limit (recordLimits.ts). */
export const FAST_PATH_MAX_DEPTH = 64;
/** Objects with more keys take the slow path (the duplicate check compares each key with the others). */
export const FAST_PATH_MAX_KEYS = 256;

const FAIL = -1;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const POINT = 0x2e;
const MAX_SIGNIFICANT_DIGITS = 15;
const MAX_ZEROS_AFTER_POINT = 5;

/** Start and end of every key of the objects open on the current line, innermost last. */
const keyBounds = new Int32Array(2 * FAST_PATH_MAX_KEYS * 4);
let keyCount = 0;
let depthLimit = FAST_PATH_MAX_DEPTH;
/** The last FAIL came from the line stopping where JSON needs more. */
let cutShort = false;

/** FAIL, noting whether the line stopped at `j` where JSON needs more. */
function fail(t: string, j: number): number {
  cutShort = j >= t.length;
  return FAIL;
}

/** Where the value at `i` ends, or FAIL. */
function value(t: string, i: number, depth: number): number {
  const c = t.charCodeAt(i);
  if (c === OPEN_BRACE) return object(t, i, depth + 1);
  if (c === OPEN_BRACKET) return array(t, i, depth + 1);
  if (c === QUOTE) return string(t, i);
  if (c === MINUS || isDigit(c)) return number(t, i);
  if (c === 0x74) return literal(t, i, 'true');
  if (c === 0x66) return literal(t, i, 'false');
  if (c === 0x6e) return literal(t, i, 'null');
  return fail(t, i);
}

function literal(t: string, i: number, word: string): number {
  if (t.startsWith(word, i)) return i + word.length;
  // `tr` at the end of the line is `true` cut short.
  return i + word.length > t.length && word.startsWith(t.slice(i)) ? fail(t, t.length) : FAIL;
}

function object(t: string, i: number, depth: number): number {
  if (depth > depthLimit) return FAIL;
  let j = i + 1;
  if (t.charCodeAt(j) === CLOSE_BRACE) return j + 1;
  const firstKey = keyCount;
  for (;;) {
    if (t.charCodeAt(j) !== QUOTE) return fail(t, j);
    const end = string(t, j);
    if (end === FAIL) return FAIL;
    if (!isOrdinaryNewKey(t, j + 1, end - 1, firstKey)) return FAIL;
    if (t.charCodeAt(end) !== COLON) return fail(t, end);
    j = value(t, end + 1, depth);
    if (j === FAIL) return FAIL;
    const c = t.charCodeAt(j);
    if (c === CLOSE_BRACE) {
      keyCount = firstKey;
      return j + 1;
    }
    if (c !== COMMA) return fail(t, j);
    j += 1;
  }
}

/**
 * A key that keeps its place (not digits only) and is not a repeat of a key of the same object; it
 * is then remembered. False too when the key table is full.
 */
function isOrdinaryNewKey(t: string, start: number, end: number, firstKey: number): boolean {
  let digitsOnly = end > start;
  for (let k = start; k < end && digitsOnly; k++) digitsOnly = isDigit(t.charCodeAt(k));
  if (digitsOnly) return false;
  const length = end - start;
  for (let k = firstKey; k < keyCount; k++) {
    const otherStart = keyBounds[2 * k] ?? 0;
    if ((keyBounds[2 * k + 1] ?? 0) - otherStart === length && sameText(t, start, otherStart, length)) return false;
  }
  if (keyCount - firstKey >= FAST_PATH_MAX_KEYS || 2 * keyCount + 1 >= keyBounds.length) return false;
  keyBounds[2 * keyCount] = start;
  keyBounds[2 * keyCount + 1] = end;
  keyCount += 1;
  return true;
}

function sameText(t: string, a: number, b: number, length: number): boolean {
  for (let k = 0; k < length; k++) if (t.charCodeAt(a + k) !== t.charCodeAt(b + k)) return false;
  return true;
}

function array(t: string, i: number, depth: number): number {
  if (depth > depthLimit) return FAIL;
  let j = i + 1;
  if (t.charCodeAt(j) === CLOSE_BRACKET) return j + 1;
  for (;;) {
    j = value(t, j, depth);
    if (j === FAIL) return FAIL;
    const c = t.charCodeAt(j);
    if (c === CLOSE_BRACKET) return j + 1;
    if (c !== COMMA) return fail(t, j);
    j += 1;
  }
}

/** The string starting with the quote at `i`: where it ends (after its closing quote), or FAIL. */
function string(t: string, i: number): number {
  let j = i + 1;
  for (;;) {
    j = jsonSafeRunEnd(JSON_STRING_RUN, t, j);
    const c = t.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    if (c !== BACKSLASH) return fail(t, j); // a control character, a surrogate, or the end of the line
    const d = t.charCodeAt(j + 1);
    // The short escapes JSON.stringify writes: \" \\ \b \f \n \r \t.
    if (d !== QUOTE && d !== BACKSLASH && d !== 0x62 && d !== 0x66 && d !== 0x6e && d !== 0x72 && d !== 0x74) {
      return fail(t, j + 1);
    }
    j += 2;
  }
}

function number(t: string, i: number): number {
  let j = i;
  const negative = t.charCodeAt(j) === MINUS;
  if (negative) j += 1;
  const intStart = j;
  const first = t.charCodeAt(j);
  if (first === ZERO) j += 1;
  else if (first > ZERO && first <= NINE) while (isDigit(t.charCodeAt(j))) j += 1;
  else return fail(t, j);
  const intIsZero = first === ZERO;
  let digits = intIsZero ? 0 : j - intStart;
  let fraction = 0;
  if (t.charCodeAt(j) === POINT) {
    j += 1;
    const fracStart = j;
    while (isDigit(t.charCodeAt(j))) j += 1;
    fraction = j - fracStart;
    if (fraction === 0) return fail(t, j);
    if (t.charCodeAt(j - 1) === ZERO) return FAIL;
    digits += fraction;
    if (intIsZero) {
      let zeros = 0;
      while (t.charCodeAt(fracStart + zeros) === ZERO) zeros += 1;
      if (zeros > MAX_ZEROS_AFTER_POINT) return FAIL;
    }
  }
  const c = t.charCodeAt(j);
  if (c === 0x65 || c === 0x45) return FAIL; // an exponent
  if (negative && intIsZero && fraction === 0) return FAIL; // -0 is written 0
  return digits > MAX_SIGNIFICANT_DIGITS ? FAIL : j;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}
