import { describe, expect, it } from 'vitest';
import { CONTENT, pipelineConfig } from './configs.js';
import { exploreRandomly } from './random.js';
import { SIM_FULL, SIM_TIMEOUT_MS } from './simMode.js';

/** Configurations larger than the bounded ones: more deliveries, more versions, more crashes. */
const LARGER = [
  pipelineConfig({
    name: 'summary after create single-part+side, two summary deliveries, 1 crash',
    uploads: [{ put: CONTENT.summarizable }],
    summaryDeliveries: 2,
    crashes: 1,
  }),
  pipelineConfig({
    name: 'create multipart+side, 3 deliveries, 3 sandboxes, 2 crashes',
    uploads: [{ put: CONTENT.largeBadLarge }],
    eventCopies: 3,
    pollers: 3,
    crashes: 2,
  }),
  pipelineConfig({
    name: 'three versions (bad rows, clean, other bad rows), each delivered twice, webhook, 1 crash',
    uploads: [{ put: CONTENT.largeBad }, { put: CONTENT.large }, { put: CONTENT.largeBad2 }],
    eventCopies: 2,
    notify: true,
    crashes: 1,
  }),
  pipelineConfig({
    name: 'revert multipart+side (other content, then the first bytes again), each delivered twice, 1 crash',
    before: CONTENT.largeBad,
    uploads: [{ put: CONTENT.large }, { put: CONTENT.largeBad }],
    eventCopies: 2,
    crashes: 1,
  }),
  pipelineConfig({
    name: 'revert while building single-part+side (from empty: bad rows, clean, the bad rows again), 1 crash',
    uploads: [{ put: CONTENT.smallBad }, { put: CONTENT.small2 }, { put: CONTENT.smallBad }],
    crashes: 1,
  }),
  // The largest configurations whose deletion looks again are explored within a CPU budget, not
  // to the end, in full mode (configs.ts, `bounded`); their crashed variants are sampled here as well.
  pipelineConfig({
    name: 'create then delete single-part+side, 1 crash',
    uploads: [{ put: CONTENT.smallBad }, { delete: true }],
    crashes: 1,
  }),
  pipelineConfig({
    name: 'recreate single-part+side (delete, same bytes again), 1 crash',
    before: CONTENT.smallBad,
    uploads: [{ delete: true }, { put: CONTENT.smallBad }],
    crashes: 1,
  }),
  pipelineConfig({
    name: 'prune after delete single-part+side, 1 crash',
    before: CONTENT.smallBad,
    redeliverBefore: true,
    uploads: [{ delete: true }],
    prune: true,
    crashes: 1,
  }),
  pipelineConfig({
    name: 'recreate multipart+side (delete, same bytes again), 1 crash',
    before: CONTENT.largeBad,
    uploads: [{ delete: true }, { put: CONTENT.largeBad }],
    crashes: 1,
  }),
  pipelineConfig({
    name: 'delete, re-upload other content, prune running, stale event, 2 crashes',
    before: CONTENT.largeBad,
    redeliverBefore: true,
    uploads: [{ delete: true }, { put: CONTENT.smallBad }],
    prune: true,
    crashes: 2,
  }),
  pipelineConfig({
    name: 'quarantine removed and output corrupted behind the pipeline, 3 deliveries, 1 crash',
    before: CONTENT.largeBadLarge,
    tamperBefore: [{ remove: 'quarantine' }, { corrupt: 'main' }],
    redeliverCopies: 3,
    pollers: 3,
    uploads: [],
    crashes: 1,
  }),
];

describe('seeded random exploration of larger configurations', () => {
  for (const config of LARGER) {
    it(
      `${config.name}: every seed keeps the invariants`,
      async () => {
        const result = await exploreRandomly(config, SIM_FULL ? 3000 : 60);
        console.log(`${result.config}: ${result.seeds} seeds in ${(result.ms / 1000).toFixed(1)} s`);
        if (result.failure) expect.fail(result.failure.report);
      },
      SIM_TIMEOUT_MS,
    );
  }
});
