import type { InvocationResult } from './FunctionInvoker.js';

/**
 * Reads the emulator's answer the way Lambda's event source mapping reads an invocation result.
 * The emulator differs from Lambda's Invoke API in two ways this absorbs: a timeout answers 200
 * with the text "Task timed out after N.00 seconds", and an error thrown by the handler answers 200
 * with the runtime's error document `{ errorType, errorMessage, trace }` but without Lambda's
 * `X-Amz-Function-Error` header. So a 200 body of exactly that shape is read as a function error:
 * a handler that returned such a document would fail its batch (the messages come back), never
 * lose them. A runtime that died (exit, signal, failed init) answers 502.
 */
export function readInvokeAnswer(status: number, body: string): InvocationResult {
  if (status === 200 && /^Task timed out after [\d.]+ seconds/.test(body)) return { kind: 'timeout', error: body };
  let parsed: unknown = null;
  let json = true;
  if (body.trim() !== '') {
    try {
      parsed = JSON.parse(body);
    } catch {
      json = false;
    }
  }
  const errorDocument = asErrorDocument(parsed);
  if (status !== 200) {
    const detail = errorDocument ? `${errorDocument.errorType}: ${errorDocument.errorMessage}` : body.slice(0, 500);
    return { kind: 'threw', error: `the runtime failed (HTTP ${status}): ${detail}` };
  }
  if (errorDocument) return { kind: 'threw', error: `${errorDocument.errorType}: ${errorDocument.errorMessage}` };
  if (!json) return { kind: 'returned', value: body };
  return { kind: 'returned', value: parsed };
}

function asErrorDocument(value: unknown): { errorType: string; errorMessage: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { errorType, errorMessage } = value as { errorType?: unknown; errorMessage?: unknown };
  if (typeof errorType !== 'string' || typeof errorMessage !== 'string') return undefined;
  return { errorType, errorMessage };
}
