import { type Execution, execute, formatFailure, randomChooser, type SimConfig, shrink } from './explore.js';

/** What a seeded random exploration found. */
export interface RandomExploration {
  readonly config: string;
  readonly seeds: number;
  readonly ms: number;
  /** The first failing seed, its shrunk schedule printed for people. */
  readonly failure?: { readonly seed: number; readonly report: string; readonly execution: Execution };
}

/**
 * Seeded random exploration of a configuration too large to explore exhaustively: `seeds`
 * executions, seed `first` to `first + seeds - 1`, each pick uniform over what may run and a crash
 * now and then. A failing seed is shrunk and printed with its replay line.
 */
export async function exploreRandomly(config: SimConfig, seeds: number, first = 1): Promise<RandomExploration> {
  const started = performance.now();
  for (let seed = first; seed < first + seeds; seed++) {
    const run = await execute(config, randomChooser(seed, 0.03));
    if (run.violations.length > 0) {
      const shrunk = await shrink(config, run);
      return {
        config: config.name,
        seeds: seed - first + 1,
        ms: performance.now() - started,
        failure: { seed, report: formatFailure(config, shrunk, `random seed ${seed}`), execution: shrunk },
      };
    }
  }
  return { config: config.name, seeds, ms: performance.now() - started };
}
