import { describe, expect, it } from 'vitest';
import { RerunError } from '../../src/errors.js';
import { LedgerRecordCorruptError, MAX_STORED_MESSAGE_CHARS } from '../../src/ledger/errors.js';
import {
  isLeaseExpired,
  isRecordExpired,
  isTerminalError,
  LedgerStatus,
  leaseDurationMs,
  MAX_RETRY_AFTER_SECONDS,
  parseLedgerRecord,
  retryAfterSeconds,
  toStoredFailure,
  ttlEpochSeconds,
} from '../../src/ledger/ledgerRecord.js';

const policy = { defaultLeaseMs: 60_000, marginMs: 5_000 };

describe('lease maths', () => {
  it('derives the lease from the Lambda remaining time plus a margin, else the default', () => {
    expect(leaseDurationMs(30_000, policy)).toBe(35_000);
    expect(leaseDurationMs(undefined, policy)).toBe(60_000);
    expect(leaseDurationMs(-5, policy)).toBe(5_000);
    expect(leaseDurationMs(1_234.9, policy)).toBe(6_234);
  });

  it('treats a lease as expired only strictly after its end, like the `leaseExpiresAt < :now` condition', () => {
    expect(isLeaseExpired(1_000, 999)).toBe(false);
    expect(isLeaseExpired(1_000, 1_000)).toBe(false);
    expect(isLeaseExpired(1_000, 1_001)).toBe(true);
    expect(isLeaseExpired(undefined, 0)).toBe(true);
  });

  it('asks for a deferral that ends strictly after the lease, within SQS visibility bounds', () => {
    expect(retryAfterSeconds(10_000, 7_500)).toBe(3);
    expect(retryAfterSeconds(10_000, 7_000)).toBe(4); // exactly 3 s left: come back after, not at, the end
    expect(retryAfterSeconds(10_000, 10_000)).toBe(1);
    expect(retryAfterSeconds(10_000, 50_000)).toBe(1);
    expect(retryAfterSeconds(100 * 3600 * 1000, 0)).toBe(MAX_RETRY_AFTER_SECONDS);
  });

  it('writes TTL in epoch seconds and compares it like the `ttl < :nowSeconds` condition', () => {
    expect(ttlEpochSeconds(1_700_000_000_999, 3600)).toBe(1_700_003_600);
    expect(isRecordExpired(1_700_000_000, 1_700_000_000_999)).toBe(false);
    expect(isRecordExpired(1_700_000_000, 1_700_000_001_000)).toBe(true);
    expect(isRecordExpired(undefined, Number.MAX_SAFE_INTEGER)).toBe(false);
  });
});

describe('parseLedgerRecord', () => {
  it('reads every attribute the ledger writes', () => {
    const record = parseLedgerRecord({
      pk: 'k',
      status: 'FAILED',
      payloadHash: 'h',
      attempt: 2,
      owner: 'o',
      createdAt: 1,
      completedAt: 2,
      ttl: 3,
      failureName: 'WebhookDeliveryError',
      failureMessage: 'answered 400',
      lastErrorName: 'Error',
      lastErrorMessage: 'timeout',
    });
    expect(record).toMatchObject({
      dedupeKey: 'k',
      status: LedgerStatus.FAILED,
      attempt: 2,
      failure: { name: 'WebhookDeliveryError', message: 'answered 400' },
      lastError: { name: 'Error', message: 'timeout' },
      leaseExpiresAt: undefined,
    });
  });

  it('rejects items of another shape with a named error', () => {
    expect(() => parseLedgerRecord({ pk: 'k', status: 'DONE', payloadHash: 'h' })).toThrow(LedgerRecordCorruptError);
    expect(() => parseLedgerRecord({ pk: 'k', status: 'SUCCEEDED' })).toThrow(/payloadHash/);
    expect(() => parseLedgerRecord({ pk: 'k', status: 'SUCCEEDED', payloadHash: 'h', attempt: 'x' })).toThrow(
      /attempt/,
    );
    expect(() => parseLedgerRecord({ pk: 'k', status: 'FAILED', payloadHash: 'h' })).toThrow(/failureName/);
    expect(() => parseLedgerRecord({ status: 'FAILED' })).toThrow(/pk/);
  });
});

describe('failure classification', () => {
  it('is terminal only when the error says retryable: false', () => {
    expect(isTerminalError(new RerunError('bad request', { retryable: false }))).toBe(true);
    expect(isTerminalError(new RerunError('throttled'))).toBe(false);
    expect(isTerminalError(new Error('plain'))).toBe(false);
    expect(isTerminalError(Object.assign(new Error('tagged'), { retryable: false }))).toBe(true);
    expect(isTerminalError('a string')).toBe(false);
  });

  it('stores a bounded name and message', () => {
    expect(toStoredFailure(new TypeError('x'))).toEqual({ name: 'TypeError', message: 'x' });
    expect(toStoredFailure('oops')).toEqual({ name: 'string', message: 'oops' });
    const long = toStoredFailure(new Error('y'.repeat(5000)));
    expect(long.message).toHaveLength(MAX_STORED_MESSAGE_CHARS);
    expect(long.message.endsWith('…')).toBe(true);
  });
});
