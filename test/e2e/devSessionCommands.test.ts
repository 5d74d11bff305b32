import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { findDevSessions } from '../../app/common/findDevSession.js';
import type { DevReady } from '../../app/dev/runDev.js';
import { uniqueName } from '../support/aws.js';

/** The environment of a fresh terminal: nothing of AWS's or rerun's set (no endpoint, no keys). */
function bareEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('RERUN_')),
  );
}

interface Cli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  readonly exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** `rerun <args>` as a person types it in a terminal of its own. */
function rerun(args: readonly string[]): Cli {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/cli/rerun.ts', ...args], {
    env: bareEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function until(what: string, check: () => boolean, cli: Cli, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (cli.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`no ${what} (exit ${cli.child.exitCode}):\n${cli.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('commands find a running rerun dev with no variable set', () => {
  it('status, ls and ui reach the running session from a bare environment; a second session of the app name leaves it intact', async () => {
    const app = uniqueName('devfind');
    const dev = rerun(['dev', '--demo', '--app-name', app]);
    // The hint lines come when it is ready, not at exit.
    await until('hint lines', () => /^While this runs, in another terminal/m.test(dev.stderr()), dev);
    expect(dev.child.exitCode).toBeNull();
    expect(dev.stderr()).toContain(`Days:       npx rerun status --from YYYY-MM-DD --to YYYY-MM-DD --app-name ${app}`);
    const ready = JSON.parse(/^READY (.*)$/m.exec(dev.stdout())?.[1] ?? '{}') as DevReady;
    // Every demo sample done (thirteen and the s3:TestEvent).
    await until('the demo outcomes', () => (dev.stderr().match(/^(processed|skipped) {2,}/gm) ?? []).length >= 14, dev);

    const status = rerun(['status', '--from', '2026-03-01', '--to', '2026-03-03', '--app-name', app]);
    expect(await status.exit, status.stderr()).toBe(0);
    expect(status.stderr()).toContain(
      `note: rerun status uses the running rerun dev of app ${app} (pid ${dev.child.pid},`,
    );
    expect(status.stderr()).toContain(`at ${ready.endpoint}`);
    // The demo's dated inputs, each normalized by the session: its buckets, not `rerun-*` ones.
    expect(status.stdout()).toMatch(/^dt=2026-03-02 +missing +2 +no summary published \(2 inputs: 2 with outputs\)$/m);
    expect(status.stdout()).toMatch(/^SUMMARY \{"from":"2026-03-01","to":"2026-03-03"/m);

    // A second rerun dev of the same app name on this machine, started and stopped (its own emulator).
    const second = rerun(['dev', '--no-demo', '--once', '--app-name', app]);
    expect(await second.exit, second.stderr()).toBe(0);
    const sessions = findDevSessions().filter((s) => s.appName === app);
    expect(sessions.map((s) => s.pid)).toEqual([dev.child.pid]);
    expect(existsSync(sessions[0]?.journal as string)).toBe(true);

    const ls = rerun(['ls', `s3://${ready.outputBucket}/normalized/`, '--app-name', app]);
    expect(await ls.exit, ls.stderr()).toBe(0);
    expect(ls.stderr()).toContain(`note: rerun ls uses the running rerun dev of app ${app}`);
    expect(ls.stdout()).toContain(`normalized/${ready.inputBucket}/dt=2026-03-01/orders.csv.ndjson`);

    // The console too, as before, now from a bare environment as every command.
    const ui = rerun(['ui', '--app-name', app, '--port', '0']);
    await until('the console URL', () => /^URL /m.test(ui.stdout()), ui);
    expect(ui.stderr()).toContain(`the console of the running rerun dev of app ${app} (pid ${dev.child.pid},`);
    ui.child.kill('SIGINT');
    expect(await ui.exit).toBe(0);

    dev.child.kill('SIGINT');
    expect(await dev.exit).toBe(0);
    expect(findDevSessions().filter((s) => s.appName === app)).toEqual([]);
  }, 180_000);
});
