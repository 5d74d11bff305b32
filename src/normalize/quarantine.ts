/**
 * One line of the quarantine NDJSON file: why a record was rejected and where it came from, so an
 * operator can fix the source and rerun. Keys are always written in this order, with no timestamp or
 * id, so the same input yields the same quarantine bytes on every rerun.
 */
export interface QuarantineEntry {
  /** 1-based physical line number (counting every `\n` in the file) on which the record starts. */
  readonly line: number;
  /** Stable, human-readable reason, e.g. `expected 3 fields, got 2` or `record exceeds 1 MiB`. */
  readonly reason: string;
  /** The record's original text (line terminator and a UTF-8 BOM removed), cut to the raw limit. */
  readonly raw: string;
  /** True when `raw` was cut (the record was longer than the limit, 1024 characters by default). */
  readonly truncated: boolean;
}

/**
 * Serializes a quarantine entry as one NDJSON line (no trailing newline).
 *
 * @example
 * formatQuarantineLine({ line: 3, reason: 'expected 2 fields, got 1', raw: 'x', truncated: false });
 * // '{"line":3,"reason":"expected 2 fields, got 1","raw":"x","truncated":false}'
 */
export function formatQuarantineLine(entry: QuarantineEntry): string {
  return JSON.stringify({ line: entry.line, reason: entry.reason, raw: entry.raw, truncated: entry.truncated });
}
