import type { ObjectOutcomeRow } from './OutcomeTracker.js';

/** Options of {@link formatOutcomeTable}. */
export interface FormatOutcomeTableOptions {
  /**
   * Longest reason shown; longer ones are cut with an ellipsis.
   * @default 80
   */
  maxReasonLength?: number;
}

/**
 * Renders one line per object: status, tries, object, output key and reason, in aligned columns.
 * Plain text (no colours), so it reads the same in a terminal, a CI log or a file.
 *
 * @example
 * process.stderr.write(formatOutcomeTable(tracker.rows()));
 * // STATUS     TRIES  OBJECT                           OUTPUT                       REASON
 * // processed  1      s3://rerun-input/incoming/a.csv  normalized/incoming/a.ndjson  written
 */
export function formatOutcomeTable(rows: readonly ObjectOutcomeRow[], options: FormatOutcomeTableOptions = {}): string {
  if (rows.length === 0) return 'No records reached the handler.\n';
  const max = options.maxReasonLength ?? 80;
  const cut = (s: string) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
  const header = ['STATUS', 'TRIES', 'OBJECT', 'OUTPUT', 'REASON'];
  const body = rows.map((r) => [r.status, String(r.attempts), r.subject, r.outputKey ?? '-', cut(oneLine(r.reason))]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => (cells[i] ?? '').length)));
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[header, ...body].map(render).join('\n')}\n`;
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ');
}
