/**
 * An error as one line for a record's reason or a log field: its name and message, or the thrown
 * value as text when it is not an Error.
 *
 * @example
 * errorMessage(new TypeError('bad')); // 'TypeError: bad'
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
