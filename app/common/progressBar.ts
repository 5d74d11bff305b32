/**
 * A text progress bar, e.g. `[##########..........] 15/30 (50%)`. Pure; the caller decides where it
 * goes and whether it rewrites one terminal line.
 *
 * @example
 * renderProgressBar(15, 30, 20); // '[##########..........] 15/30 (50%)'
 */
export function renderProgressBar(done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, done / total)) : 1;
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} (${Math.floor(ratio * 100)}%)`;
}

/**
 * Whether `done` is worth a line on a log (not a terminal): every tenth of the total, and the end.
 *
 * @example
 * isProgressStep(30, 300); // true
 * isProgressStep(31, 300); // false
 */
export function isProgressStep(done: number, total: number): boolean {
  return done === total || done % Math.max(1, Math.ceil(total / 10)) === 0;
}
