import { LedgerConfigurationError } from './errors.js';

/** DynamoDB limits a partition key value to 2048 bytes. */
const MAX_KEY_BYTES = 2048;

/** Refuses a dedupe key DynamoDB cannot store as a partition key: empty, or over 2048 UTF-8 bytes. */
export function validateKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) {
    throw new LedgerConfigurationError('A dedupe key must be a non-empty string.');
  }
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > MAX_KEY_BYTES) {
    throw new LedgerConfigurationError(`Dedupe key is ${bytes} bytes; DynamoDB allows ${MAX_KEY_BYTES}. Hash it.`);
  }
}
