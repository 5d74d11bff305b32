/**
 * The characters JSON escapes, and sticky runs of the characters it does not: the CSV reader and the
 * NDJSON recognizer both find the next character to escape by where such a run ends. A greedy run is
 * over twice as fast in V8 as searching for the first escaped character.
 */

/** Characters JSON.stringify escapes: `"`, `\\`, controls, and surrogates (lone ones become `\\uXXXX`). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000-U+001F are exactly the characters JSON must escape.
export const JSON_ESCAPED_CHARACTER = /["\\\u0000-\u001f\ud800-\udfff]/;
/**
 * A run of characters JSON does not escape, LF and CR included, matched from a position (sticky):
 * where it ends is the next character to escape. The lines it serves (finishPlainLine) end before
 * their terminator, so one run spans many lines and the chunk is scanned once, not once per line.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the complement of JSON_ESCAPED_CHARACTER, less LF and CR.
export const JSON_SAFE_RUN = /[^"\\\u0000-\u0009\u000b\u000c\u000e-\u001f\ud800-\udfff]*/y;
/**
 * The same for a record with quoted fields, matched over the record's own text: its quotes are CSV
 * syntax (a literal quote is tracked while parsing), and its line breaks are data, so LF and CR stop
 * the run. The run ends at the record's terminator at the latest, so it costs one pass over the record.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000-U+001F are exactly the characters JSON must escape.
export const JSON_SAFE_RUN_IN_QUOTED_RECORD = /[^\\\u0000-\u001f\ud800-\udfff]*/y;
/**
 * JSON_SAFE_RUN with quotes allowed, for the lines of finishSimpleQuotedLine: their quotes are syntax
 * and they hold no line break before their terminator, so, as for plain lines, one run spans many.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the complement of JSON_ESCAPED_CHARACTER, less LF, CR and the quote.
export const JSON_SAFE_RUN_QUOTES_ALLOWED = /[^\\\u0000-\u0009\u000b\u000c\u000e-\u001f\ud800-\udfff]*/y;
/** Inside a JSON string: JSON_ESCAPED_CHARACTER's complement exactly (the NDJSON recognizer, jsonLineForm.ts). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the complement of JSON_ESCAPED_CHARACTER.
export const JSON_STRING_RUN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

/**
 * Where the sticky `run` that starts at `from` ends: the next character it excludes, or text.length.
 *
 * @example
 * jsonSafeRunEnd(JSON_STRING_RUN, 'ab"c', 0); // 2
 */
export function jsonSafeRunEnd(run: RegExp, text: string, from: number): number {
  run.lastIndex = from;
  run.test(text); // always matches (maybe empty), and leaves lastIndex where the run ends
  return run.lastIndex;
}
