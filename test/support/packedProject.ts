/**
 * The package as a user gets it, for the tests that run it from outside the checkout: `npm run
 * build`, `npm pack`, and a scratch project that installs the tarball and the peers it needs (the
 * versions of our lockfile). The same steps as test/package/consumer.test.ts; about a minute on two
 * busy cores with a warm npm cache.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `name@version` as our lockfile resolves it. */
export function pinnedDependency(name: string): string {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string }>;
  };
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (version === undefined) throw new Error(`${name} is not in package-lock.json`);
  return `${name}@${version}`;
}

/**
 * The environment of a new terminal with nothing set up: PATH (without any node_modules/.bin),
 * HOME and TMPDIR only, plus `extra`. No AWS_* or RERUN_* variable, no npm lifecycle variable.
 */
export function bareTerminalEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !entry.includes('node_modules'))
    .join(delimiter);
  return {
    PATH: path,
    HOME: process.env.HOME ?? tmpdir(),
    // rerun dev's session file lives in the temporary directory: both sides must agree on it.
    TMPDIR: tmpdir(),
    ...extra,
  };
}

function run(command: string, args: string[], cwd: string): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'NODE_OPTIONS') env[key] = value;
  }
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** A scratch project with the packed package installed; `remove()` deletes it and the tarball. */
export interface PackedProject {
  readonly dir: string;
  remove(): void;
}

/**
 * Builds and packs the package, then creates a project (`type: module`) holding `files` and installs
 * the tarball with `dependencies` (names; pinned to our lockfile's versions).
 *
 * @example
 * const project = packAndInstall({ 'worker.mjs': WORKER }, ['@aws-sdk/client-s3']);
 */
export function packAndInstall(files: Record<string, string>, dependencies: readonly string[]): PackedProject {
  run('npm', ['run', 'build'], ROOT);
  const packDir = mkdtempSync(join(tmpdir(), 'rerun-pack-'));
  const packed = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], ROOT),
  ) as { filename: string }[];
  const tarball = join(packDir, packed[0]?.filename ?? '');
  const dir = mkdtempSync(join(tmpdir(), 'rerun-packed-'));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'rerun-packed-user', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel',
      'error',
      tarball,
      ...dependencies.map(pinnedDependency),
    ],
    dir,
  );
  return {
    dir,
    remove: () => {
      for (const d of [dir, packDir]) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** A running `npx rerun ...` of a scratch project: its process, its output so far, its exit. */
export interface PackedCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Its exit code (null when a signal ended it). */
  readonly exit: Promise<number | null>;
}

/**
 * Runs the installed `npx --no rerun <args>` in the scratch project `dir` with exactly `env` (see
 * {@link bareTerminalEnv}), in its own process group, so npx and the rerun it starts are signalled
 * together (`process.kill(-cli.child.pid, ...)`).
 *
 * @example
 * const cli = runPackedRerun(project.dir, ['status', '--stack', 'Clicks'], bareTerminalEnv());
 */
export function runPackedRerun(dir: string, args: readonly string[], env: NodeJS.ProcessEnv): PackedCli {
  const child = spawn('npx', ['--no', 'rerun', ...args], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

/**
 * SIGKILLs the process group of each `npx rerun` still running (runPackedRerun starts each in a
 * group of its own, so its children go with it): what a test's afterAll leaves behind.
 */
export function killPackedRuns(children: readonly ChildProcess[]): void {
  for (const child of children) {
    try {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group has already exited.
    }
  }
}
