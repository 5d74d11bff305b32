/**
 * Plain-text columns for the CLI's tables: every column but the last padded to its widest cell, two
 * spaces apart, trailing spaces trimmed. Plain text (no colours), so a table reads the same in a
 * terminal, a CI log or a file.
 *
 * @example
 * alignColumns([['STATUS', 'OBJECT'], ['processed', 's3://in/a.csv']]);
 * // 'STATUS     OBJECT\nprocessed  s3://in/a.csv'
 */
export function alignColumns(rows: readonly (readonly string[])[]): string {
  const columns = Math.max(0, ...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((cells) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
