import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { runCli } from '../../../app/cli/dispatch.js';
import type { CliIo } from '../../../app/common/command.js';
import type { DevReady } from '../../../app/dev/runDev.js';
import type { AwsClients } from '../../../src/aws/clients.js';

/**
 * The environment of a `rerun` the browser tests start: no AWS_ENDPOINT_URL and no credentials
 * (`rerun dev` serves its own emulator with its test keys, and `rerun ui` finds it from the session
 * file; credentials in the environment would name a target of their own, which a session never overrides).
 */
export function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'AWS_ENDPOINT_URL',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
  ]) {
    delete env[name];
  }
  return env;
}

/**
 * Runs `rerun <args>` in this process against a dev session's emulator, as a person would in a
 * second terminal; resolves with its exit code and what it wrote to stderr.
 *
 * @example
 * const { code, stderr } = await runCliAgainst(ready, ['backfill', '--from', '2026-03-01', '--to', '2026-03-03']);
 */
export async function runCliAgainst(
  ready: Pick<DevReady, 'endpoint'>,
  args: readonly string[],
): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const io: CliIo = {
    stdout: () => {},
    stderr: (text) => {
      stderr += text;
    },
    env: { ...cliEnv(), AWS_ENDPOINT_URL: ready.endpoint, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
    isTTY: false,
    signal: new AbortController().signal,
  };
  const code = await runCli([...args], io);
  return { code, stderr };
}

/** Checks every 250 ms until `check` holds; past `timeoutMs`, fails naming `what`, with `detail()` (dev's stderr). */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${detail()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Whether the normalize worker's output of the input `incoming/<key>` exists, for {@link until}. */
export function normalizedOutputExists(
  clients: AwsClients,
  ready: Pick<DevReady, 'inputBucket' | 'outputBucket'>,
  key: string,
): () => Promise<boolean> {
  const head = () =>
    new HeadObjectCommand({ Bucket: ready.outputBucket, Key: `normalized/${ready.inputBucket}/${key}.ndjson` });
  return () =>
    clients.s3.send(head()).then(
      () => true,
      () => false,
    );
}
