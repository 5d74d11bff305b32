import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../app/common/command.js';
import { publishDevSession } from '../../app/common/devSessionFile.js';
import { runConsole } from '../../app/ui/runConsole.js';
import { type MotoServer, startMotoServer } from '../../local/emulator/motoServer.js';
import { createPipelineClients } from '../../src/ledger/pipelineClients.js';
import { awsEndpoint, testClients } from '../support/aws.js';
import { provisionTwoStagePipeline, type TwoStagePipeline } from '../support/summaryPipeline.js';

/** A process that stands for a running `rerun dev` (a session is trusted only while its process runs). */
function holder(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

/** Publishes a session file of `app` for the pipeline `p` at `endpoint`, as `rerun dev` does. */
function publish(stateEnv: NodeJS.ProcessEnv, app: string, p: TwoStagePipeline, endpoint: string, pid: number) {
  return publishDevSession(
    {
      appName: app,
      endpoint,
      region: 'us-east-1',
      emulator: 'embedded',
      inputBucket: p.stack.inputBucket,
      outputBucket: p.stack.outputBucket,
      queueUrl: p.stack.queueUrl,
      dlqUrl: p.stack.dlqUrl,
      summaryQueueUrl: p.summary.queueUrl,
      summaryDlqUrl: p.summary.dlqUrl,
    },
    { env: stateEnv, pid },
  );
}

describe('rerun ui when the rerun dev it reads stops', () => {
  const state = mkdtempSync(join(tmpdir(), 'rerun-ui-stopped-')); // 0700, the user's own
  // The user's environment: no AWS_ENDPOINT_URL, no credentials; the endpoint comes from the session file.
  const env: NodeJS.ProcessEnv = { XDG_RUNTIME_DIR: state, PATH: process.env.PATH ?? '' };
  const abort = new AbortController();
  let stderr = '';
  let url = '';
  let moto: MotoServer;
  let first: ChildProcess;
  let second: ChildProcess | undefined;
  let app: string;
  let ended: Promise<number>;

  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read by the assertions below
  const get = async (path: string): Promise<{ status: number; body: any }> => {
    const base = new URL(url);
    const response = await fetch(`${base.origin}${path}`, {
      headers: { 'X-Rerun-Token': base.searchParams.get('token') ?? '' },
    });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    moto = await startMotoServer();
    const a = await provisionTwoStagePipeline(createPipelineClients({ endpoint: moto.endpoint, region: 'us-east-1' }));
    app = a.appName;
    first = holder();
    publish(env, app, a, moto.endpoint, first.pid as number);
    const io: CliIo = {
      stdout: (line) => {
        if (line.startsWith('URL ')) url = line.slice(4);
      },
      stderr: (text) => {
        stderr += text;
      },
      env,
      isTTY: false,
      signal: abort.signal,
    };
    ended = runConsole({ values: {}, io, port: 0, host: '127.0.0.1', exposed: false });
    for (let i = 0; i < 200 && url === ''; i++) await new Promise((r) => setTimeout(r, 100));
    expect(url, stderr).not.toBe('');
  }, 90_000);

  afterAll(async () => {
    abort.abort();
    await ended;
    first?.kill();
    second?.kill();
    await moto?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it('names the stopped rerun dev and how to start it again, never an AWS_ENDPOINT_URL nobody set, and reads the next one of the app', async () => {
    const before = await get('/api/overview');
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({
      kind: 'dev',
      appName: app,
      session: { pid: first.pid, endpoint: moto.endpoint },
    });

    // Its emulator stops while the process still runs.
    await moto.stop();
    const silent = await get('/api/days?from=2026-03-01&to=2026-03-02');
    expect(silent.status).toBe(503);
    expect(silent.body.error).toBe(
      `The rerun dev of app ${app} (pid ${first.pid}) at ${moto.endpoint} no longer answers, though its process ` +
        `still runs. Stop it (Ctrl+C) and start it again with: rerun dev --app-name ${app}. This page keeps what it ` +
        `last showed, and reads again as soon as a rerun dev of ${app} answers.`,
    );
    expect(silent.body.stopped).toMatchObject({ appName: app, pid: first.pid, restart: `rerun dev --app-name ${app}` });

    // Then the process is gone too: every view says so, the same way.
    first.kill();
    await new Promise<void>((resolve) => first.once('exit', () => resolve()));
    for (const path of ['/api/overview', '/api/live', '/api/dead-letters?queue=normalize', '/api/inputs?day=undated']) {
      const gone = await get(path);
      expect(gone.status, path).toBe(503);
      expect(gone.body.error, path).toMatch(
        new RegExp(
          `^The rerun dev of app ${app} \\(pid ${first.pid}\\) at .+ has stopped: nothing answers there\\. Start it again with: rerun dev --app-name ${app}\\.`,
        ),
      );
      expect(gone.body.error, path).not.toContain('AWS_ENDPOINT_URL');
      expect(gone.body.stopped.processRunning, path).toBe(false);
    }

    // A new rerun dev of the app (a new emulator at a new endpoint): the console reads it, by itself.
    const b = await provisionTwoStagePipeline(testClients());
    second = holder();
    publish(env, app, b, awsEndpoint(), second.pid as number);
    let after = await get('/api/overview');
    for (let i = 0; i < 40 && after.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      after = await get('/api/overview');
    }
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({
      kind: 'dev',
      appName: app,
      outputBucket: b.stack.outputBucket,
      session: { pid: second.pid, endpoint: awsEndpoint() },
    });
    expect(stderr).toContain(`rerun ui: the rerun dev of app ${app} was restarted: now reading pid ${second.pid}`);
  }, 60_000);
});
