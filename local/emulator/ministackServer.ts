import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../runner/freeLoopbackPort.js';
import { ensurePythonTool, PythonTool } from './pythonEnvironment.js';

/** How MiniStack starts when it enforces IAM (see `enforceIam`). */
const IAM_MODE_WRAPPER = fileURLToPath(new URL('./ministackWithIam.py', import.meta.url));

/** A running MiniStack, started by {@link startMiniStack}. */
export interface MiniStackServer {
  /** Base URL for every SDK client and for `cdklocal`, e.g. `http://127.0.0.1:40123`. */
  readonly endpoint: string;
  /** The last lines MiniStack logged (its function output and errors), for failure messages. */
  logTail(): string;
  /** Stops MiniStack and everything it started (its process group); resolves once it has exited. */
  stop(): Promise<void>;
}

/** Options for {@link startMiniStack}. */
export interface StartMiniStackOptions {
  /**
   * The `ministack` entry point to run.
   * @default `.venv/ministack/bin/ministack` of the project, installed on first use from
   * requirements/ministack.txt (local/emulator/pythonEnvironment.ts)
   */
  readonly executable?: string;
  /**
   * How long to wait for `/_ministack/health` before giving up.
   * @default 30_000
   */
  readonly readyTimeoutMs?: number;
  /**
   * Extra variables for MiniStack's environment (which it also passes to every function it runs).
   * @default none
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Enforce IAM (MiniStack's `AUTH=true`): identity policies, resource policies and conditions judge
   * every request but the account root's, and each function calls AWS with an assumed-role session
   * of its own execution role. MiniStack then serves HTTPS with this certificate (`USE_SSL=1`), as
   * the stack's policies deny plain HTTP, and runs behind local/emulator/ministackWithIam.py,
   * which adds the S3 condition keys of conditional requests that MiniStack 1.5.33 leaves out of its
   * request context (docs/EMULATORS.md, "Its IAM evaluator").
   * @default IAM not enforced, plain HTTP
   */
  readonly enforceIam?: { readonly certificate: { readonly cert: string; readonly key: string } };
}

/**
 * Variables of the host environment MiniStack may see. MiniStack hands its own environment to every
 * function it runs (a function's `Environment.Variables` only override it), so anything else, such
 * as a developer's AWS_PROFILE, AWS_ENDPOINT_URL or NODE_OPTIONS, would change how the deployed code
 * behaves. PATH stays: functions run on the `node` found there.
 */
const PASSED_THROUGH = ['PATH', 'LANG', 'LC_ALL'] as const;

/**
 * Starts MiniStack (the emulator of the deployed tier) on a free loopback port with a clean
 * environment and its optional listeners off, and waits until `/_ministack/health` answers.
 *
 * Settings, from the installed package's README and code (ministack 1.5.33): `GATEWAY_PORT` is the
 * port; `BIND_HOST` the interface (it binds 0.0.0.0 by default); `MINISTACK_HOST` the host name in
 * the URLs it returns (queue URLs, stack outputs), so clients reach it on 127.0.0.1 and never try
 * `localhost`'s IPv6 address; `IOT_MTLS_ENABLED=0` keeps its MQTT listener (port 8883, all
 * interfaces) closed, `SFTP_ENABLED=0` its SFTP one. It runs Node functions as `node` from PATH.
 *
 * @example
 * const ministack = await startMiniStack();
 * const s3 = new S3Client({ endpoint: ministack.endpoint, forcePathStyle: true });
 * // ...
 * await ministack.stop();
 */
export async function startMiniStack(options: StartMiniStackOptions = {}): Promise<MiniStackServer> {
  const python = options.executable ? undefined : await ensurePythonTool(PythonTool.MINISTACK);
  const iam = options.enforceIam;
  const [executable, args] =
    iam && python
      ? [python, [IAM_MODE_WRAPPER]]
      : [options.executable ?? join(dirname(python as string), 'ministack'), []];
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const port = await freeLoopbackPort();
  const endpoint = `${iam ? 'https' : 'http'}://127.0.0.1:${port}`;
  // Its pid file, TLS cache and function code go to a directory of its own, removed on stop.
  const home = mkdtempSync(join(tmpdir(), 'rerun-ministack-'));
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, {
    HOME: home,
    TMPDIR: home,
    GATEWAY_PORT: String(port),
    BIND_HOST: '127.0.0.1',
    MINISTACK_HOST: '127.0.0.1',
    IOT_MTLS_ENABLED: '0',
    SFTP_ENABLED: '0',
    PYTHONUNBUFFERED: '1',
    ...(iam
      ? {
          AUTH: 'true',
          USE_SSL: '1',
          // Absolute: MiniStack runs in a directory of its own.
          MINISTACK_SSL_CERT: resolve(iam.certificate.cert),
          MINISTACK_SSL_KEY: resolve(iam.certificate.key),
        }
      : {}),
    ...options.env,
  });

  const child = spawn(executable, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
    cwd: home,
    // Its own process group: stop() signals the group, so function workers it started go too.
    detached: true,
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  const killOnExit = () => signalGroup(child, 'SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const stop = async () => {
    await stopGroup(child, exited);
    rmSync(home, { recursive: true, force: true });
  };
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    const early = await Promise.race([exited, sleep(200).then(() => undefined)]);
    if (early !== undefined) {
      rmSync(home, { recursive: true, force: true });
      throw new Error(
        `MiniStack could not start with ${executable} (exit ${early}). Install it with ` +
          `\`npx tsx scripts/install-python-tools.ts ministack\` (requirements/ministack.txt).\n${log.slice(-4000)}`,
      );
    }
    if (await healthy(endpoint, iam?.certificate.cert)) return { endpoint, logTail: () => log.slice(-8000), stop };
  }
  await stop();
  throw new Error(
    `MiniStack did not answer ${endpoint}/_ministack/health within ${readyTimeoutMs} ms; its log:\n${log.slice(-4000)}`,
  );
}

/** Whether `/_ministack/health` answers 200; over HTTPS trusting `ca` (this process may not trust it otherwise). */
function healthy(endpoint: string, ca?: string): Promise<boolean> {
  const url = `${endpoint}/_ministack/health`;
  return new Promise((resolve) => {
    const done = (response: IncomingMessage) => {
      response.resume();
      resolve(response.statusCode === 200);
    };
    const request = ca
      ? httpsGet(url, { ca: readFileSync(ca), timeout: 1000 }, done)
      : httpGet(url, { timeout: 1000 }, done);
    request.once('error', () => resolve(false));
    request.once('timeout', () => request.destroy());
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/**
 * SIGINT, not SIGTERM: MiniStack 1.5.33 exits from its SIGTERM handler with sys.exit inside the event
 * loop and was seen to hang there; on SIGINT it shuts down in about a second. SIGKILL after 5 s.
 */
async function stopGroup(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    signalGroup(child, 'SIGINT');
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  // Function workers share the group and may outlive MiniStack itself.
  signalGroup(child, 'SIGKILL');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
