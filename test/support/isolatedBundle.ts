import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Copies a bundle's folder (its `index.mjs` and the chunks it imports) into a fresh folder outside the project, where nothing can resolve
 * `@aws-sdk/*` but the bundle itself, imports it there with plain Node.js and the given environment
 * only, and returns `typeof` of its `handler` export (`'function'` for a loadable Lambda bundle).
 *
 * @example
 * expect(handlerTypeInIsolation(join(assetDir, 'index.mjs'), { OUTPUT_BUCKET: 'o' })).toBe('function');
 */
export function handlerTypeInIsolation(bundle: string, env: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rerun-bundle-'));
  try {
    cpSync(dirname(bundle), dir, { recursive: true });
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('./index.mjs'); console.log(typeof m.handler);"],
      { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, ...env } },
    );
    return out.trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
