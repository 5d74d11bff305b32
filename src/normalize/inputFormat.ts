import { FormatRegistry, GZIP_EXTENSION } from './formatRegistry.js';
import { csvFormat } from './formats/csv.js';
import { ndjsonFormat } from './formats/ndjson.js';

export { GZIP_EXTENSION };

/** The input formats the reference worker normalizes. */
export const InputFormat = { CSV: 'csv', NDJSON: 'ndjson' } as const;
export type InputFormat = (typeof InputFormat)[keyof typeof InputFormat];

/**
 * The formats the reference worker knows. A new format is one file (src/normalize/formats/, exporting
 * an InputFormatDefinition) and one line here; or, without touching the library,
 * `createNormalizeWorker({ formats: defaultFormats.with(myFormat) })`.
 */
export const defaultFormats = new FormatRegistry([csvFormat, ndjsonFormat]);

/**
 * File extensions (lower-case, with the dot) and the format each one selects. A `.gz` after any of
 * them (`.csv.gz`, `.ndjson.gz`, `.jsonl.gz`) selects the same format: the content, not the name,
 * decides whether it is decompressed (decodeInput.ts sniffs gzip's magic bytes), so a gzip named
 * `.csv` is read correctly too.
 */
export const SupportedExtensions: Readonly<Record<string, InputFormat>> = Object.freeze(
  defaultFormats.extensions() as Record<string, InputFormat>,
);

/**
 * Decides the input format from an object key's extension (case-insensitive), ignoring one trailing
 * `.gz`. Returns `undefined` for anything else: a folder marker (`dir/`), a dotfile with no name
 * (`.csv`), `.txt`, `.zip`, a bare `.gz`... The worker then skips the object with a reason; an
 * unsupported file is not an error and must not be retried. Pass the DECODED key (S3 events
 * URL-encode keys; see docs/AWS-BEHAVIOUR.md, "Event keys and sequencers").
 *
 * @example
 * formatOfKey('incoming/2026 sales+returns/café münchen.CSV'); // 'csv'
 * formatOfKey('incoming/events.jsonl.gz');                      // 'ndjson'
 * formatOfKey('incoming/notes.txt');                            // undefined
 */
export function formatOfKey(key: string): InputFormat | undefined {
  return defaultFormats.formatOfKey(key) as InputFormat | undefined;
}
