import { expect, it } from 'vitest';
import { exploreExhaustively, formatFailure, type SimConfig, shrink } from './explore.js';
import { budgetOf, describeExploration, recordExploration, SIM_FULL, SIM_TIMEOUT_MS } from './simMode.js';

/**
 * One test per configuration: explored in full mode within its CPU budget (`cpuBudget` or
 * FULL_MODE_CPU_SECONDS), within `bounded` executions inside `npm test`. In full mode a
 * configuration meant to be exhaustive (all but those marked `exhaustive: false`, which say why in
 * `bounded`) fails when it stops short of the end. A violation prints the shrunk schedule, its
 * replay line and its trace.
 */
export function exploreEach(configs: readonly SimConfig[], bounded: number): void {
  for (const config of configs) {
    it(
      `${config.name}: every explored schedule keeps the invariants`,
      async () => {
        const exploration = await exploreExhaustively(config, budgetOf(bounded, config.cpuBudget));
        const meantExhaustive = config.exhaustive ?? true;
        console.log(describeExploration(exploration));
        recordExploration(exploration, {
          mode: 'exhaustive',
          meantExhaustive,
          cpuBudget: budgetOf(bounded, config.cpuBudget).cpuSeconds,
          ...(config.bounded !== undefined ? { bounded: config.bounded } : {}),
        });
        if (exploration.failure) {
          const shrunk = await shrink(config, exploration.failure);
          expect.fail(formatFailure(config, shrunk, `depth-first, schedule ${exploration.schedules}`));
        }
        expect(exploration.schedules).toBeGreaterThan(0);
        if (SIM_FULL && meantExhaustive) {
          expect(
            exploration.exhaustive,
            `${config.name} stopped short of the end within its ${budgetOf(bounded, config.cpuBudget).cpuSeconds} CPU s: ${describeExploration(exploration)}`,
          ).toBe(true);
        }
        if (SIM_FULL && !meantExhaustive) {
          // Bounded on purpose, and saying so: a configuration that now reaches the end within its
          // budget is marked exhaustive, so that it keeps doing so.
          expect(config.bounded, `${config.name} is not exhaustive but does not say why`).toBeTruthy();
          expect(
            exploration.exhaustive,
            `${config.name} reached the end within its budget: mark it exhaustive (${describeExploration(exploration)})`,
          ).toBe(false);
        }
      },
      SIM_TIMEOUT_MS,
    );
  }
}
