import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
  const python = options.python ?? process.env.RERUN_PYTHON ?? (await ensurePythonTool(PythonTool.MOTO));
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
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  // Never leave an emulator behind, even when the process exits without calling stop().
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    const early = await Promise.race([exited, sleep(150).then(() => undefined)]);
    if (early !== undefined) {
      throw new Error(
        `The local AWS emulator (moto server) could not start with "${python} ${program.join(' ')}" (exit ${early}). ${INSTALL_HINT}\n${stderr}`,
      );
    }
    if (await answers(endpoint)) return { endpoint, stop: () => stopChild(child, exited) };
  }
  await stopChild(child, exited);
  throw new Error(`The local AWS emulator did not answer on ${endpoint} within ${readyTimeoutMs} ms. ${INSTALL_HINT}`);
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
