import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:mutation` (stryker.config.mjs): the unit tests of the mutated files, which run in process
 * with no emulator, fast enough to run once per mutant on a loaded 2-core machine. The integration tests
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
      'test/unit/judgeOutput.test.ts',
      'test/unit/planReprocess.test.ts',
      'test/unit/staleCandidates.test.ts',
      'test/unit/verifyVerdicts.test.ts',
      // src/publish/
      'test/unit/outputWriter.test.ts',
      // src/ledger/ledgerDecision.ts
      'test/unit/ledgerDecision.test.ts',
    ],
    // None of these tests talks to AWS: no emulator to start.
    globalSetup: [],
    reporters: ['default'],
  },
});
