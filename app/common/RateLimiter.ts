import { setTimeout as sleep } from 'node:timers/promises';

/** Options of {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Average rate, in units (messages) per second. */
  readonly perSecond: number;
  /** The clock (epoch ms). @default Date.now */
  readonly now?: () => number;
  /** Waits `ms` milliseconds. @default node:timers/promises setTimeout */
  readonly sleep?: (ms: number) => Promise<unknown>;
}

/**
 * Spaces work to an average rate: each `take(n)` reserves `n / perSecond` seconds after the previous
 * reservation and waits until its slot. The first take does not wait; an idle period does not build
 * up a burst.
 *
 * @example
 * const limiter = new RateLimiter({ perSecond: 20 });
 * for (const batch of batches) { await limiter.take(batch.length); await send(batch); }
 */
export class RateLimiter {
  private next = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;
  private readonly wait: (ms: number) => Promise<unknown>;
  private readonly intervalMs: number;

  constructor(options: RateLimiterOptions) {
    if (!(options.perSecond > 0) || !Number.isFinite(options.perSecond)) {
      throw new RangeError(`rate must be a positive number per second (got ${options.perSecond})`);
    }
    this.intervalMs = 1000 / options.perSecond;
    this.now = options.now ?? Date.now;
    this.wait = options.sleep ?? ((ms) => sleep(ms));
  }

  /** Waits until `count` units may start. */
  async take(count = 1): Promise<void> {
    const now = this.now();
    const start = Math.max(now, this.next);
    this.next = start + count * this.intervalMs;
    if (start > now) await this.wait(start - now);
  }
}
