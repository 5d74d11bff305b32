import type { OptionNames } from '../options/checkOptions.js';
/**
 * Per-record bounds shared by the CSV and NDJSON readers. They keep memory bounded whatever the
 * input looks like (a 1 GiB file with no newline at all, a quoted field that never closes), and they
 * keep the quarantine file small (a bad record's `raw` is a bounded excerpt, not the record).
 */

/** Largest record kept, in UTF-8 bytes of its decoded text (line terminator excluded): 1 MiB. */
export const DEFAULT_MAX_RECORD_BYTES = 1024 * 1024;

/** Longest `raw` excerpt written to a quarantine line, in UTF-16 code units (characters): 1 KiB. */
export const DEFAULT_MAX_RAW_CHARS = 1024;

/**
 * Deepest nesting of arrays and objects kept in one NDJSON record: 1000 levels. Deeper records are
 * quarantined. Why a fixed number: serializing is recursive, and where it overflows the stack depends
 * on the runtime, so without a limit of our own the same record would pass on one Lambda runtime and
 * fail (or, worse, fail the whole file) on another.
 */
export const DEFAULT_MAX_NESTING_DEPTH = 1000;

/** Resolved limits a reader works with; see {@link DEFAULT_MAX_RECORD_BYTES} and {@link DEFAULT_MAX_RAW_CHARS}. */
export interface RecordLimits {
  /** Records longer than this many UTF-8 bytes are quarantined (and never buffered beyond it). */
  readonly maxRecordBytes: number;
  /** Quarantine excerpts are cut to this many characters (`truncated: true` then). */
  readonly maxRawChars: number;
  /** NDJSON records nested deeper than this are quarantined. */
  readonly maxNestingDepth: number;
}

/** The names of {@link RecordLimits}, checked by checkOptions (tsc fails when this list and the type differ). */
export const RECORD_LIMIT_NAMES = {
  maxRecordBytes: true,
  maxRawChars: true,
  maxNestingDepth: true,
} as const satisfies OptionNames<RecordLimits>;

/**
 * Fills in defaults and rejects nonsense loudly (a zero or fractional limit is a programming error,
 * not something to silently clamp).
 *
 * @example
 * resolveRecordLimits({ maxRecordBytes: 4096 }); // { maxRecordBytes: 4096, maxRawChars: 1024, maxNestingDepth: 1000 }
 */
export function resolveRecordLimits(options: Partial<RecordLimits> = {}): RecordLimits {
  const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  const maxRawChars = options.maxRawChars ?? DEFAULT_MAX_RAW_CHARS;
  const maxNestingDepth = options.maxNestingDepth ?? DEFAULT_MAX_NESTING_DEPTH;
  if (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes < 1) {
    throw new RangeError(`maxRecordBytes must be a positive integer, got ${String(maxRecordBytes)}`);
  }
  if (!Number.isSafeInteger(maxRawChars) || maxRawChars < 1) {
    throw new RangeError(`maxRawChars must be a positive integer, got ${String(maxRawChars)}`);
  }
  if (!Number.isSafeInteger(maxNestingDepth) || maxNestingDepth < 1) {
    throw new RangeError(`maxNestingDepth must be a positive integer, got ${String(maxNestingDepth)}`);
  }
  return { maxRecordBytes, maxRawChars, maxNestingDepth };
}

/**
 * The quarantine reason for an oversized record, e.g. `record exceeds 1 MiB`. The limit is printed
 * in the largest binary unit that divides it exactly, so the text is stable for a given limit.
 *
 * @example
 * oversizeReason(1048576); // 'record exceeds 1 MiB'
 * oversizeReason(1000);    // 'record exceeds 1000 bytes'
 */
export function oversizeReason(maxRecordBytes: number): string {
  const MiB = 1024 * 1024;
  if (maxRecordBytes % MiB === 0) return `record exceeds ${maxRecordBytes / MiB} MiB`;
  if (maxRecordBytes % 1024 === 0) return `record exceeds ${maxRecordBytes / 1024} KiB`;
  return `record exceeds ${maxRecordBytes} bytes`;
}

/**
 * Whether `text.slice(start, end)` plus `carriedBytes` already-measured bytes exceeds `maxBytes`
 * UTF-8 bytes. A UTF-16 code unit encodes to at most 3 UTF-8 bytes (a surrogate pair, 2 units, to 4),
 * so the exact (allocating) measurement only runs for records within a factor 3 of the limit.
 */
export function exceedsUtf8Bytes(
  text: string,
  start: number,
  end: number,
  carriedBytes: number,
  maxBytes: number,
): boolean {
  const chars = end - start;
  if (carriedBytes + chars * 3 <= maxBytes) return false;
  if (carriedBytes + chars > maxBytes) return true;
  return carriedBytes + Buffer.byteLength(text.slice(start, end), 'utf8') > maxBytes;
}

/**
 * Cuts `text` (whose full length is `totalChars`) to at most `maxChars` characters without splitting a
 * surrogate pair, so the excerpt is always well-formed text.
 *
 * @example
 * excerpt('abcdef', 6, 4); // { raw: 'abcd', truncated: true }
 */
export function excerpt(text: string, totalChars: number, maxChars: number): { raw: string; truncated: boolean } {
  if (totalChars <= maxChars) {
    return { raw: text.length === totalChars ? text : text.slice(0, totalChars), truncated: false };
  }
  let cut = maxChars;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1; // high surrogate: its pair is past the cut
  return { raw: text.slice(0, cut), truncated: true };
}

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth` (brackets inside strings do not
 * count). Only text longer than `2 * maxDepth` characters can: each level needs an opening and a
 * closing bracket, so the hot path skips the scan for every ordinary record.
 *
 * @example
 * exceedsNestingDepth('[[1]]', 1);          // true
 * exceedsNestingDepth('{"a":"[[[["}', 1);   // false
 */
export function exceedsNestingDepth(text: string, maxDepth: number): boolean {
  if (text.length <= 2 * maxDepth) return false;
  let depth = 0;
  const len = text.length;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: its brackets are data.
      for (i++; i < len; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth -= 1;
    }
  }
  return false;
}
