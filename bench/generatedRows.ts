/** The bench's input formats. */
export type BenchFormat = 'csv' | 'ndjson';
/**
 * The generated inputs: the two formats' mixed rows, and `csv-wide`, two columns with a
 * 240-character ASCII payload, the favourable case for a per-record cost (fewer, longer records).
 */
export type BenchRows = BenchFormat | 'csv-wide';

const HEADERS: Partial<Record<BenchRows, string>> = { csv: 'id,name,city,amount,note', 'csv-wide': 'id,payload' };
const WIDE_PAYLOAD = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(7).slice(0, 240);

/** The file extension of an input of `rows`. */
export function extensionOf(rows: BenchRows): string {
  return rows === 'ndjson' ? 'ndjson' : 'csv';
}

/**
 * Row `i` of the bench's generated inputs: a quoted field with a comma, a multi-byte city name in
 * one row of seven, and every 50th row bad (a short CSV row, a truncated NDJSON object), so the
 * quarantine path and its side output are exercised too. The normalizer section and the rss
 * section read the same rows, so their figures compare.
 *
 * @example
 * generatedRow('csv', 7); // '7,Customer 7,München,8.75,"note, with comma 7"'
 */
export function generatedRow(format: BenchRows, i: number): string {
  if (format === 'csv-wide') return i % 50 === 49 ? `${i}` : `${i},${WIDE_PAYLOAD}`;
  if (format === 'csv') {
    return i % 50 === 49
      ? `${i},short row`
      : `${i},Customer ${i},${i % 7 === 0 ? 'München' : 'Lyon'},${(i * 1.25).toFixed(2)},"note, with comma ${i}"`;
  }
  return i % 50 === 49
    ? `{"id":${i},"broken"`
    : JSON.stringify({ id: i, name: `Customer ${i}`, city: i % 7 === 0 ? 'München' : 'Lyon', amount: i * 1.25 });
}

/**
 * Consecutive rows from `first`, LF-terminated, until about `bytes` bytes (one whole row past it at
 * most), with the CSV header first when `first` is 0.
 *
 * @example
 * const { text, next } = generatedRows('ndjson', 0, 64 * 1024 ** 2);
 */
export function generatedRows(format: BenchRows, first: number, bytes: number): { text: string; next: number } {
  const header = HEADERS[format];
  const lines: string[] = header !== undefined && first === 0 ? [header] : [];
  let size = 0;
  let i = first;
  while (size < bytes) {
    const line = generatedRow(format, i);
    i++;
    lines.push(line);
    // Byte length, not string length: the multi-byte rows must not make a part exceed its size.
    size += Buffer.byteLength(line) + 1;
  }
  return { text: `${lines.join('\n')}\n`, next: i };
}
