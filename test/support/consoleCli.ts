import { expect } from 'vitest';
import { runCli } from '../../app/cli/dispatch.js';
import type { CliIo } from '../../app/common/command.js';

/** The console's API as a test asks it, with the token `rerun ui` printed. */
export interface ConsoleApiClient {
  /** The answer to `path`, held to `status` (200 unless told). */
  get(path: string, status?: number): Promise<unknown>;
  /** The status and the answer to `path`, whatever the status. */
  answer(path: string): Promise<{ status: number; body: unknown }>;
}

/**
 * Runs `rerun ui` with `args` in this process (the CLI's own dispatch, `env` as its whole
 * environment), waits for its `URL` line, hands `use` a client of its API, then stops it with
 * Ctrl-C and expects exit 0.
 *
 * @example
 * await withConsoleCli(['--stack', stackName], env, async (api) => {
 *   expect(await api.get('/api/overview')).toMatchObject({ stage: { name: 'clean' } });
 * });
 */
export async function withConsoleCli<T>(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  use: (api: ConsoleApiClient) => Promise<T>,
): Promise<T> {
  const stdout: string[] = [];
  let stderr = '';
  const ctrlC = new AbortController();
  const io: CliIo = {
    stdout: (line) => void stdout.push(line),
    stderr: (text) => {
      stderr += text;
    },
    env,
    isTTY: false,
    signal: ctrlC.signal,
  };
  const running = runCli(['ui', ...args], io);
  const deadline = Date.now() + 30_000;
  while (stdout.length === 0 && Date.now() < deadline) {
    if (await Promise.race([running.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))])) break;
  }
  expect(stdout[0], stderr).toMatch(/^URL /);
  const url = new URL((stdout[0] ?? '').replace(/^URL /, ''));
  const answer = async (path: string) => {
    const response = await fetch(`${url.origin}${path}`, {
      headers: { 'X-Rerun-Token': url.searchParams.get('token') ?? '' },
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const get = async (path: string, status = 200) => {
    const answered = await answer(path);
    expect(answered.status, JSON.stringify(answered.body)).toBe(status);
    return answered.body;
  };
  try {
    return await use({ get, answer });
  } finally {
    ctrlC.abort();
    expect(await running).toBe(0);
  }
}
