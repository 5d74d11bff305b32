/**
 * The brand every {@link RerunError} carries, registered in the global symbol registry so that a
 * second copy of the package (a bundle beside `dist/`, two versions in one `node_modules`) brands
 * its errors with the same symbol. `instanceof` holds only within one copy: a worker bundled with
 * its own rerun throws errors of another class, and a handler that trusted `instanceof` retried a
 * non-retryable one to the DLQ. The AWS CDK brands its errors the same way.
 */
const RERUN_ERROR_BRAND = Symbol.for('rerun.error');

/**
 * Base class of every error rerun throws on purpose. `retryable` tells the batch handler whether
 * the SQS message should come back (batch item failure) or whether retrying cannot help.
 *
 * Recognise one with {@link RerunError.isRerunError}, not `instanceof`: the brand holds across
 * copies of the package.
 *
 * @example
 * if (RerunError.isRerunError(error) && !error.retryable) alert(error.name);
 */
export class RerunError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = 'RerunError';
    this.retryable = options.retryable ?? true;
    // Not enumerable: the brand stays out of logs and JSON of the error.
    Object.defineProperty(this, RERUN_ERROR_BRAND, { value: true });
  }

  /**
   * True for an error thrown by any copy of rerun (branded with `Symbol.for('rerun.error')` and
   * carrying a boolean `retryable`), where `instanceof RerunError` is true only for this copy's.
   *
   * @example
   * const retryable = RerunError.isRerunError(error) ? error.retryable : true;
   */
  static isRerunError(value: unknown): value is RerunError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[RERUN_ERROR_BRAND] === true &&
      typeof (value as { retryable?: unknown }).retryable === 'boolean'
    );
  }
}

/**
 * True for a rerun error (of any copy of the package, see {@link RerunError.isRerunError}) of the
 * given class name: how a decision that depends on one subclass survives a second copy.
 *
 * @example
 * if (isRerunErrorNamed(error, 'DeadlineNearError')) requeueTheRest();
 */
export function isRerunErrorNamed(value: unknown, name: string): value is RerunError {
  return RerunError.isRerunError(value) && value.name === name;
}

/**
 * Whether a failure may be retried: a rerun error (of any copy) says so itself; anything else (an
 * SDK error, a bug) is assumed transient.
 *
 * @example
 * retryableOf(new InputTooLargeError('too big')); // false
 */
export function retryableOf(error: unknown): boolean {
  return RerunError.isRerunError(error) ? error.retryable : true;
}

/** An SQS message body that is not an S3 event notification (or is malformed). Not retryable. */
export class EventParseError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
    this.name = 'EventParseError';
  }
}

/** A conditional write kept losing races (412/409) beyond the allowed attempts. Retryable. */
export class PublishConflictError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
    this.name = 'PublishConflictError';
  }
}

/**
 * A worker definition or option is invalid: caught at start-up, or, for what only the worker's own
 * code returns (a summary field name S3 metadata cannot hold), at its first item. Not retryable.
 */
export class WorkerConfigurationError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'WorkerConfigurationError';
  }
}

/**
 * A worker's key function returned a key outside the prefixes the worker declared (`outputPrefixes`
 * of defineWorker), which are the only ones its role may write: refused before any request, not
 * retryable, instead of an AccessDenied from S3.
 *
 * @example
 * throw new OutputKeyOutsidePrefixesError('outputKey', 'out/a.csv', ['upper/']);
 */
export class OutputKeyOutsidePrefixesError extends RerunError {
  /** The key that was returned. */
  readonly key: string;
  constructor(keyFunction: string, key: string, prefixes: readonly string[]) {
    super(
      `${keyFunction} returned "${key}", which is outside the worker's outputPrefixes (${prefixes.join(', ')}): ` +
        'its role may write only there. Fix the key function, or add the prefix to outputPrefixes in defineWorker ' +
        "and in the RerunPipeline call that grants the worker's prefixes, then redeploy and rerun redrive.",
      { retryable: false },
    );
    this.name = 'OutputKeyOutsidePrefixesError';
    this.key = key;
  }
}

/** A record's transform could not start before the function's deadline came near. Retryable. */
export class DeadlineNearError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
    this.name = 'DeadlineNearError';
  }
}

/**
 * An unsealed multipart output whose writer may still be sealing it outlasted the HEADs this
 * delivery could wait for within its invocation (src/worker/sealWait.ts): the message is left for a
 * later receive, `retryAfterSeconds` from now (when the writer must be dead), instead of rebuilding an
 * output that is about to be done. Retryable.
 */
export class SealInProgressError extends RerunError {
  /** Whole seconds until the writer must be dead: a later receive then finds the output sealed, or rebuilds it. */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message, { retryable: true });
    this.name = 'SealInProgressError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * An input larger than one invocation can finish (the worker's maxInputBytes, derived from the
 * function's memory and timeout): refused before it is read, never retried into a timeout loop.
 */
export class InputTooLargeError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'InputTooLargeError';
  }
}

/** How many message ids a {@link FullBatchFailureError}'s message lists (all are in `messageIds`). */
const LISTED_MESSAGE_IDS = 10;

/**
 * Every record of an SQS batch failed, and the handler was asked to say so with a throw
 * (`throwOnFullBatchFailure`), so that Lambda's Errors metric and the function's error alarms count
 * the batch. SQS returns every message after its visibility timeout, as it would for a response
 * listing them all. Each record's reason is in its own `record failed` log line. Retryable.
 */
export class FullBatchFailureError extends RerunError {
  /** The number of records of the batch, all failed. */
  readonly failedCount: number;
  /** The SQS message ids of the failed records. */
  readonly messageIds: readonly string[];
  constructor(messageIds: readonly string[]) {
    const listed = messageIds.slice(0, LISTED_MESSAGE_IDS).join(', ');
    const more = messageIds.length > LISTED_MESSAGE_IDS ? ` and ${messageIds.length - LISTED_MESSAGE_IDS} more` : '';
    super(
      `All ${messageIds.length} records of the batch failed (message ids ${listed}${more}); each one's reason is in its "record failed" log line. Every message returns after the queue's visibility timeout.`,
      { retryable: true },
    );
    this.name = 'FullBatchFailureError';
    this.failedCount = messageIds.length;
    this.messageIds = messageIds;
  }
}
