import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:mutation` (stryker.config.mjs): the unit tests of the mutated files, which run in process
 * with no emulator (processObject's against the simulation tier's in-memory S3), fast enough to run once per mutant on a loaded 2-core machine. The integration tests
 * that also reach this code (moto-backed) run in `npm test`, not per mutant: a mutant that only they
 * would kill counts here as survived, so the score is a floor.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: [
      // src/done/
      'test/unit/eventProvesCurrent.test.ts',
      'test/unit/integrity.test.ts',
      'test/unit/sealInProgress.test.ts',
      'test/unit/judgeOutput.test.ts',
      'test/unit/planReprocess.test.ts',
      'test/unit/staleCandidates.test.ts',
      'test/unit/verifyVerdicts.test.ts',
      // src/publish/
      'test/unit/outputWriter.test.ts',
      // src/ledger/ledgerDecision.ts
      'test/unit/ledgerDecision.test.ts',
      // src/worker/processObject.ts and its phases: against the in-memory S3 (test/support/memoryS3.ts).
      'test/unit/processObjectRounds.test.ts',
      // src/worker/removeOutputs.ts (the ObjectRemoved path) and src/worker/sideOutputs.ts (the side-output
      // protocol's steps), against the same in-memory S3.
      'test/unit/removeOutputs.test.ts',
      'test/unit/sideOutputs.test.ts',
      // src/worker/keptOutput.ts (what a create-first round built, published after the 412).
      'test/unit/keptOutput.test.ts',
    ],
    // None of these tests talks to AWS: no emulator to start.
    globalSetup: [],
    reporters: ['default'],
  },
});
