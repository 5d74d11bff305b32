import { describe, expect, it } from 'vitest';
import { CONTENT, pipelineConfig } from './configs.js';
import { exploreExhaustively, formatFailure, shrink } from './explore.js';
import { budgetOf, describeExploration, SIM_TIMEOUT_MS } from './simMode.js';

/**
 * S3's 409 ConditionalRequestConflict on a PutObject (test/sim/model/S3Model.ts, `putConflicts`):
 * two deliveries of one upload create the output at once, each put's upload in flight between two
 * steps. The exploration must keep the invariants and must reach the 409 (a put another write
 * overtook), so that the store's retry of it (S3ObjectStore.put) is what was explored. The same
 * configuration is explored to the end, with the others, in test/sim/exhaustive*.test.ts.
 */
describe("S3's 409 on a PutObject another write overtook", () => {
  for (const crashes of [0, 1]) {
    it(
      `create single-part, two deliveries racing, crashes ${crashes}: the 409 reached, the invariants kept`,
      async () => {
        let conflicts = 0;
        const config = pipelineConfig({
          name: `create single-part, 409 on a put another write overtook, crashes ${crashes}`,
          uploads: [{ put: CONTENT.small }],
          eventCopies: 2,
          stableContent: true,
          putConflicts: true,
          onPutConflict: () => conflicts++,
          crashes,
        });
        const exploration = await exploreExhaustively(config, budgetOf(crashes === 0 ? 400 : 150));
        console.log(`${describeExploration(exploration)}; PutObject 409s: ${conflicts}`);
        if (exploration.failure) {
          const shrunk = await shrink(config, exploration.failure);
          expect.fail(formatFailure(config, shrunk, `depth-first, schedule ${exploration.schedules}`));
        }
        expect(conflicts).toBeGreaterThan(0);
      },
      SIM_TIMEOUT_MS,
    );
  }
});
