/**
 * How {@link S3ObjectStore} retries a conditional write that met 409 ConditionalRequestConflict (a
 * concurrent conflicting write in flight; docs/AWS-BEHAVIOUR.md, "Conditional writes"). Delays are AWS's
 * "full jitter": before retry n (0-based), sleep `random() * min(capMs, baseMs * 2^n)`, so writers
 * that conflicted together do not retry together.
 */
export interface ConflictRetryPolicy {
  /** Retries after the first attempt. @default 3 */
  readonly retries?: number;
  /** The first retry's delay bound, in ms. @default 50 */
  readonly baseMs?: number;
  /** The largest delay bound, in ms. @default 1000 */
  readonly capMs?: number;
  /** A number in [0, 1). @default Math.random */
  readonly random?: () => number;
  /** Waits `ms`. @default a timer */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The defaults of {@link ConflictRetryPolicy}. */
export const CONFLICT_RETRY_DEFAULTS = { retries: 3, baseMs: 50, capMs: 1000 } as const;

/**
 * The full-jitter delay before retry `retry` (0-based).
 *
 * @example
 * fullJitterDelay(2, { baseMs: 50, capMs: 1000 }, () => 0.5); // 100 (half of min(1000, 50 * 4))
 */
export function fullJitterDelay(
  retry: number,
  bounds: { readonly baseMs: number; readonly capMs: number },
  random: () => number,
): number {
  return random() * Math.min(bounds.capMs, bounds.baseMs * 2 ** retry);
}

/**
 * Runs `attempt` until `isConflict` says its result is not a conflict, or the retries are used up
 * (then the last result, still a conflict, is returned: the caller decides).
 *
 * @example
 * const result = await retryOnConflict(() => put(), (r) => r.status === WriteStatus.CONFLICT, {});
 */
export async function retryOnConflict<R>(
  attempt: () => Promise<R>,
  isConflict: (result: R) => boolean,
  policy: ConflictRetryPolicy = {},
): Promise<R> {
  const retries = policy.retries ?? CONFLICT_RETRY_DEFAULTS.retries;
  const bounds = {
    baseMs: policy.baseMs ?? CONFLICT_RETRY_DEFAULTS.baseMs,
    capMs: policy.capMs ?? CONFLICT_RETRY_DEFAULTS.capMs,
  };
  const random = policy.random ?? Math.random;
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let retry = 0; ; retry++) {
    const result = await attempt();
    if (!isConflict(result) || retry >= retries) return result;
    await sleep(fullJitterDelay(retry, bounds, random));
  }
}
