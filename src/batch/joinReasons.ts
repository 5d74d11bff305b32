/** Most distinct reasons one message's outcome names; the rest are counted. */
export const MAX_REASONS_SHOWN = 10;

/**
 * The reason of a message that carried several S3 records: each distinct reason once, in the order
 * first seen, with how many records gave it, and at most {@link MAX_REASONS_SHOWN} of them. A message
 * of 292 records used to repeat every record's reason in one log line (33,870 characters); the
 * outcome of each object is still in its own counts (processed, quarantined) and in S3.
 *
 * @example
 * joinReasons(['already done', 'already done', 'output created']);
 * // 'already done (x2); output created'
 */
export function joinReasons(reasons: readonly string[], max = MAX_REASONS_SHOWN): string {
  const counts = new Map<string, number>();
  for (const reason of reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const shown = [...counts].slice(0, max).map(([reason, n]) => (n > 1 ? `${reason} (x${n})` : reason));
  const hidden = [...counts].slice(max);
  if (hidden.length > 0) {
    const records = hidden.reduce((sum, [, n]) => sum + n, 0);
    shown.push(`${hidden.length} other reason(s) of ${records} record(s) not shown`);
  }
  return shown.join('; ');
}
