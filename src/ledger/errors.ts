import { RerunError } from '../errors.js';

/** A failure as the ledger stores it: enough for an operator to act on, small enough for one item. */
export interface StoredFailure {
  /** `name` of the error the effect threw, e.g. `WebhookDeliveryError`. */
  readonly name: string;
  /** Its message, truncated to `MAX_STORED_MESSAGE_CHARS` characters. */
  readonly message: string;
}

/** Stored error messages are cut to this many characters (the whole item must stay far below 400 KB). */
export const MAX_STORED_MESSAGE_CHARS = 1000;

/**
 * Another holder's lease on this dedupe key has not expired yet: the effect may be running right now.
 * Retryable. The batch handler should not fail the whole batch nor touch the other holder's record:
 * it delays this one message with `ChangeMessageVisibility(VisibilityTimeout = retryAfterSeconds)` and
 * reports it as a batch item failure, so the message comes back once the lease has run out.
 *
 * @example
 * try { await ledger.once(key, payload, effect); }
 * catch (error) {
 *   if (error instanceof LedgerInProgressError) deferMessage(record, error.retryAfterSeconds);
 * }
 */
export class LedgerInProgressError extends RerunError {
  readonly dedupeKey: string;
  /** Whole seconds until the holder's lease has expired (1 to 43,200, the SQS visibility maximum). */
  readonly retryAfterSeconds: number;
  /** When the holder's lease expires, epoch milliseconds. */
  readonly leaseExpiresAt: number;
  constructor(dedupeKey: string, details: { retryAfterSeconds: number; leaseExpiresAt: number; reason?: string }) {
    super(
      `Dedupe key "${dedupeKey}" is being processed elsewhere (lease until ${new Date(details.leaseExpiresAt).toISOString()})` +
        `${details.reason ? `: ${details.reason}` : ''}; retry in ${details.retryAfterSeconds} s.`,
      { retryable: true },
    );
    this.name = 'LedgerInProgressError';
    this.dedupeKey = dedupeKey;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.leaseExpiresAt = details.leaseExpiresAt;
  }
}

/**
 * The dedupe key was first used with a different payload (compared by the SHA-256 of its canonical
 * JSON). Terminal: as with Stripe idempotency keys, reusing a key for other content is a caller bug,
 * and running the effect would make the key lie about what it protects.
 *
 * @example
 * await ledger.once('k', { a: 1 }, effect);
 * await ledger.once('k', { a: 2 }, effect); // throws LedgerPayloadMismatchError
 */
export class LedgerPayloadMismatchError extends RerunError {
  readonly dedupeKey: string;
  readonly storedPayloadHash: string;
  readonly payloadHash: string;
  constructor(dedupeKey: string, details: { storedPayloadHash: string; payloadHash: string }) {
    super(
      `Dedupe key "${dedupeKey}" was first used with another payload (stored hash ${details.storedPayloadHash}, ` +
        `this call ${details.payloadHash}). Derive the key from everything the payload contains, or use a new key.`,
      { retryable: false },
    );
    this.name = 'LedgerPayloadMismatchError';
    this.dedupeKey = dedupeKey;
    this.storedPayloadHash = details.storedPayloadHash;
    this.payloadHash = details.payloadHash;
  }
}

/**
 * A previous attempt failed terminally and the ledger stored why; this attempt replays that failure
 * instead of running the effect again (as Stripe replays a stored error). Terminal.
 *
 * @example
 * catch (error) { if (error instanceof LedgerStoredFailureError) log(error.failure.name, error.failure.message); }
 */
export class LedgerStoredFailureError extends RerunError {
  readonly dedupeKey: string;
  /** The stored reason: name and message of the error the effect threw. */
  readonly failure: StoredFailure;
  /** When the failure was recorded, epoch milliseconds (undefined on records written without it). */
  readonly failedAt: number | undefined;
  constructor(dedupeKey: string, failure: StoredFailure, failedAt?: number) {
    super(
      `Dedupe key "${dedupeKey}" failed terminally on an earlier attempt (${failure.name}: ${failure.message}); ` +
        'the effect is not run again. Fix the cause, then delete the ledger item to allow a new attempt.',
      { retryable: false },
    );
    this.name = 'LedgerStoredFailureError';
    this.dedupeKey = dedupeKey;
    this.failure = failure;
    this.failedAt = failedAt;
  }
}

/** Which write of the lease holder lost its condition. */
export const LedgerWriteStage = { COMPLETE: 'complete', FAIL: 'fail', RELEASE: 'release' } as const;
export type LedgerWriteStage = (typeof LedgerWriteStage)[keyof typeof LedgerWriteStage];

/**
 * The holder's complete/fail/release write found that it no longer holds the lease (it expired and
 * another worker claimed the key). Nothing was overwritten. Retryable: the next attempt finds the new
 * holder's record (replay, or in progress). When `stage` is `complete` the effect did run here; the
 * receiver discards the repeat by its dedupe key.
 *
 * @example
 * catch (error) { if (error instanceof LedgerLeaseLostError) logger.warn('lease lost', { stage: error.stage }); }
 */
export class LedgerLeaseLostError extends RerunError {
  readonly dedupeKey: string;
  readonly stage: LedgerWriteStage;
  constructor(
    dedupeKey: string,
    stage: LedgerWriteStage,
    details: { owner: string; currentOwner?: string | undefined },
  ) {
    super(
      `Lost the lease on dedupe key "${dedupeKey}" before the ${stage} write (held as ${details.owner}, ` +
        `now ${details.currentOwner ?? 'nobody'}); the other holder's record was left untouched.`,
      { retryable: true },
    );
    this.name = 'LedgerLeaseLostError';
    this.dedupeKey = dedupeKey;
    this.stage = stage;
  }
}

/**
 * The effect succeeded but its result cannot be stored for replay: its JSON is larger than the
 * configured bound (a DynamoDB item is limited to 400 KB), or it is not JSON at all. The ledger still
 * records the key as SUCCEEDED (the effect is never repeated) and throws this on this and every later
 * attempt. Terminal: make the effect return a small JSON summary.
 *
 * @example
 * await ledger.once(key, payload, async () => hugeObject); // throws LedgerResultUnstorableError
 */
export class LedgerResultUnstorableError extends RerunError {
  readonly dedupeKey: string;
  /** Why, e.g. `result is 40000 bytes of JSON (limit 32768)`. */
  readonly reason: string;
  constructor(dedupeKey: string, reason: string, options: { cause?: unknown } = {}) {
    super(
      `The effect for dedupe key "${dedupeKey}" succeeded, but its result could not be stored (${reason}); ` +
        'the key is recorded as done without a result and will not run again. Return a small JSON summary instead.',
      { retryable: false, cause: options.cause },
    );
    this.name = 'LedgerResultUnstorableError';
    this.dedupeKey = dedupeKey;
    this.reason = reason;
  }
}

/**
 * A ledger item does not have the shape this code writes (edited by hand, or another tool's table).
 * Terminal: inspect the item; delete it to let the key run again.
 *
 * @example
 * parseLedgerRecord({ pk: 'k' }); // throws LedgerRecordCorruptError
 */
export class LedgerRecordCorruptError extends RerunError {
  constructor(dedupeKey: string, problem: string) {
    super(`Ledger item for dedupe key "${dedupeKey}" is malformed: ${problem}.`, { retryable: false });
    this.name = 'LedgerRecordCorruptError';
  }
}

/**
 * A ledger option or argument is invalid (empty key, TTL shorter than a lease, ...). Terminal.
 *
 * @example
 * new DynamoDBLedger({ client, tableName: '' }); // throws LedgerConfigurationError
 */
export class LedgerConfigurationError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'LedgerConfigurationError';
  }
}
