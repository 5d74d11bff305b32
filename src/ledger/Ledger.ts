import type { OptionNames } from '../options/checkOptions.js';
/** How a {@link Ledger.once} call ended. */
export const OnceStatus = {
  /** This call claimed the key and ran the effect. */
  EXECUTED: 'executed',
  /** The key had succeeded before: the stored result was returned and the effect did not run. */
  REPLAYED: 'replayed',
} as const;
export type OnceStatus = (typeof OnceStatus)[keyof typeof OnceStatus];

/** What the effect receives. */
export interface EffectContext {
  /**
   * The dedupe key. Hand it to the receiver (for a webhook: the `Idempotency-Key` header): a crash
   * after the effect but before the ledger recorded it makes the next attempt run the effect again,
   * and only the receiver can then discard the repeat.
   */
  readonly dedupeKey: string;
  /** 1 for the first claim of the key, +1 for every takeover or retry after a released lease. */
  readonly attempt: number;
}

/** Per-call options of {@link Ledger.once}. */
export interface OnceOptions {
  /**
   * The Lambda's remaining time (`context.getRemainingTimeInMillis()`): the lease is this plus the
   * ledger's margin, so a holder that dies at its deadline blocks the key only slightly longer.
   * @default undefined (the ledger's default lease)
   */
  remainingTimeMs?: number;
}

/** The names of {@link OnceOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const ONCE_OPTION_NAMES = { remainingTimeMs: true } as const satisfies OptionNames<OnceOptions>;

/** The outcome of a successful {@link Ledger.once}. */
export interface OnceResult<T> {
  readonly status: OnceStatus;
  /** The effect's result; on replay, the stored copy (a JSON round trip of the original). */
  readonly result: T;
  readonly dedupeKey: string;
  /** The claim number that produced the result. */
  readonly attempt: number;
}

/**
 * Runs side effects effectively once per dedupe key.
 *
 * The effect signals failure by throwing: an error with `retryable: false` (a terminal
 * `RerunError`) is stored and replayed to later attempts as `LedgerStoredFailureError`; any
 * other error releases the lease so a later attempt may run the effect again.
 *
 * @example
 * const { status, result } = await ledger.once(`charge:${orderId}`, order, ({ dedupeKey }) =>
 *   payments.charge(order, { idempotencyKey: dedupeKey }),
 * );
 */
export interface Ledger {
  once<T>(
    key: string,
    payload: unknown,
    effect: (context: EffectContext) => Promise<T>,
    options?: OnceOptions,
  ): Promise<OnceResult<T>>;
}
