/**
 * An error as one line: its name and message (a thrown non-error as it prints).
 *
 * @example
 * describeError(new TypeError('bad')); // 'TypeError: bad'
 */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
