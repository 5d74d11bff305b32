import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { RerunError } from '../../src/errors.js';
import { checkOptions, type OptionNames } from '../../src/options/checkOptions.js';
import { LocalSetupError } from '../errors.js';

/** The Python programs rerun runs locally, each pinned in `requirements/<name>.txt`. */
export const PythonTool = {
  /** moto server: the emulator of `npm start` and `npm test`. */
  MOTO: 'moto',
  /** cfn-lint: lints the synthesized templates (scripts/cfn-lint.sh). */
  CFN_LINT: 'cfn-lint',
  /** MiniStack: the emulator of the deployed tier (`npm run test:deployed`). */
  MINISTACK: 'ministack',
  /** checkov: scans the synthesized templates (scripts/checkov.sh). */
  CHECKOV: 'checkov',
} as const;
export type PythonTool = (typeof PythonTool)[keyof typeof PythonTool];

/** No `python3` on PATH (or it cannot make a virtual environment): nothing Python-based can run. */
export class PythonMissingError extends RerunError {
  constructor(detail: string) {
    super(
      `${detail} rerun runs its local AWS emulator (moto) with Python 3. Install Python 3.9 or newer with its venv ` +
        'module (Debian/Ubuntu: apt-get install python3 python3-venv; macOS: brew install python3), then run the ' +
        'command again. Or set RERUN_PYTHON to an interpreter that already has the packages of ' +
        'requirements/moto.txt, or set AWS_ENDPOINT_URL to an emulator that is already running.',
      { retryable: false },
    );
    this.name = 'PythonMissingError';
  }
}

/** pip could not install a tool's pinned requirements. */
export class PythonToolInstallError extends RerunError {
  constructor(tool: string, venv: string, detail: string) {
    super(`Could not install ${tool} (requirements/${tool}.txt) into ${venv}: ${detail}`, { retryable: false });
    this.name = 'PythonToolInstallError';
  }
}

/** Options of {@link ensurePythonTool}. */
export interface EnsurePythonToolOptions {
  /**
   * Where `requirements/` is (and, in a checkout, where `.venv/` goes).
   * @default the project root (two folders above this file): the repository, or the installed package's `dist/`
   */
  readonly projectRoot?: string;
  /**
   * The folder that holds the virtual environments.
   * @default `defaultVenvRoot` of the project root: its `.venv/`, or the user's cache for an installed package
   */
  readonly venvRoot?: string;
  /** Read for XDG_CACHE_HOME (see `defaultVenvRoot`). @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Receives progress lines (pip's output) while an install runs. @default stderr */
  readonly progress?: (line: string) => void;
  /**
   * The interpreter that creates the virtual environment.
   * @default 'python3'
   */
  readonly python?: string;
}

/** The names of {@link EnsurePythonToolOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const ENSURE_PYTHON_TOOL_OPTION_NAMES = {
  env: true,
  progress: true,
  projectRoot: true,
  python: true,
  venvRoot: true,
} as const satisfies OptionNames<EnsurePythonToolOptions>;

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

/**
 * Where the virtual environments go by default. A checkout keeps them in the project's `.venv/`.
 * An installed package (a project root under `node_modules/`) keeps them in the user's cache,
 * `$XDG_CACHE_HOME/rerun/venv` (default `~/.cache/rerun/venv`): `node_modules/` is replaced by every
 * `npm ci` (moto would be reinstalled each time) and may be read-only, and one install serves every
 * project on the machine (each venv is named by its requirements' hash, see {@link ensurePythonTool}).
 *
 * @example
 * defaultVenvRoot('/home/me/rerun'); // '/home/me/rerun/.venv'
 * defaultVenvRoot('/app/node_modules/rerun/dist', { HOME: '/home/me' }); // '/home/me/.cache/rerun/venv'
 */
export function defaultVenvRoot(projectRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!projectRoot.split(sep).includes('node_modules')) return join(projectRoot, '.venv');
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cache, 'rerun', 'venv');
}
/** A lock older than this is taken over (its holder died without removing it). */
const STALE_LOCK_MS = 10 * 60_000;

/**
 * The Python interpreter of a virtual environment that has the tool's pinned requirements:
 * `.venv/<tool>` in a checkout, `~/.cache/rerun/venv/<tool>-<hash of the requirements>` for an
 * installed package (see `defaultVenvRoot`). The first call installs them (pip, with its progress shown); later
 * calls only compare the requirements file with the stamp the install left. Concurrent callers
 * (`npm start` beside `npm test`) wait for one install instead of racing.
 *
 * @example
 * const python = await ensurePythonTool(PythonTool.MOTO);
 * spawn(python, ['-m', 'moto.server', '-p', '5000']);
 */
export async function ensurePythonTool(tool: PythonTool, options: EnsurePythonToolOptions = {}): Promise<string> {
  checkOptions('ensurePythonTool', options, ENSURE_PYTHON_TOOL_OPTION_NAMES, (m) => new LocalSetupError(m));
  const root = options.projectRoot ?? PROJECT_ROOT;
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const requirements = join(root, 'requirements', `${tool}.txt`);
  const wanted = createHash('sha256').update(readFileSync(requirements)).digest('hex');
  const venvRoot = options.venvRoot ?? defaultVenvRoot(root, options.env);
  // In the shared cache, every set of pins has its own venv: projects on different rerun versions
  // do not reinstall each other's.
  const name = venvRoot === join(root, '.venv') ? tool : `${tool}-${wanted.slice(0, 12)}`;
  const venv = join(venvRoot, name);
  const python = join(venv, 'bin', 'python');
  const stamp = join(venv, '.rerun-requirements.sha256');
  const installed = () => existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === wanted;
  if (installed()) return python;

  const lock = join(venvRoot, `${name}.lock`);
  await acquireLock(lock, progress, tool);
  try {
    if (installed()) return python;
    const base = options.python ?? 'python3';
    const version = spawnSync(base, ['--version'], { encoding: 'utf8' });
    if (version.error || version.status !== 0) {
      throw new PythonMissingError(
        `"${base}" was not found on PATH (${version.error?.message ?? `exit ${version.status}`}).`,
      );
    }
    const shown = venvRoot === join(root, '.venv') ? `.venv/${name}` : venv;
    progress(`rerun: installing ${tool} (pinned in requirements/${tool}.txt) into ${shown}; this happens once...`);
    rmSync(venv, { recursive: true, force: true });
    const made = spawnSync(base, ['-m', 'venv', venv], { encoding: 'utf8' });
    if (made.status !== 0) {
      throw new PythonMissingError(`"${base} -m venv" could not create a virtual environment: ${made.stderr.trim()}.`);
    }
    // --no-deps: each requirements file lists every package at an exact version, so pip resolves
    // nothing and a new release of a dependency cannot change the tool; pip check proves the list whole.
    const pip = ['-m', 'pip', '--disable-pip-version-check', '--no-input'];
    const install = [...pip, 'install', '--progress-bar', 'off', '--no-deps', '-r', requirements];
    const code = await run(python, install, (line) => progress(`  ${line}`));
    if (code !== 0) throw new PythonToolInstallError(tool, venv, `pip exited with ${code} (its output is above)`);
    const check = await run(python, [...pip, 'check'], (line) => progress(`  ${line}`));
    if (check !== 0)
      throw new PythonToolInstallError(tool, venv, 'pip check found missing or conflicting packages (above)');
    writeFileSync(stamp, `${wanted}\n`);
    progress(`rerun: ${tool} installed.`);
    return python;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** mkdir is atomic: the caller that creates the folder holds the lock. */
async function acquireLock(lock: string, progress: (line: string) => void, tool: string): Promise<void> {
  mkdirSync(join(lock, '..'), { recursive: true });
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (lockIsStale(lock)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) progress(`rerun: waiting for another process that is installing ${tool}...`);
    told = true;
    await sleep(500);
  }
}

/** The holder's process is gone, or (no pid written yet) the lock is older than any install. */
function lockIsStale(lock: string): boolean {
  try {
    process.kill(Number(readFileSync(join(lock, 'pid'), 'utf8')), 0);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    try {
      return Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS;
    } catch {
      return true;
    }
  }
}

function run(command: string, args: readonly string[], line: (text: string) => void): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let pending = '';
    const onData = (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) if (text.trim()) line(text);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', () => resolve(-1));
    child.once('close', (code) => {
      if (pending.trim()) line(pending);
      resolve(code ?? -1);
    });
  });
}
