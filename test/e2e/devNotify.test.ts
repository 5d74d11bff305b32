import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { DevReady, DevSummary } from '../../app/dev/runDev.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';

/** Runs `rerun dev --once` with the real normalize handler against the test emulator. */
function rerunDevOnce(
  args: string[],
): Promise<{ code: number | null; ready: DevReady; summary: DevSummary; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'app/cli/rerun.ts', 'dev', '--once', ...args], {
      env: {
        ...process.env,
        AWS_ENDPOINT_URL: awsEndpoint(),
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = (tag: string) =>
        stdout
          .split('\n')
          .find((l) => l.startsWith(`${tag} `))
          ?.slice(tag.length + 1);
      const ready = line('READY');
      const summary = line('SUMMARY');
      if (!ready || !summary) return reject(new Error(`no READY/SUMMARY line (exit ${code}):\n${stdout}\n${stderr}`));
      resolve({ code, ready: JSON.parse(ready), summary: JSON.parse(summary), stderr });
    });
  });
}

async function exampleFiles(dir = 'examples'): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name !== 'README.md' && !e.name.startsWith('.'))
    .map((e) => relative('examples', join(e.parentPath, e.name)));
}

describe('rerun dev with the real normalize handler, the ledger and the webhook sink', () => {
  it('notifies once per output; a full second run over the same inputs sends no notification', async () => {
    const appName = uniqueName('notify');
    const first = await rerunDevOnce(['--demo', '--app-name', appName]);
    expect(first.code).toBe(0);
    expect(first.ready).toMatchObject({
      ledgerTable: `${appName}-ledger`,
      sinkUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    const files = await exampleFiles();
    const supported = files.filter((f) => /\.(csv|ndjson|jsonl)$/i.test(f));
    expect(first.summary).toMatchObject({
      processed: supported.length,
      failed: 0,
      deadLettered: 0,
      notified: supported.length,
      sinkApplied: supported.length,
      sinkRepeats: 0,
    });

    // Upload the very same bytes again: new events, same content. Everything is already done.
    const { s3 } = testClients();
    for (const file of files) {
      const key = `incoming/${file.split('\\').join('/')}`;
      const current = await s3.send(new GetObjectCommand({ Bucket: first.ready.inputBucket, Key: key }));
      const body = await current.Body?.transformToByteArray();
      await s3.send(new PutObjectCommand({ Bucket: first.ready.inputBucket, Key: key, Body: body }));
    }
    const second = await rerunDevOnce(['--no-demo', '--app-name', appName]);
    expect(second.code).toBe(0);
    expect(second.summary).toMatchObject({ processed: 0, failed: 0, notified: 0, sinkApplied: 0 });
    expect(second.summary.skipped).toBe(files.length);
  }, 120_000);
});
