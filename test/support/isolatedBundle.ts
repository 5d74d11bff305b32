import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Copies a bundle's `index.mjs` into a fresh folder outside the project, where nothing can resolve
 * `@aws-sdk/*` but the bundle itself, imports it there with plain Node.js and the given environment
 * only, and returns `typeof` of its `handler` export (`'function'` for a loadable Lambda bundle).
 *
 * @example
 * expect(handlerTypeInIsolation(join(assetDir, 'index.mjs'), { OUTPUT_BUCKET: 'o' })).toBe('function');
 */
export function handlerTypeInIsolation(bundle: string, env: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rerun-bundle-'));
  try {
    copyFileSync(bundle, join(dir, 'index.mjs'));
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
