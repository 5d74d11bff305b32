import { describe, expect, it } from 'vitest';
import { isFreshDelivery } from '../../src/batch/isFreshDelivery.js';

const eventTime = '2026-12-02T10:00:00.000Z';
const at = (seconds: number) => Date.parse(eventTime) + seconds * 1000;

describe('isFreshDelivery: only a provable first delivery may trust the event eTag', () => {
  it('a first receive within one invocation time limit of the event is fresh', () => {
    expect(isFreshDelivery({ receiveCount: 1, eventTime }, at(0), 60_000)).toBe(true);
    expect(isFreshDelivery({ receiveCount: 1, eventTime }, at(59.999), 60_000)).toBe(true);
  });

  it('a receive count above 1 is a repeat: a deferral or an attempt that failed or died', () => {
    expect(isFreshDelivery({ receiveCount: 2, eventTime }, at(0), 60_000)).toBe(false);
  });

  it('an event as old as the time limit may be a redriven or re-sent repeat, whatever its receive count', () => {
    // An earlier receive comes back only after the visibility timeout, which is at least the function's timeout.
    expect(isFreshDelivery({ receiveCount: 1, eventTime }, at(60), 60_000)).toBe(false);
    expect(isFreshDelivery({ receiveCount: 1, eventTime }, at(3600), 60_000)).toBe(false);
  });

  it('an event without a time, or with one that does not parse, is never fresh', () => {
    expect(isFreshDelivery({ receiveCount: 1 }, at(0), 60_000)).toBe(false);
    expect(isFreshDelivery({ receiveCount: 1, eventTime: 'yesterday' }, at(0), 60_000)).toBe(false);
  });

  it('an event dated ahead of the clock beyond the skew allowance is never fresh: it would stay fresh until that date', () => {
    expect(isFreshDelivery({ receiveCount: 1, eventTime }, at(-300), 60_000)).toBe(true);
    expect(isFreshDelivery({ receiveCount: 1, eventTime }, at(-301), 60_000)).toBe(false);
    expect(isFreshDelivery({ receiveCount: 1, eventTime: '2099-01-01T00:00:00.000Z' }, at(0), 60_000)).toBe(false);
  });
});
