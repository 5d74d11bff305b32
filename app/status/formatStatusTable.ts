import { alignColumns } from '../alignColumns.js';
import type { PartitionStatus, PartitionVerdict } from '../partition/judgePartition.js';

/**
 * One line per partition (partition, status, inputs, reason) in aligned columns, plain text.
 *
 * @example
 * process.stderr.write(formatStatusTable(report.partitions));
 * // PARTITION      STATUS     INPUTS  REASON
 * // dt=2026-01-05  published  3       up to date (3 inputs)
 */
export function formatStatusTable(partitions: readonly PartitionVerdict[]): string {
  if (partitions.length === 0) return 'No partition in the window.\n';
  const header = ['PARTITION', 'STATUS', 'INPUTS', 'REASON'];
  // With the inputs listed, INPUTS counts them (an input without an output too); else the outputs.
  const rows = partitions.map((p) => [`dt=${p.day}`, p.status, String(p.coverage?.inputs ?? p.inputs), p.reason]);
  return `${alignColumns([header, ...rows])}\n`;
}

/**
 * The summary line of a status: every count, in a fixed order.
 *
 * @example
 * formatStatusCounts({ published: 28, missing: 1, stale: 1, invalid: 0 }); // '30 partitions: 28 published, 1 missing, 1 stale, 0 invalid'
 */
export function formatStatusCounts(counts: Readonly<Record<PartitionStatus, number>>): string {
  const incomplete = counts.incomplete ?? 0;
  const total = counts.published + counts.missing + counts.stale + counts.invalid + incomplete;
  return (
    `${total} partition${total === 1 ? '' : 's'}: ${counts.published} published, ${counts.missing} missing, ` +
    `${counts.stale} stale, ${counts.invalid} invalid${incomplete > 0 ? `, ${incomplete} incomplete` : ''}`
  );
}
