import { describe, expect, it } from 'vitest';
import { boundedConfigs } from './configs.js';
import { type Exploration, exploreExhaustively, type SimConfig } from './explore.js';
import { describeExploration, SIM_TIMEOUT_MS } from './simMode.js';

/**
 * The differential check of the explorer's reductions (test/sim/explore.ts): a configuration with a
 * crash explored to the end with them and without them (`RERUN_SIM_REDUCTION=none`) reaches the same
 * end states, each with the same invariant results.
 * - Sleep sets alone reach the same states, and with them no alternative of a state is explored
 *   twice, so they never take more executions (executions = 1 + alternatives explored - choice points
 *   expanded: as many states, and no more alternatives). With a crash, where a state is often reached
 *   again with a smaller sleep set, a revisit that explored everything awake again took more
 *   executions than no sleep sets at all. A crash sleeps too, beside a request that is independent
 *   of it.
 * - Forgetting where a crashed actor crashed (Scheduler.digest) merges states: fewer of them, and
 *   fewer executions.
 */
describe('reductions: the same end states as without them, in no more executions', () => {
  const config = boundedConfigs(1).find((c) => c.name === 'create single-part+side, crashes 1') as SimConfig;

  async function explore(reductions: {
    sleepSets: boolean;
    forgetCrashed: boolean;
  }): Promise<{ exploration: Exploration; ends: Map<string, string> }> {
    // Each end state reached (its world's digest), with what the invariants said of it.
    const ends = new Map<string, string>();
    const recording: SimConfig = {
      ...config,
      check(world) {
        const violations = config.check(world);
        ends.set(world.digest(), violations.join('; '));
        return violations;
      },
    };
    const exploration = await exploreExhaustively(recording, {}, reductions);
    console.log(`${JSON.stringify(reductions)}: ${describeExploration(exploration)}, ${ends.size} end states`);
    return { exploration, ends };
  }

  it(
    `${config.name}: explored to the end each way`,
    async () => {
      const none = await explore({ sleepSets: false, forgetCrashed: false });
      const sleepSets = await explore({ sleepSets: true, forgetCrashed: false });
      const both = await explore({ sleepSets: true, forgetCrashed: true });
      const executions = (e: Exploration) => e.schedules + e.merged;
      for (const run of [none, sleepSets, both]) expect(run.exploration.exhaustive).toBe(true);
      expect(none.ends.size).toBeGreaterThan(1);
      expect([...sleepSets.ends].sort()).toEqual([...none.ends].sort());
      expect([...both.ends].sort()).toEqual([...none.ends].sort());
      expect(sleepSets.exploration.states).toBe(none.exploration.states);
      expect(executions(sleepSets.exploration)).toBeLessThan(executions(none.exploration));
      expect(both.exploration.states).toBeLessThan(sleepSets.exploration.states);
      expect(executions(both.exploration)).toBeLessThan(executions(sleepSets.exploration));
    },
    SIM_TIMEOUT_MS,
  );
});
