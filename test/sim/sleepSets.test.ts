import { describe, expect, it } from 'vitest';
import { boundedConfigs } from './configs.js';
import { type Exploration, exploreExhaustively, type SimConfig } from './explore.js';
import { describeExploration, SIM_TIMEOUT_MS } from './simMode.js';

/**
 * The differential check of the explorer's sleep sets (test/sim/explore.ts): a configuration
 * explored to the end with them and without them reaches the same states and the same end states,
 * each with the same invariant results, and with them no alternative of a state is explored twice,
 * so it never takes more executions than without them (executions = 1 + alternatives explored -
 * choice points expanded: as many states, and no more alternatives). With a crash, where a state is
 * often reached again with a smaller sleep set, a revisit that explored everything awake again took
 * more executions than no sleep sets at all.
 */
describe('sleep sets: the same states and end states as without them, in no more executions', () => {
  const config = boundedConfigs(1).find((c) => c.name === 'create single-part+side, crashes 1') as SimConfig;

  async function explore(sleepSets: boolean): Promise<{ exploration: Exploration; ends: Map<string, string> }> {
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
    const exploration = await exploreExhaustively(recording, {}, { sleepSets });
    console.log(`${sleepSets ? 'sleep sets' : 'none'}: ${describeExploration(exploration)}, ${ends.size} end states`);
    return { exploration, ends };
  }

  it(
    `${config.name}: explored to the end both ways`,
    async () => {
      const without = await explore(false);
      const withThem = await explore(true);
      expect(without.exploration.exhaustive).toBe(true);
      expect(withThem.exploration.exhaustive).toBe(true);
      expect(withThem.exploration.states).toBe(without.exploration.states);
      expect(withThem.ends.size).toBeGreaterThan(1);
      expect([...withThem.ends].sort()).toEqual([...without.ends].sort());
      const executions = (e: Exploration) => e.schedules + e.merged;
      expect(executions(withThem.exploration)).toBeLessThanOrEqual(executions(without.exploration));
    },
    SIM_TIMEOUT_MS,
  );
});
