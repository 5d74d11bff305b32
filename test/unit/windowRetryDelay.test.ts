import { describe, expect, it } from 'vitest';
import { windowRetryDelaySeconds } from '../../src/window/createWindowTaskHandler.js';

describe('windowRetryDelaySeconds: how soon a failed window comes back', () => {
  it('60 s after the first receive of a retryable failure, doubling per receive, at most 15 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((n) => windowRetryDelaySeconds(n, true))).toEqual([
      60, 120, 240, 480, 900, 900, 900,
    ]);
  });

  it('1 s for a failure that is not retryable, whatever the receive', () => {
    expect([1, 2, 5].map((n) => windowRetryDelaySeconds(n, false))).toEqual([1, 1, 1]);
  });

  it('a receive count below 1 (absent) counts as the first', () => {
    expect(windowRetryDelaySeconds(0, true)).toBe(60);
  });
});
