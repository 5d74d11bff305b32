import { defineConfig } from 'vitest/config';

/**
 * The browser tier (`npm run test:browser`): a real headless Chromium (Debian's chromium, driven by
 * playwright-core) opens `rerun ui` against a running `rerun dev` with a seeded state. Not part of
 * `npm test` (vitest.config.ts excludes test/browser/); .ci/run installs chromium where it is missing.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    fileParallelism: false,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.ci-report/vitest-browser.json' }]] : ['default'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
    },
  },
});
