import { LedgerRecordCorruptError, MAX_STORED_MESSAGE_CHARS, type StoredFailure } from './errors.js';

/**
 * States of a ledger item. A key is IN_PROGRESS while a lease holder runs the effect (or after a
 * retryable failure released the lease), SUCCEEDED once the effect's result is stored, FAILED once a
 * terminal failure is stored; SUCCEEDED and FAILED are final and replayed until the item's TTL.
 */
export const LedgerStatus = { IN_PROGRESS: 'IN_PROGRESS', SUCCEEDED: 'SUCCEEDED', FAILED: 'FAILED' } as const;
export type LedgerStatus = (typeof LedgerStatus)[keyof typeof LedgerStatus];

/**
 * Attribute names of a ledger item (one item per dedupe key). Several are DynamoDB reserved words
 * (`status`, `owner`, `ttl`), so every expression refers to them through ExpressionAttributeNames.
 */
export const LedgerAttribute = {
  /** Partition key (string): the dedupe key itself. */
  KEY: 'pk',
  STATUS: 'status',
  /** SHA-256 of the canonical JSON payload, written by the first claim and compared on every later call. */
  PAYLOAD_HASH: 'payloadHash',
  /** Number of claims so far (1 on the first execution, +1 per takeover or retry). */
  ATTEMPT: 'attempt',
  /** Token of the latest lease holder; complete/fail/release require `owner = :me`. */
  OWNER: 'owner',
  /** End of the current lease, epoch milliseconds. Claimable when `leaseExpiresAt < now`. */
  LEASE_EXPIRES_AT: 'leaseExpiresAt',
  /** First claim, epoch milliseconds. */
  CREATED_AT: 'createdAt',
  /** SUCCEEDED/FAILED time, epoch milliseconds. */
  COMPLETED_AT: 'completedAt',
  /** Expiry for DynamoDB TTL deletion, epoch seconds (TTL requires seconds). */
  TTL: 'ttl',
  /** The effect's result as JSON text (SUCCEEDED). */
  RESULT_JSON: 'resultJson',
  /** Set instead of RESULT_JSON when the result could not be stored: the reason (SUCCEEDED). */
  RESULT_OMITTED: 'resultOmitted',
  FAILURE_NAME: 'failureName',
  FAILURE_MESSAGE: 'failureMessage',
  /** Last retryable error that released a lease (kept for operators; does not block a new claim). */
  LAST_ERROR_NAME: 'lastErrorName',
  LAST_ERROR_MESSAGE: 'lastErrorMessage',
} as const;

/** One ledger item, as the pure core sees it. */
export interface LedgerRecord {
  readonly dedupeKey: string;
  readonly status: LedgerStatus;
  readonly payloadHash: string;
  readonly attempt: number;
  readonly owner: string | undefined;
  readonly leaseExpiresAt: number | undefined;
  readonly createdAt: number | undefined;
  readonly completedAt: number | undefined;
  /** Epoch seconds. */
  readonly ttl: number | undefined;
  readonly resultJson: string | undefined;
  readonly resultOmitted: string | undefined;
  readonly failure: StoredFailure | undefined;
  readonly lastError: StoredFailure | undefined;
}

/**
 * Lease used when the caller gives no remaining time (not in Lambda): one function timeout of the
 * reference worker (app/topology.ts), so a crashed holder blocks the key for at most this long.
 */
export const DEFAULT_LEASE_MS = 60_000;
/**
 * Added to the Lambda's remaining time: the holder cannot run past its deadline, so the lease only
 * needs a margin for clock differences between hosts and the final write's latency.
 */
export const DEFAULT_LEASE_MARGIN_MS = 5_000;
/**
 * How long a finished record is kept (and replayed): 30 days. Longer than any redelivery can arrive:
 * SQS keeps a message at most 14 days, counted from its original enqueue time even after a move to
 * the DLQ; older reruns of unchanged input are deduplicated for this long too.
 */
export const DEFAULT_TTL_SECONDS = 30 * 24 * 3600;
/** Default bound on a stored result (JSON, UTF-8 bytes). */
export const DEFAULT_MAX_RESULT_BYTES = 32 * 1024;
/** Hard bound on `maxResultBytes`: a DynamoDB item is limited to 400 KB including names and other attributes. */
export const MAX_RESULT_BYTES_LIMIT = 300 * 1024;
/** SQS caps a message's visibility timeout at 12 hours, so a deferral can never ask for more. */
export const MAX_RETRY_AFTER_SECONDS = 43_200;

/** Inputs of {@link leaseDurationMs}. */
export interface LeasePolicy {
  /** Lease when `remainingTimeMs` is unknown. @default DEFAULT_LEASE_MS (60 s) */
  readonly defaultLeaseMs: number;
  /** Added to `remainingTimeMs`. @default DEFAULT_LEASE_MARGIN_MS (5 s) */
  readonly marginMs: number;
}

/**
 * Length of a new lease: the Lambda's remaining time plus a margin when known (the holder is frozen
 * or killed at its deadline, so its claim needs to outlive it only slightly), else the default.
 *
 * @example
 * leaseDurationMs(context.getRemainingTimeInMillis(), { defaultLeaseMs: 60_000, marginMs: 5_000 });
 */
export function leaseDurationMs(remainingTimeMs: number | undefined, policy: LeasePolicy): number {
  if (remainingTimeMs === undefined) return policy.defaultLeaseMs;
  return Math.max(0, Math.floor(remainingTimeMs)) + policy.marginMs;
}

/**
 * Whether a lease is over at `now`. Mirrors the claim's condition `leaseExpiresAt < :now` exactly, so
 * the pure decision and DynamoDB never disagree about an item (at equality the lease still holds).
 *
 * @example
 * isLeaseExpired(1_000, 1_001); // true
 */
export function isLeaseExpired(leaseExpiresAt: number | undefined, now: number): boolean {
  return leaseExpiresAt === undefined || leaseExpiresAt < now;
}

/**
 * Epoch seconds for the `ttl` attribute. TTL deletion is lazy (typically within days), so it only
 * ages records out; expiry decisions compare this value in conditions (see {@link isRecordExpired}).
 *
 * @example
 * ttlEpochSeconds(1_700_000_000_000, 3600); // 1_700_003_600
 */
export function ttlEpochSeconds(now: number, ttlSeconds: number): number {
  return Math.floor(now / 1000) + ttlSeconds;
}

/**
 * Whether a record is past its TTL at `now` and so counts as absent, deleted or not: mirrors the claim
 * condition `ttl < :nowSeconds`. AWS deletes expired items lazily; behaviour must not depend on when.
 *
 * @example
 * isRecordExpired(1_700_000_000, 1_700_000_001_000); // true
 */
export function isRecordExpired(ttl: number | undefined, now: number): boolean {
  return ttl !== undefined && ttl < Math.floor(now / 1000);
}

/**
 * Seconds a deferred message should stay invisible so that it returns after the lease is over:
 * strictly past `leaseExpiresAt` (hence floor + 1), at least 1 s and at most the SQS maximum.
 *
 * @example
 * retryAfterSeconds(10_000, 7_500); // 3
 */
export function retryAfterSeconds(leaseExpiresAt: number, now: number): number {
  const seconds = Math.floor((leaseExpiresAt - now) / 1000) + 1;
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds));
}

/**
 * Builds a {@link LedgerRecord} from an item's plain attributes (strings and numbers), checking the
 * shape this code writes.
 *
 * @example
 * parseLedgerRecord({ pk: 'k', status: 'SUCCEEDED', payloadHash: 'ab', attempt: 1, resultJson: '1' });
 */
export function parseLedgerRecord(item: Readonly<Record<string, unknown>>): LedgerRecord {
  const A = LedgerAttribute;
  const dedupeKey = item[A.KEY];
  if (typeof dedupeKey !== 'string') throw new LedgerRecordCorruptError(String(dedupeKey), 'no string "pk"');
  const text = (name: string): string | undefined => {
    const value = item[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new LedgerRecordCorruptError(dedupeKey, `"${name}" is not a string`);
    return value;
  };
  const num = (name: string): number | undefined => {
    const value = item[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new LedgerRecordCorruptError(dedupeKey, `"${name}" is not a number`);
    }
    return value;
  };
  const status = text(A.STATUS);
  if (!Object.values(LedgerStatus).includes(status as LedgerStatus)) {
    throw new LedgerRecordCorruptError(dedupeKey, `unknown status ${JSON.stringify(status)}`);
  }
  const payloadHash = text(A.PAYLOAD_HASH);
  if (payloadHash === undefined) throw new LedgerRecordCorruptError(dedupeKey, 'no "payloadHash"');
  const failureName = text(A.FAILURE_NAME);
  const lastErrorName = text(A.LAST_ERROR_NAME);
  const record: LedgerRecord = {
    dedupeKey,
    status: status as LedgerStatus,
    payloadHash,
    attempt: num(A.ATTEMPT) ?? 0,
    owner: text(A.OWNER),
    leaseExpiresAt: num(A.LEASE_EXPIRES_AT),
    createdAt: num(A.CREATED_AT),
    completedAt: num(A.COMPLETED_AT),
    ttl: num(A.TTL),
    resultJson: text(A.RESULT_JSON),
    resultOmitted: text(A.RESULT_OMITTED),
    failure: failureName === undefined ? undefined : { name: failureName, message: text(A.FAILURE_MESSAGE) ?? '' },
    lastError:
      lastErrorName === undefined ? undefined : { name: lastErrorName, message: text(A.LAST_ERROR_MESSAGE) ?? '' },
  };
  if (record.status === LedgerStatus.FAILED && record.failure === undefined) {
    throw new LedgerRecordCorruptError(dedupeKey, 'status FAILED without "failureName"');
  }
  return record;
}

/**
 * The {@link StoredFailure} for an error: its name and a message cut to a bounded length.
 *
 * @example
 * toStoredFailure(new Error('boom')); // { name: 'Error', message: 'boom' }
 */
export function toStoredFailure(error: unknown, maxChars = MAX_STORED_MESSAGE_CHARS): StoredFailure {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return {
    name: name.slice(0, 200),
    message: message.length > maxChars ? `${message.slice(0, maxChars - 1)}…` : message,
  };
}

/**
 * Whether the effect's error is terminal: only an error that says `retryable: false` (as every
 * non-retryable `RerunError` does) is stored and replayed; anything else releases the lease.
 *
 * @example
 * isTerminalError(new RerunError('bad request', { retryable: false })); // true
 */
export function isTerminalError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === false;
}
