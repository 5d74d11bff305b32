import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks } from '../../scripts/docPages.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TYPES = join(ROOT, 'test', 'types');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');

/**
 * Every ```ts block of the README and the guides (scripts/docPages.ts), in order (the worker examples;
 * test/unit/readmeExamples.test.ts runs them).
 */
const examples = codeBlocks('ts').map((block) => block.code);

// Inside test/types/, so that the examples resolve the repository's node_modules and its tsconfig's paths.
const dir = mkdtempSync(join(TYPES, '.readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** tsc over `files` with test/types/tsconfig.json (exactOptionalPropertyTypes on): its diagnostics. */
function typecheck(files: Record<string, string>): { status: number | null; output: string } {
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, name), code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ extends: '../tsconfig.json', include: [...Object.keys(files), '../publicOptions.ts'] }),
  );
  const result = spawnSync(TSC, ['-p', dir], { cwd: ROOT, encoding: 'utf8' });
  return {
    status: result.status,
    output: `${result.stdout}${result.stderr}`.replaceAll(`${relative(ROOT, dir)}/`, ''),
  };
}

describe('the examples of the README and the guides, and the public option types, under exactOptionalPropertyTypes', () => {
  it('every TypeScript example of the README and the guides, and test/types/publicOptions.ts, type-check', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
    const files = Object.fromEntries(examples.map((code, i) => [`example-${i + 1}.ts`, code]));
    expect(typecheck(files)).toEqual({ status: 0, output: '' });
  }, 120_000);

  it('the check can fail: an optional property without `| undefined` refuses an environment variable', () => {
    const { status, output } = typecheck({
      'control.ts':
        'export const options: { readonly endpoint?: string } = { endpoint: process.env.AWS_ENDPOINT_URL };\n',
    });
    expect(status).not.toBe(0);
    expect(output).toMatch(/control\.ts\(1,\d+\): error TS2375/);
  }, 120_000);
});
