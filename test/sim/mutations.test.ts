import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { boundedConfigs } from './configs.js';
import type { exploreExhaustively } from './explore.js';
import { buildMutant, MUTATIONS, type MutantResult, runMutant } from './mutations.js';
import { SIM_FULL, SIM_TIMEOUT_MS } from './simMode.js';
import type { windowTaskConfigs } from './windowConfigs.js';

/**
 * The mutation suite: each mutation puts back one class of defect into a copy of the product, and
 * the explorer, run over the same bounded configurations as the simulation tier (no crash first,
 * then a crash at any boundary), must find a schedule that breaks an invariant. A mutant that
 * survives means the explorer (or its invariants) cannot see that class of defect.
 */
describe('the mutation suite: the explorer catches each class of defect', () => {
  const root = process.cwd();
  const results: MutantResult[] = [];
  for (const mutation of MUTATIONS) {
    it(
      `catches ${mutation.name}: ${mutation.defect}`,
      async () => {
        const configsUrl = buildMutant(root, mutation, 'test/sim/configs.ts');
        // One copy of the tree per mutant: its other modules sit beside configs.ts.
        const exploreUrl = new URL('explore.ts', configsUrl).href;
        const windowUrl = new URL('windowConfigs.ts', configsUrl).href;
        const { boundedConfigs: configsOf } = (await import(configsUrl)) as { boundedConfigs: typeof boundedConfigs };
        const { windowTaskConfigs: windowConfigsOf } = (await import(windowUrl)) as {
          windowTaskConfigs: typeof windowTaskConfigs;
        };
        const { exploreExhaustively: explore } = (await import(exploreUrl)) as {
          exploreExhaustively: typeof exploreExhaustively;
        };
        const all = [...configsOf(0), ...configsOf(1), ...windowConfigsOf(0), ...windowConfigsOf(1)].filter(
          (c) => mutation.runsIn?.test(c.name) ?? true,
        );
        // The one that caught it last time first, explored to the end, then the others (in full
        // mode up to 50,000 executions each, in npm test within the bounded budget). Full mode tried
        // every configuration in order before the removal's look again made the deletion
        // configurations, early in that order, many times larger (their sizes: docs/EMULATORS.md).
        const first = all.find((c) => c.name === mutation.caughtBy);
        const configs = !first ? all : [first, ...all.filter((c) => c !== first)];
        const result = await runMutant(
          explore,
          configs,
          mutation,
          SIM_FULL ? 50_000 : 400,
          SIM_FULL ? undefined : first?.name,
        );
        results.push(result);
        console.log(
          result.caught
            ? `${mutation.name}: caught by "${result.config}" after ${result.executions} executions in ${(result.ms / 1000).toFixed(1)} s: ${result.violation}`
            : `${mutation.name}: SURVIVED ${result.executions} executions`,
        );
        if (SIM_FULL) {
          const dir = join(root, '.ci-report', 'sim');
          mkdirSync(dir, { recursive: true });
          writeFileSync(join(dir, `mutation-${mutation.name}.json`), `${JSON.stringify(result)}\n`);
        }
        expect(result.caught, `${mutation.name} survived`).toBe(true);
      },
      SIM_TIMEOUT_MS,
    );
  }
});
