import { DeadlineNearError, RerunError } from '../errors.js';

/**
 * A window too large for its task: more inputs or a larger output than one task takes, or more than
 * one invocation can read. Retrying cannot help: build the window from windows of a finer grain or
 * raise the bound (and the function's memory and timeout). Not retryable.
 *
 * @example
 * throw new WindowTooLargeError('2026-12-05 has 30000 lineage entries (inputs), above the bound of 20000 (maxInputs)');
 */
export class WindowTooLargeError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'WindowTooLargeError';
  }
}

/**
 * The staged copy of a window's output is not what was written (overwritten, truncated), or the
 * task's own validation refuses it. Retryable: the next attempt builds and stages it again.
 *
 * @example
 * throw new WindowOutputInvalidError('staged window output s3://out/_staging/2026-12-05/ab.json is invalid: not JSON');
 */
export class WindowOutputInvalidError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: true });
    this.name = 'WindowOutputInvalidError';
  }
}

/**
 * A window task definition that cannot be used (caught by defineWindowTask, never mid-run): its
 * partition schemes do not map onto each other, its output layout cannot name a window, or a name
 * is missing. Not retryable.
 *
 * @example
 * throw new WindowTaskConfigurationError('daily', 'the input "hourly" has a static scheme; a time window cannot depend on it');
 */
export class WindowTaskConfigurationError extends RerunError {
  constructor(task: string, problem: string) {
    // A problem that ends on its own question ("did you mean 'build'?") takes no second full stop.
    const end = /[.?!]$/.test(problem) ? '' : '.';
    super(`The window task "${task}" cannot be used: ${problem}${end} Fix its definition (defineWindowTask).`, {
      retryable: false,
    });
    this.name = 'WindowTaskConfigurationError';
  }
}

/**
 * A window task message that cannot be built (an empty stage or window name), or read against an
 * expectation that names an unknown field (parseWindowTaskMessage). Not retryable.
 *
 * @example
 * throw new WindowTaskMessageInvalidError('a window task message names a stage and a window by name');
 */
export class WindowTaskMessageInvalidError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'WindowTaskMessageInvalidError';
  }
}

/**
 * The deadline came near while a window was built from its parts, after this invocation built at
 * least one of them: what is built is published, and the rest goes on from there. The window's
 * handler sends the window's message again, as a new message, and acknowledges this one, so a window
 * whose parts take many invocations does not spend the receives that would dead-letter it. Retryable
 * (a DeadlineNearError) wherever it is not handled so.
 *
 * @example
 * throw new WindowPartsPendingError('2026-12-05', { built: 3, current: 10, total: 24 });
 */
export class WindowPartsPendingError extends DeadlineNearError {
  /** Parts this invocation built. */
  readonly built: number;
  /** Parts current now (built by this invocation or earlier). */
  readonly current: number;
  readonly total: number;
  constructor(
    window: string,
    parts: { readonly built: number; readonly current: number; readonly total: number },
    options: { readonly cause?: unknown } = {},
  ) {
    super(
      `${window}: ${parts.current} of ${parts.total} parts are current (${parts.built} built now); the deadline came near ` +
        'before the rest, which are built from where this stopped',
      options,
    );
    this.name = 'WindowPartsPendingError';
    this.built = parts.built;
    this.current = parts.current;
    this.total = parts.total;
  }
}
