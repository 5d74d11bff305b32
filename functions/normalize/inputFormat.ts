/** The input formats the reference worker normalizes. */
export const InputFormat = { CSV: 'csv', NDJSON: 'ndjson' } as const;
export type InputFormat = (typeof InputFormat)[keyof typeof InputFormat];

/**
 * File extensions (lower-case, with the dot) and the format each one selects. Compressed variants
 * (`.csv.gz`) are deliberately absent: the worker would otherwise parse gzip bytes as text.
 */
export const SupportedExtensions: Readonly<Record<string, InputFormat>> = Object.freeze({
  '.csv': InputFormat.CSV,
  '.ndjson': InputFormat.NDJSON,
  '.jsonl': InputFormat.NDJSON,
});

/**
 * Decides the input format from an object key's extension (case-insensitive). Returns `undefined` for
 * anything else: a folder marker (`dir/`), a dotfile with no name (`.csv`), `.csv.gz`, `.txt`... The
 * worker then skips the object with a reason; an unsupported file is not an error and must not be
 * retried. Pass the DECODED key (S3 events URL-encode keys; see AWS-SEMANTICS.md).
 *
 * @example
 * formatOfKey('incoming/2026 sales+returns/café münchen.CSV'); // 'csv'
 * formatOfKey('incoming/events.jsonl');                         // 'ndjson'
 * formatOfKey('incoming/notes.txt');                            // undefined
 */
export function formatOfKey(key: string): InputFormat | undefined {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return undefined; // no extension, or a bare dotfile such as `.csv`
  const extension = name.slice(dot).toLowerCase();
  return Object.hasOwn(SupportedExtensions, extension) ? SupportedExtensions[extension] : undefined;
}
