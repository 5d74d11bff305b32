import { alignColumns } from '../alignColumns.js';
import type { ObjectOutcomeRow } from './OutcomeTracker.js';

/** Options of {@link formatOutcomeTable}. */
export interface FormatOutcomeTableOptions {
  /**
   * Longest reason shown; longer ones are cut with an ellipsis.
   * @default 80
   */
  maxReasonLength?: number;
  /**
   * Records the handler received in the session. When some arrived but no outcome was seen, the
   * table says so instead of claiming that nothing reached the handler.
   * @default 0
   */
  recordsDelivered?: number;
  /**
   * The terminal's width (`process.stderr.columns`): every line fits in it. Long keys are cut in
   * the middle (the bucket and the file name stay readable); below 120 columns TRIES and OUTPUT are
   * dropped (the output key is a pure function of the object: `rerun ls` shows it).
   * @default unlimited (a log or a file)
   */
  width?: number;
}

/** Below this width the table keeps STATUS, OBJECT and REASON only. */
export const NARROW_TABLE_COLUMNS = 120;

/**
 * Renders one line per object: status, tries, object, output key and reason, in aligned columns.
 * Plain text (no colours), so it reads the same in a terminal, a CI log or a file.
 *
 * @example
 * process.stderr.write(formatOutcomeTable(tracker.rows(), { width: process.stderr.columns }));
 * // STATUS     TRIES  OBJECT                           OUTPUT                       REASON
 * // processed  1      s3://rerun-input/incoming/a.csv  normalized/incoming/a.ndjson  written
 */
export function formatOutcomeTable(rows: readonly ObjectOutcomeRow[], options: FormatOutcomeTableOptions = {}): string {
  if (rows.length === 0) {
    const delivered = options.recordsDelivered ?? 0;
    if (delivered === 0) return 'No records reached the handler.\n';
    return (
      `${delivered} record(s) reached the handler, but none reported an outcome to rerun dev: a handler ` +
      "not built with rerun-pipeline's createSqsBatchHandler reports none, so the batch results above are " +
      'what is known of them.\n'
    );
  }
  const max = options.maxReasonLength ?? 80;
  const width = options.width && options.width > 0 ? options.width : undefined;
  const narrow = width !== undefined && width < NARROW_TABLE_COLUMNS;
  const header = narrow ? ['STATUS', 'OBJECT', 'REASON'] : ['STATUS', 'TRIES', 'OBJECT', 'OUTPUT', 'REASON'];
  let body = rows.map((r) => {
    const reason = cutEnd(oneLine(r.reason), max);
    return narrow
      ? [r.status, r.subject, reason]
      : [r.status, String(r.attempts), r.subject, r.outputKey ?? '-', reason];
  });
  if (width !== undefined) body = fitToWidth(header, body, width);
  return `${alignColumns([header, ...body])}\n`;
}

/**
 * Cuts a string to `n` characters in the middle, keeping both ends (`s3://in/incom…/file.csv`).
 *
 * @example
 * cutMiddle('s3://rerun-input/incoming/a/very/long/path/file.csv', 24); // 's3://rerun-i…h/file.csv'
 */
export function cutMiddle(s: string, n: number): string {
  const chars = [...s];
  if (chars.length <= n) return s;
  if (n <= 1) return '…';
  const head = Math.ceil((n - 1) / 2);
  const tail = n - 1 - head;
  return `${chars.slice(0, head).join('')}…${tail > 0 ? chars.slice(chars.length - tail).join('') : ''}`;
}

function cutEnd(s: string, n: number): string {
  const chars = [...s];
  return chars.length > n ? `${chars.slice(0, Math.max(0, n - 1)).join('')}…` : s;
}

/** Shrinks the key columns (cut in the middle), then the reason (cut at the end), until a line fits. */
function fitToWidth(header: readonly string[], body: string[][], width: number): string[][] {
  const last = header.length - 1;
  const keyColumns = header.flatMap((h, i) => (h === 'OBJECT' || h === 'OUTPUT' ? [i] : []));
  const widthOf = (i: number) => Math.max((header[i] ?? '').length, ...body.map((r) => [...(r[i] ?? '')].length));
  const fixed = header.reduce((sum, _h, i) => (keyColumns.includes(i) || i === last ? sum : sum + widthOf(i) + 2), 0);
  // The reason keeps at least 24 columns (or what it needs); the keys share what is left.
  const reasonNeed = Math.min(widthOf(last), 24);
  const keyBudget = Math.max(12 * keyColumns.length, width - fixed - reasonNeed - 2 * keyColumns.length);
  const perKey = Math.floor(keyBudget / Math.max(1, keyColumns.length));
  const cut = body.map((r) => r.map((c, i) => (keyColumns.includes(i) ? cutMiddle(c, Math.max(12, perKey)) : c)));
  const used = header.reduce(
    (sum, _h, i) =>
      i === last ? sum : sum + Math.max((header[i] ?? '').length, ...cut.map((r) => [...(r[i] ?? '')].length)) + 2,
    0,
  );
  const reasonRoom = Math.max(8, width - used);
  return cut.map((r) => r.map((c, i) => (i === last ? cutEnd(c, reasonRoom) : c)));
}

/**
 * One object's outcome as it happens, for the live view: `processed  s3://in/a.csv  output created`,
 * cut to the terminal's width.
 *
 * @example
 * progress.note(formatOutcomeLine({ status: 'processed', subject: 's3://in/a.csv', reason: 'output created' }, 80));
 */
export function formatOutcomeLine(
  row: { readonly status: string; readonly subject: string; readonly reason: string },
  width?: number,
): string {
  const line = `${row.status.padEnd(9)}  ${row.subject}  ${oneLine(row.reason)}`;
  if (!width || [...line].length <= width) return line;
  const room = Math.max(12, Math.floor((width - 11) / 2));
  const subject = cutMiddle(row.subject, room);
  return cutEnd(`${row.status.padEnd(9)}  ${subject}  ${oneLine(row.reason)}`, width);
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ');
}
