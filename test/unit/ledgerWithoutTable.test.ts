import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Imports a Lambda entry module in a fresh process with the given environment, as Lambda's init does. */
function initHandler(module: string, env: Record<string, string>) {
  const script = `const m = await import('${module}'); if (typeof m.handler !== 'function') process.exit(3);`;
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

describe('a worker that uses the dedupe ledger, deployed without one', () => {
  const worker = './test/fixtures/handlers/ledgerUser.ts';

  it('starts when RerunPipeline gave it a ledger (LEDGER_TABLE set)', () => {
    const result = initHandler(worker, { LEDGER_TABLE: 'ledger' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it("refuses to start without LEDGER_TABLE, naming RerunPipeline's `ledger: true` prop", () => {
    const result = initHandler(worker, {});
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/LedgerConfigurationError/);
    expect(result.stderr).toMatch(/LEDGER_TABLE is empty or unset.*give it `ledger: true`/);
  });

  it("the reference normalizer with a webhook but no ledger names RerunPipeline's props", () => {
    const result = initHandler('./functions/normalize/handler.ts', {
      OUTPUT_BUCKET: 'out',
      NOTIFY_URL: 'https://hooks.example.com/x',
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/LEDGER_TABLE is required.*`webhook` sets both \(or give it `ledger: true`\)/);
  });
});
