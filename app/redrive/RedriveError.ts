import { RerunError } from '../../src/errors.js';

/** A redrive cannot run as asked (no source queue known, a move task failed). Not retryable as is. */
export class RedriveError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
    this.name = 'RedriveError';
  }
}
