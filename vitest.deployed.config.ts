import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { ensureMiniStackCertificate } from './test/deployed/support/ministackCertificate.js';

// MiniStack serves HTTPS with this certificate (IAM is enforced, and the stack's policies deny plain
// HTTP). Node reads NODE_EXTRA_CA_CERTS only at launch, so it is set here, before vitest starts
// the test workers, which inherit it; test/deployed/globalSetup.ts finds the same files.
process.env.NODE_EXTRA_CA_CERTS = ensureMiniStackCertificate(join(process.cwd(), '.rerun', 'ministack-tls')).cert;

/**
 * The deployed tier (`npm run test:deployed`): the real CDK app deployed to MiniStack, exercised
 * through the stack alone. Not part of `npm test` (vitest.config.ts excludes test/deployed/).
 */
export default defineConfig({
  test: {
    include: ['test/deployed/**/*.test.ts'],
    globalSetup: ['test/deployed/globalSetup.ts'],
    // One deployed stack for every file: files run one after another, so one file's temporary
    // change to a queue (the redrive test) never meets another file's messages.
    fileParallelism: false,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.ci-report/vitest-deployed.json' }]] : ['default'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
    },
  },
});
