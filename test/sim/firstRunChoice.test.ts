import { describe, expect, it } from 'vitest';
import { FirstRunPath } from '../../src/worker/adaptiveFirstRun.js';
import { CONTENT, pipelineConfig } from './configs.js';
import { exploreExhaustively, formatFailure, shrink } from './explore.js';
import { budgetOf, describeExploration, recordExploration, SIM_TIMEOUT_MS } from './simMode.js';

/**
 * The adaptive first run (src/worker/adaptiveFirstRun.ts) only picks, per fresh delivery, between
 * creating first and checking first. Here that pick is each sandbox's nondeterministic decision:
 * both answers are steps the explorer chooses between, like any order of requests, so every
 * configuration below is checked with each delivery taking either path, in every interleaving
 * explored, and the test fails unless both paths were taken.
 */
/**
 * CPU seconds per exploration in full mode (20 of them): with the decision, each configuration is
 * larger than its counterpart in the exhaustive files, which explore the handler's own first run to
 * the end; these sample the forced paths (before 2026-12-06: 5,000 executions each, not measured in
 * CPU time).
 */
const FIRST_RUN_CPU_SECONDS = 8;

const CASES = [
  { name: 'create single-part+side, delivered twice', spec: { uploads: [{ put: CONTENT.smallBad }], eventCopies: 2 } },
  {
    name: 'overwrite single-part+side while the old event is delivered again',
    spec: { before: CONTENT.smallBad, redeliverBefore: true, uploads: [{ put: CONTENT.smallBad2 }] },
  },
  {
    name: 'overwrite multipart+side while the old event is delivered again',
    spec: { before: CONTENT.largeBad, redeliverBefore: true, uploads: [{ put: CONTENT.largeBad2 }] },
  },
  {
    name: 'revert single-part+side (other content, then the first bytes again)',
    spec: { before: CONTENT.smallBad, uploads: [{ put: CONTENT.small2 }, { put: CONTENT.smallBad }] },
  },
  {
    name: 'create then delete single-part+side',
    spec: { uploads: [{ put: CONTENT.smallBad }, { delete: true }] },
  },
] as const;

describe('the first run as a sandbox decision: both paths, every explored interleaving', () => {
  for (const crashes of [0, 1]) {
    for (const { name, spec } of CASES) {
      it(
        `${name}, crashes ${crashes}: both paths taken, the invariants kept`,
        async () => {
          const taken = { [FirstRunPath.CREATE]: 0, [FirstRunPath.CHECK]: 0 };
          // A depth-first search within a budget varies the late choices most: it runs twice, each
          // path being the first alternative once, so a bounded run reaches both from the start.
          for (const first of [FirstRunPath.CREATE, FirstRunPath.CHECK]) {
            const config = pipelineConfig({
              name: `first run chosen (${first} first): ${name}, crashes ${crashes}`,
              ...spec,
              crashes,
              exploreFirstRun: { first, told: (path) => taken[path]++ },
            });
            // A sample, not meant to reach the end: FIRST_RUN_CPU_SECONDS each in full mode.
            const exploration = await exploreExhaustively(
              config,
              budgetOf(crashes === 0 ? 150 : 80, FIRST_RUN_CPU_SECONDS),
            );
            console.log(`${describeExploration(exploration)}; first runs so far: ${JSON.stringify(taken)}`);
            recordExploration(exploration, { mode: 'first-run' });
            if (exploration.failure) {
              const shrunk = await shrink(config, exploration.failure);
              expect.fail(formatFailure(config, shrunk, `depth-first, schedule ${exploration.schedules}`));
            }
            expect(exploration.schedules).toBeGreaterThan(0);
          }
          expect(taken[FirstRunPath.CREATE]).toBeGreaterThan(0);
          expect(taken[FirstRunPath.CHECK]).toBeGreaterThan(0);
        },
        SIM_TIMEOUT_MS,
      );
    }
  }
});
