/**
 * Base class of every error rerun throws on purpose. `retryable` tells the batch handler whether
 * the SQS message should come back (batch item failure) or whether retrying cannot help.
 */
export class RerunError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.name = 'RerunError';
    this.retryable = options.retryable ?? true;
  }
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

/** A worker definition or option is invalid (caught at start-up, never mid-batch). */
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
