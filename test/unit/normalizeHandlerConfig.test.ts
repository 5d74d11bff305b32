import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Imports the Lambda entry module in a fresh process with the given environment, as Lambda's init does. */
function initHandler(env: Record<string, string>) {
  const script =
    "const m = await import('./functions/normalize/handler.ts'); if (typeof m.handler !== 'function') process.exit(3);";
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: {
      PATH: process.env.PATH,
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env,
    },
    encoding: 'utf8',
  });
}

describe('functions/normalize/handler.ts configuration at init', () => {
  it("loads with the stack's default environment (ledger table set, no webhook: NOTIFY_URL unset)", () => {
    const result = initHandler({ OUTPUT_BUCKET: 'out', LEDGER_TABLE: 'ledger', MAX_INPUT_BYTES: '455081984' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('refuses to start with a webhook but no ledger, naming the missing variable', () => {
    const result = initHandler({ OUTPUT_BUCKET: 'out', NOTIFY_URL: 'https://hooks.example.com/x' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/LEDGER_TABLE is required/);
  });

  it('refuses to start without OUTPUT_BUCKET', () => {
    const result = initHandler({});
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/OUTPUT_BUCKET is required/);
  });
});
