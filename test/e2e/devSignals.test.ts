import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('Ctrl+C on rerun dev started through tsx, as `npm start` does', () => {
  it('finishes cleanly: one SIGINT to the whole process group prints SUMMARY, exits 0 and stops the emulator', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
    delete env.AWS_ENDPOINT_URL; // the embedded emulator: it must not be left behind
    // detached: the CLI gets a process group of its own, like a terminal's foreground job.
    const child = spawn('node_modules/.bin/tsx', ['app/cli/rerun.ts', 'dev', '--no-demo'], {
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const ready = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
        const line = stdout.split('\n').find((l) => l.startsWith('READY '));
        if (line) resolve(line);
      });
      child.once('exit', () => reject(new Error(`exited before READY: ${stderr}`)));
    });
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const { endpoint } = JSON.parse((await ready).slice('READY '.length)) as { endpoint: string };

    // The terminal sends SIGINT to every process of the group (tsx and node); tsx relays it too.
    process.kill(-(child.pid as number), 'SIGINT');
    expect(await exit).toBe(0);
    expect(stdout).toMatch(/^SUMMARY \{.*"ended":"interrupted"/m);
    expect(stderr).not.toMatch(/second SIGINT/);
    await expect(fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
  }, 60_000);
});
