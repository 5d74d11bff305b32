import { expect, it } from 'vitest';
import { exploreExhaustively, formatFailure, type SimConfig, shrink } from './explore.js';
import { budgetOf, describeExploration, recordExploration, SIM_FULL, SIM_TIMEOUT_MS } from './simMode.js';

/**
 * One test per configuration: explored in full mode up to its `fullBudget` or FULL_MODE_BUDGET
 * executions (to the end when it is smaller: its figures say `exhaustive`), within `bounded`
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
        expect(exploration.schedules).toBeGreaterThan(0);
        if (SIM_FULL && config.exhaustive) {
          expect(
            exploration.exhaustive,
            `${config.name} stopped short of the end: ${describeExploration(exploration)}`,
          ).toBe(true);
        }
      },
      SIM_TIMEOUT_MS,
    );
  }
}
