/** An SQS error in one line for a note: its name, HTTP status and the first line of its message. */
export function describeError(error: unknown): string {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode ? ` (HTTP ${e.$metadata.httpStatusCode})` : '';
  return `${e?.name ?? 'Error'}${status}: ${(e?.message ?? String(error)).split('\n')[0]}`;
}
