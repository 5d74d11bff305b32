import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createConnection } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSEvent } from 'aws-lambda';
import { LambdaRuntimeSlotError } from './errors.js';
import type { InvocationResult } from './FunctionInvoker.js';
import { freeLoopbackPort } from './freeLoopbackPort.js';
import { readInvokeAnswer } from './invokeAnswer.js';
import type { LambdaRuntimeTools } from './lambdaRuntimeTools.js';
import { childPids, isRunning, killGroup } from './linuxProcesses.js';

/** The function a {@link LambdaRuntimeSlot} runs: what Lambda reads from the function's configuration. */
export interface LambdaFunctionSettings {
  /** The bundle's folder: `LAMBDA_TASK_ROOT` and the runtime's working directory (Lambda's /var/task). */
  readonly codeDirectory: string;
  /** `Handler` (`file.export`, relative to the code directory). @default 'index.handler' */
  readonly handler?: string;
  /** `FunctionName`. */
  readonly functionName: string;
  /** `Timeout` in seconds (1-900): the emulator kills the runtime when an invocation runs past it. */
  readonly timeoutSeconds: number;
  /** `MemorySize` in MB, reported as `context.memoryLimitInMB` (not enforced). */
  readonly memoryMiB: number;
  /** `Environment.Variables` of the function, plus what the local endpoint needs (AWS_ENDPOINT_URL...). */
  readonly environment: Readonly<Record<string, string>>;
  /** The region (`AWS_REGION`, `AWS_DEFAULT_REGION`). */
  readonly region: string;
  /**
   * The function's `LoggingConfig`: Lambda passes it to the runtime as AWS_LAMBDA_LOG_FORMAT and
   * AWS_LAMBDA_LOG_LEVEL (the runtime client then writes console output as JSON, filtered by level).
   * @default { format: 'Text' } (Lambda's default)
   */
  readonly logging?: { readonly format: 'Text' | 'JSON'; readonly applicationLogLevel?: string };
  /** Credentials the function's SDK finds in its environment, as Lambda provides the role's. */
  readonly credentials: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
}

/** Options of {@link LambdaRuntimeSlot}. */
export interface LambdaRuntimeSlotOptions {
  readonly tools: LambdaRuntimeTools;
  readonly function: LambdaFunctionSettings;
  /** Lambda's log stream name of this execution environment. @default '$LATEST' (the emulator's) */
  readonly logStreamName?: string;
  /**
   * Every line the emulator and the function write (the function's stdout and stderr pass through
   * the emulator's), as CloudWatch Logs would receive them.
   * @default dropped
   */
  readonly onOutput?: (line: string) => void;
  /**
   * Extra time past the function timeout after which the slot gives up on an emulator that did not
   * answer, kills it and reports a timeout.
   * @default 10_000
   */
  readonly emulatorGraceMs?: number;
}

/**
 * Emulators started by this process and not yet stopped. The emulator outlives its parent (it runs
 * in its own process group and has no parent-death signal), so an exit that skips `stop()` (a second
 * Ctrl+C, `process.exit`) kills them synchronously on the way out. Only SIGKILL of the parent can
 * leave them behind.
 */
const running = new Set<LambdaRuntimeSlot>();
let exitHookInstalled = false;

/** The emulator's invoke path (the same one Lambda's Invoke API uses). */
const INVOKE_PATH = '/2015-03-31/functions/function/invocations';

/**
 * One Lambda execution environment, run locally: a child process of the AWS Lambda Runtime
 * Interface Emulator (`aws-lambda-rie`) listening on a free loopback port, whose runtime is the
 * stack's Node major running AWS's runtime interface client (`aws-lambda-ric`) on the bundle's
 * folder. So the handler loads exactly as Lambda loads it (the client imports `index.mjs` from
 * `LAMBDA_TASK_ROOT`), and the context's remaining time counts down from the function timeout.
 *
 * Like Lambda, the emulator initialises the runtime on the first invocation and keeps it warm; it
 * serves one invocation at a time. When an invocation runs past the timeout it SIGKILLs the runtime
 * and answers "Task timed out after N.00 seconds"; the next invocation starts a fresh runtime
 * (Lambda resets a timed-out sandbox the same way). Nothing of the caller's environment reaches the
 * function: it sees the function's variables, the Lambda-defined ones, and the credentials given.
 *
 * @example
 * const slot = await LambdaRuntimeSlot.start({ tools: locateLambdaRuntimeTools('.'), function: {
 *   codeDirectory: bundle.directory, functionName: 'rerun-normalize', timeoutSeconds: 60, memoryMiB: 512,
 *   environment: { OUTPUT_BUCKET: 'out', AWS_ENDPOINT_URL: endpoint }, region: 'us-east-1',
 *   credentials: { accessKeyId: 'test', secretAccessKey: 'test' } } });
 * const result = await slot.invoke(event, randomUUID()); // { kind: 'returned', value: { batchItemFailures: [] } }
 * await slot.stop();
 */
export class LambdaRuntimeSlot {
  /** The emulator's invoke endpoint. */
  readonly url: string;
  private readonly child: ChildProcess;
  private readonly options: LambdaRuntimeSlotOptions;
  private readonly exited: Promise<void>;
  private exitedWith: string | undefined;
  private busy = false;

  private constructor(child: ChildProcess, port: number, options: LambdaRuntimeSlotOptions) {
    this.child = child;
    this.url = `http://127.0.0.1:${port}${INVOKE_PATH}`;
    this.options = options;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitedWith = signal ? `signal ${signal}` : `exit code ${code}`;
        running.delete(this);
        resolve();
      });
    });
    running.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const slot of running) slot.killNow();
      });
    }
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      const lines = createInterface({ input: stream });
      lines.on('line', (line) => options.onOutput?.(line));
    }
  }

  /**
   * Starts the emulator on a free loopback port and waits until it accepts connections (the runtime
   * itself starts on the first invocation, as Lambda's on-demand initialisation does).
   */
  static async start(options: LambdaRuntimeSlotOptions): Promise<LambdaRuntimeSlot> {
    let lastError: unknown;
    // A free port can be taken by another process between the probe and the emulator's bind: retry.
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [invokePort, runtimeApiPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
      const slot = new LambdaRuntimeSlot(spawnEmulator(options, invokePort, runtimeApiPort), invokePort, options);
      try {
        await slot.waitUntilListening(invokePort);
        return slot;
      } catch (error) {
        lastError = error;
        await slot.stop();
      }
    }
    throw new LambdaRuntimeSlotError(
      `aws-lambda-rie did not start for ${options.function.functionName}: ${describe(lastError)}. ` +
        `Check that ${options.tools.rie} runs on this machine (reinstall with scripts/install-lambda-runtime.sh).`,
      { cause: lastError },
    );
  }

  /** Whether the emulator process is still running. */
  get alive(): boolean {
    return this.exitedWith === undefined;
  }

  /** Process ids of the emulator's runtime processes (the Node runtime while it is initialised). */
  runtimePids(): number[] {
    const pid = this.child.pid;
    return pid === undefined ? [] : childPids(pid);
  }

  /**
   * Sends one event and waits for the function's answer, read as Lambda's event source mapping
   * reads it. Rejects with {@link LambdaRuntimeSlotError} when the emulator itself cannot be
   * reached (the slot is then dead and must be replaced).
   */
  async invoke(event: SQSEvent, requestId: string): Promise<InvocationResult> {
    if (this.busy) throw new LambdaRuntimeSlotError('A Lambda runtime slot serves one invocation at a time.');
    if (!this.alive) throw new LambdaRuntimeSlotError(`The emulator has exited (${this.exitedWith}).`);
    this.busy = true;
    const { timeoutSeconds } = this.options.function;
    const guardMs = timeoutSeconds * 1000 + (this.options.emulatorGraceMs ?? 10_000);
    // Cleared when the answer arrives: a pending guard would keep the process alive for its full length.
    let guard: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        post(this.url, JSON.stringify(event), requestId),
        new Promise<undefined>((resolve) => {
          guard = setTimeout(() => resolve(undefined), guardMs);
        }),
      ]);
      if (answer === undefined) {
        await this.stop();
        return {
          kind: 'timeout',
          error: `Task timed out after ${timeoutSeconds.toFixed(2)} seconds (the emulator did not answer)`,
        };
      }
      return readInvokeAnswer(answer.status, answer.body);
    } catch (error) {
      throw new LambdaRuntimeSlotError(`The emulator at ${this.url} did not answer: ${describe(error)}`, {
        cause: error,
      });
    } finally {
      clearTimeout(guard);
      this.busy = false;
    }
  }

  /** Kills the emulator and its runtime (each in its own process group) and waits for the emulator to exit. */
  async stop(): Promise<void> {
    if (this.child.pid === undefined || !this.alive) return;
    const runtimes = this.killNow();
    await this.exited;
    // The runtime, orphaned by the emulator's death, is reaped by init: wait until it is gone.
    for (let waited = 0; waited < 2000 && runtimes.some(isRunning); waited += 20) await sleep(20);
  }

  /** Sends SIGKILL to the runtime's and the emulator's process groups; returns the runtime pids. */
  private killNow(): number[] {
    const pid = this.child.pid;
    if (pid === undefined) return [];
    // The emulator starts the runtime in a process group of its own (Setpgid), so killing the
    // emulator's group would leave the runtime running: kill the runtime's groups first.
    const runtimes = childPids(pid);
    for (const runtime of runtimes) killGroup(runtime);
    killGroup(pid);
    return runtimes;
  }

  private async waitUntilListening(port: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`aws-lambda-rie exited at start (${this.exitedWith})`);
      if (await canConnect(port)) return;
      await sleep(25);
    }
    throw new Error('aws-lambda-rie did not listen within 10 s');
  }
}

function spawnEmulator(options: LambdaRuntimeSlotOptions, invokePort: number, runtimeApiPort: number): ChildProcess {
  const fn = options.function;
  const handler = fn.handler ?? 'index.handler';
  // The variables Lambda defines for a Node function
  // (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
  // then the function's own. NODE_PATH names the task root only: Lambda's also names the runtime's
  // node_modules (which hold the runtime's own SDK); leaving it out proves the bundle carries its SDK.
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    LAMBDA_TASK_ROOT: fn.codeDirectory,
    NODE_PATH: fn.codeDirectory,
    _HANDLER: handler,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    AWS_REGION: fn.region,
    AWS_DEFAULT_REGION: fn.region,
    AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMiB),
    // Read by the emulator, not by Lambda's runtime: the timeout it enforces.
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(fn.timeoutSeconds),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: options.logStreamName ?? '$LATEST',
    AWS_LAMBDA_LOG_FORMAT: fn.logging?.format ?? 'Text',
    ...(fn.logging?.format === 'JSON' && fn.logging.applicationLogLevel
      ? { AWS_LAMBDA_LOG_LEVEL: fn.logging.applicationLogLevel }
      : {}),
    AWS_ACCESS_KEY_ID: fn.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: fn.credentials.secretAccessKey,
    ...(fn.credentials.sessionToken ? { AWS_SESSION_TOKEN: fn.credentials.sessionToken } : {}),
    ...fn.environment,
  };
  const child = spawn(
    options.tools.rie,
    [
      '--log-level',
      'warn',
      '--runtime-interface-emulator-address',
      `127.0.0.1:${invokePort}`,
      '--runtime-api-address',
      `127.0.0.1:${runtimeApiPort}`,
      options.tools.node,
      options.tools.runtimeClient,
      handler,
    ],
    // detached: a process group of its own, so stop() can kill it as a whole and a Ctrl+C aimed at
    // the runner does not reach it before the runner has stopped it.
    { cwd: fn.codeDirectory, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.on('error', () => {});
  return child;
}

function post(url: string, body: string, requestId: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-amzn-requestid': requestId,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
