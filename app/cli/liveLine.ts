/**
 * A progress line redrawn in place on a terminal: `\r`, erase the line, then the line cut to fit.
 * A line as wide as the terminal or wider wraps, and `\r` then returns only to the start of its last
 * row, so every redraw left a stale copy above (seen at 80 columns with the backfill's bar). One
 * column stays free, as for help text (a line that fills the last column wraps on some terminals).
 *
 * @example
 * liveLine('[####......] 4/10 (40%) published', 20); // '\r\x1b[2K[####......] 4/10 …'
 */
export function liveLine(line: string, columns: number | undefined): string {
  return `\r\x1b[2K${fitLine(line, columns)}`;
}

/**
 * `line` cut to `columns - 1` characters, its last one an ellipsis, when it is longer; as it is
 * without a width (not a terminal).
 *
 * @example
 * fitLine('abcdef', 5); // 'abc…'
 */
export function fitLine(line: string, columns: number | undefined): string {
  if (columns === undefined || columns < 2) return line;
  const chars = [...line];
  const room = columns - 1;
  return chars.length <= room ? line : `${chars.slice(0, room - 1).join('')}…`;
}
