import { RerunError } from '../src/errors.js';

/**
 * A local resource cannot be used as asked (a bucket name owned by another account, an invalid
 * app name, contradictory overrides). Not retryable: the message says what to change.
 */
export class LocalSetupError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
    this.name = 'LocalSetupError';
  }
}
