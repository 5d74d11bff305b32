import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkOptions, type OptionNames } from '../../src/options/checkOptions.js';
import { LocalSetupError } from '../errors.js';
import { freeLoopbackPort } from '../runner/freeLoopbackPort.js';
import { ensurePythonTool, PythonTool } from './pythonEnvironment.js';

/** A running local AWS emulator, started by {@link startMotoServer}. */
export interface MotoServer {
  /** Base URL to pass as `endpoint` to every SDK client, e.g. `http://127.0.0.1:40123`. */
  readonly endpoint: string;
  /** Stops the server process; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Options for {@link startMotoServer}. */
export interface StartMotoServerOptions {
  /**
   * Python interpreter that has `moto[server]` installed.
   * @default process.env.RERUN_PYTHON, else the project's `.venv/moto` (an installed package: the
   * user's cache), installed on first use from requirements/moto.txt (local/emulator/pythonEnvironment.ts)
   */
  python?: string;
  /**
   * Run writes one at a time (local/emulator/atomicMotoServer.py), so conditional writes are atomic
   * as on AWS; moto's own server checks a condition and writes without a lock.
   * @default true
   */
  atomicWrites?: boolean;
  /**
   * How long to wait for the server to answer before giving up.
   * @default 20_000
   */
  readyTimeoutMs?: number;
}

/** The names of {@link StartMotoServerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const START_MOTO_SERVER_OPTION_NAMES = {
  atomicWrites: true,
  python: true,
  readyTimeoutMs: true,
} as const satisfies OptionNames<StartMotoServerOptions>;

const INSTALL_HINT =
  'Remove its virtual environment (.venv/moto; for an installed package ~/.cache/rerun/venv/moto-*) so that the ' +
  'next run installs it again (requirements/moto.txt), or start LocalStack with ' +
  '`docker compose -f docker-compose.localstack.yml up -d` and set AWS_ENDPOINT_URL=http://localhost:4566.';

/**
 * Starts `python3 -m moto.server` on a free loopback port and waits until it answers.
 *
 * @example
 * const moto = await startMotoServer();
 * const s3 = new S3Client({ endpoint: moto.endpoint, forcePathStyle: true });
 * // ...
 * await moto.stop();
 */
export async function startMotoServer(options: StartMotoServerOptions = {}): Promise<MotoServer> {
  checkOptions('startMotoServer', options, START_MOTO_SERVER_OPTION_NAMES, (m) => new LocalSetupError(m));
  const fromEnv = options.python === undefined ? process.env.RERUN_PYTHON || undefined : undefined;
  const python = options.python ?? fromEnv ?? (await ensurePythonTool(PythonTool.MOTO));
  // What to tell when it cannot start: an interpreter given by the user is theirs to fix; the one
  // rerun installed can be installed again.
  const given =
    options.python !== undefined ? `the interpreter ${python}` : fromEnv ? `RERUN_PYTHON=${python}` : undefined;
  const readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  const port = await freeLoopbackPort();
  const endpoint = `http://127.0.0.1:${port}`;

  const program =
    options.atomicWrites === false
      ? ['-m', 'moto.server']
      : [fileURLToPath(new URL('./atomicMotoServer.py', import.meta.url))];
  const child = spawn(python, [...program, '-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    // Its own process group: a Ctrl+C in the terminal goes to rerun, which finishes its work against
    // the emulator and then stops it (and kills it on exit in any case, see below).
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    // Keep only the tail: moto logs every request to stderr.
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let spawnError: NodeJS.ErrnoException | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (error) => {
      spawnError = error;
      resolve(-1);
    });
  });
  // Never leave an emulator behind, even when the process exits without calling stop().
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    const early = await Promise.race([exited, sleep(150).then(() => undefined)]);
    if (early !== undefined) throw startFailure({ python, given, program, early, spawnError, stderr });
    if (await answers(endpoint)) return { endpoint, stop: () => stopChild(child, exited) };
  }
  await stopChild(child, exited);
  throw new LocalSetupError(
    `The local AWS emulator did not answer on ${endpoint} within ${readyTimeoutMs} ms. ${given ? GIVEN_HINT : INSTALL_HINT}`,
  );
}

/** What to do with an interpreter the user chose (RERUN_PYTHON, or the `python` option). */
const GIVEN_HINT =
  'Point RERUN_PYTHON at a Python 3 that has the packages of requirements/moto.txt (python -m pip install -r ' +
  'requirements/moto.txt), or unset it so that rerun installs moto into its own virtual environment.';

/** Why the emulator's process ended before it answered, and what to do about it. */
function startFailure(input: {
  python: string;
  given: string | undefined;
  program: readonly string[];
  early: number | null;
  spawnError: NodeJS.ErrnoException | undefined;
  stderr: string;
}): LocalSetupError {
  const { python, given, spawnError } = input;
  const command = `"${python} ${input.program.join(' ')}"`;
  if (spawnError && (spawnError.code === 'ENOENT' || spawnError.code === 'EACCES')) {
    const what = spawnError.code === 'ENOENT' ? 'does not exist' : 'cannot be executed (EACCES)';
    return new LocalSetupError(
      given
        ? `${given}: that interpreter ${what}, so the local AWS emulator (moto) cannot start. ${GIVEN_HINT}`
        : `The Python of the emulator's virtual environment (${python}) ${what}. ${INSTALL_HINT}`,
      { cause: spawnError },
    );
  }
  const missing = /No module named '?([\w.]+)'?/.exec(input.stderr)?.[1];
  if (given && missing) {
    return new LocalSetupError(
      `${given} runs, but has no module "${missing}", so the local AWS emulator (moto) cannot start. ${GIVEN_HINT}`,
    );
  }
  const tail = input.stderr.trim().split('\n').slice(-5).join('\n');
  return new LocalSetupError(
    `The local AWS emulator (moto server) could not start with ${command} (exit ${input.early}${spawnError ? `, ${spawnError.message}` : ''}). ` +
      `${given ? GIVEN_HINT : INSTALL_HINT}${tail ? `\nIts last output:\n${tail}` : ''}`,
    ...(spawnError ? [{ cause: spawnError }] : []),
  );
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) });
    return response.status < 500;
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
