/**
 * A small seeded pseudo-random generator (sfc32), so every chaos run is replayable from its seed:
 * which requests get a fault, where the runner is killed, which inputs are overwritten.
 * Never Math.random: a failure must be reproducible with `--seed`.
 */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A copy of `items` in a random order (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[];
  /** An independent generator derived from this seed and a label (stable across runs). */
  fork(label: string): Prng;
}

/**
 * Creates a generator from a 32-bit seed.
 *
 * @example
 * const rng = createPrng(42);
 * rng.int(1, 6); // the same sequence on every run with seed 42
 */
export function createPrng(seed: number): Prng {
  const base = seed >>> 0;
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = base;
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // Warm up: the first outputs of sfc32 are correlated with the seed.
  for (let i = 0; i < 16; i++) next();
  const prng: Prng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty array');
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    shuffle: (items) => {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [copy[i], copy[j]] = [copy[j] as (typeof copy)[number], copy[i] as (typeof copy)[number]];
      }
      return copy;
    },
    fork: (label) => createPrng(hashLabel(base, label)),
  };
  return prng;
}

/** FNV-1a over the seed and the label: a stable 32-bit seed for a sub-stream. */
function hashLabel(seed: number, label: string): number {
  let h = 0x811c9dc5 ^ seed;
  for (const char of label) {
    h ^= char.codePointAt(0) ?? 0;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
