import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = fileURLToPath(new URL('../../../app/cli/rerun.ts', import.meta.url));

/** A `rerun` process of the checkout, as `npx rerun` runs it. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** Everything written to stderr so far (for failure messages). */
  stderr(): string;
  /** Resolves with the first stdout line that starts with `prefix` (without it). */
  line(prefix: string, timeoutMs?: number): Promise<string>;
  /** Ctrl+C, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `rerun <args>` under tsx from the checkout's root.
 *
 * @example
 * const dev = startCli(['dev', '--app-name', 'acme']);
 * const ready = JSON.parse(await dev.line('READY '));
 */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiting: (() => void)[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wake of waiting.splice(0)) wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    stderr: () => err,
    async line(prefix, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = out.split('\n').find((l) => l.startsWith(prefix));
        if (found !== undefined) return found.slice(prefix.length);
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`rerun ${args[0]} printed no ${prefix.trim()} line (exit ${child.exitCode}):\n${err}`);
        }
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, 500);
        });
      }
    },
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null) return;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
