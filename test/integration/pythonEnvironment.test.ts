import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defaultVenvRoot,
  ensurePythonTool,
  PythonMissingError,
  PythonTool,
} from '../../local/emulator/pythonEnvironment.js';

/** A scratch project root whose requirements/moto.txt pins nothing, so no package is downloaded. */
function scratchRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'rerun-pyenv-'));
  mkdirSync(join(root, 'requirements'));
  writeFileSync(join(root, 'requirements', 'moto.txt'), '# nothing to install\n');
  return root;
}

describe('ensurePythonTool (the project-local .venv/<tool>)', { timeout: 180_000 }, () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  it('creates .venv/<tool> once, then answers from its stamp without running pip again', async () => {
    const root = scratchRoot();
    roots.push(root);
    const lines: string[] = [];
    const python = await ensurePythonTool(PythonTool.MOTO, { projectRoot: root, progress: (l) => lines.push(l) });
    expect(python).toBe(join(root, '.venv', 'moto', 'bin', 'python'));
    expect(existsSync(python)).toBe(true);
    expect(lines[0]).toMatch(/installing moto \(pinned in requirements\/moto\.txt\) into \.venv\/moto/);
    expect(lines.at(-1)).toBe('rerun: moto installed.');

    const again: string[] = [];
    expect(await ensurePythonTool(PythonTool.MOTO, { projectRoot: root, progress: (l) => again.push(l) })).toBe(python);
    expect(again).toEqual([]);
    expect(existsSync(join(root, '.venv', 'moto.lock'))).toBe(false);
  });

  it('reinstalls when the pinned requirements change', async () => {
    const root = scratchRoot();
    roots.push(root);
    await ensurePythonTool(PythonTool.MOTO, { projectRoot: root, progress: () => {} });
    writeFileSync(join(root, 'requirements', 'moto.txt'), '# changed pins, still nothing to install\n');
    const lines: string[] = [];
    await ensurePythonTool(PythonTool.MOTO, { projectRoot: root, progress: (l) => lines.push(l) });
    expect(lines[0]).toMatch(/installing moto/);
    const stamp = readFileSync(join(root, '.venv', 'moto', '.rerun-requirements.sha256'), 'utf8');
    expect(stamp.trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('lets concurrent callers share one install', async () => {
    const root = scratchRoot();
    roots.push(root);
    const lines: string[] = [];
    const progress = (l: string) => lines.push(l);
    const [a, b] = await Promise.all([
      ensurePythonTool(PythonTool.MOTO, { projectRoot: root, progress }),
      ensurePythonTool(PythonTool.MOTO, { projectRoot: root, progress }),
    ]);
    expect(a).toBe(b);
    expect(lines.filter((l) => l.startsWith('rerun: installing moto'))).toHaveLength(1);
    expect(lines.some((l) => l.includes('waiting for another process that is installing moto'))).toBe(true);
  });

  it('for an installed package (under node_modules/), installs into the user cache, one venv per set of pins', async () => {
    const base = mkdtempSync(join(tmpdir(), 'rerun-pyenv-pkg-'));
    roots.push(base);
    const root = join(base, 'project', 'node_modules', 'rerun', 'dist');
    mkdirSync(join(root, 'requirements'), { recursive: true });
    writeFileSync(join(root, 'requirements', 'moto.txt'), '# nothing to install\n');
    const env = { XDG_CACHE_HOME: join(base, 'cache') };
    const python = await ensurePythonTool(PythonTool.MOTO, { projectRoot: root, env, progress: () => {} });
    expect(python).toMatch(new RegExp(`^${join(base, 'cache', 'rerun', 'venv', 'moto-')}[0-9a-f]{12}/bin/python$`));
    expect(existsSync(python)).toBe(true);
    expect(existsSync(join(root, '.venv'))).toBe(false);
  });

  it('puts the venvs in the project for a checkout, in the user cache for an installed package', () => {
    expect(defaultVenvRoot('/home/me/rerun', {})).toBe('/home/me/rerun/.venv');
    expect(defaultVenvRoot('/app/node_modules/rerun/dist', { HOME: '/home/me' })).toBe('/home/me/.cache/rerun/venv');
    expect(defaultVenvRoot('/app/node_modules/rerun/dist', { XDG_CACHE_HOME: '/c', HOME: '/home/me' })).toBe(
      '/c/rerun/venv',
    );
  });

  it('without python3, fails at once with what to install', async () => {
    const root = scratchRoot();
    roots.push(root);
    const started = Date.now();
    const error = await ensurePythonTool(PythonTool.MOTO, {
      projectRoot: root,
      python: 'rerun-no-such-python3',
      progress: () => {},
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PythonMissingError);
    expect(String((error as Error).message)).toMatch(/"rerun-no-such-python3" was not found on PATH/);
    expect(String((error as Error).message)).toMatch(/apt-get install python3 python3-venv/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
