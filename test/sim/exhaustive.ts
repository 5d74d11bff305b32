import { expect, it } from 'vitest';
import { exploreExhaustively, formatFailure, type SimConfig, shrink } from './explore.js';
import { budgetOf, describeExploration, recordExploration, SIM_FULL, SIM_TIMEOUT_MS } from './simMode.js';

/**
 * One test per configuration: explored exhaustively in full mode (and then it must have reached
 * every state; a configuration with a `fullBudget` up to that many executions), within `bounded`
 * executions inside `npm test`. A violation prints the shrunk
 * schedule, its replay line and its trace.
 */
export function exploreEach(configs: readonly SimConfig[], bounded: number): void {
  for (const config of configs) {
    it(
      `${config.name}: every explored schedule keeps the invariants`,
      async () => {
        const exploration = await exploreExhaustively(config, budgetOf(bounded, config.fullBudget));
        console.log(describeExploration(exploration));
        recordExploration(exploration, { mode: 'exhaustive' });
        if (exploration.failure) {
          const shrunk = await shrink(config, exploration.failure);
          expect.fail(formatFailure(config, shrunk, `depth-first, schedule ${exploration.schedules}`));
        }
        if (SIM_FULL && config.fullBudget === undefined) expect(exploration.exhaustive).toBe(true);
        expect(exploration.schedules).toBeGreaterThan(0);
      },
      SIM_TIMEOUT_MS,
    );
  }
}
