/**
 * A result as the ledger stores it: its JSON, or why it could not be stored (not JSON, or larger
 * than `maxBytes` UTF-8 bytes). An effect that returned undefined stores nothing.
 */
export function serializeResult(
  result: unknown,
  maxBytes: number,
): { json?: string; omitted?: { reason: string; cause?: unknown } } {
  let json: string | undefined;
  try {
    json = JSON.stringify(result);
  } catch (cause) {
    return { omitted: { reason: `result is not JSON-serializable: ${(cause as Error).message}`, cause } };
  }
  if (json === undefined) return {};
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) return { omitted: { reason: `result is ${bytes} bytes of JSON (limit ${maxBytes})` } };
  return { json };
}
