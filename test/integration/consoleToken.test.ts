import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../app/cli/dispatch.js';
import type { CliIo } from '../../app/common/command.js';
import type { ConsoleApi } from '../../app/ui/consoleApi.js';
import { type ConsoleServer, startConsoleServer } from '../../app/ui/consoleServer.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';

/**
 * Where the console's token travels and what guards the page: the real HTTP server over an API
 * that answers the overview only (the token checks and headers are the server's own, no pipeline
 * is needed behind it); then `rerun ui --host` run in process.
 */
describe('rerun ui: the token stays in a header, the page cannot be framed, --host needs an acknowledgement', () => {
  let server: ConsoleServer;
  const api = {
    source: { target: { topology: { normalize: { name: 'normalize' }, summarize: { name: 'summarize' } } } },
    async overview() {
      return { kind: 'aws' };
    },
  } as unknown as ConsoleApi;
  const base = () => `http://127.0.0.1:${server.port}`;
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${base()}${path}`, { headers, redirect: 'manual', signal: AbortSignal.timeout(5000) });

  beforeAll(async () => {
    server = await startConsoleServer({ api });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sets no cookie on any response: the printed URL, the page, its files, the API and its refusals', async () => {
    const token = { 'X-Rerun-Token': server.token };
    const responses = [
      await get(new URL(server.url).pathname + new URL(server.url).search),
      await get('/'),
      await get('/assets/console.js'),
      await get('/assets/console.css'),
      await get('/api/overview', token),
      await get('/api/overview'),
      await get('/api/overview', { 'X-Rerun-Token': 'wrong' }),
      await get('/api/nothing', token),
    ];
    for (const response of responses) {
      expect(response.headers.get('set-cookie'), response.url).toBeNull();
    }
    // The printed URL is the page itself, not a redirect that trades the token for something else.
    expect(responses[0]?.status).toBe(200);
    expect(await responses[0]?.text()).toContain('<script type="module" src="/assets/console.js">');
  });

  it('answers the API only with the token in the X-Rerun-Token header: 401 without it or with it only in a cookie of its port or the query, 403 with a wrong one', async () => {
    const ok = await get('/api/overview', { 'X-Rerun-Token': server.token });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ kind: 'aws' });
    const missing = await get('/api/overview');
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: string }).error).toContain('token required');
    expect((await get('/api/overview', { 'X-Rerun-Token': `${server.token}x` })).status).toBe(403);
    const cookie = await get('/api/overview', { Cookie: `rerun_ui_${server.port}=${server.token}` });
    expect(cookie.status).toBe(401);
    const query = await get(`/api/overview?token=${server.token}`);
    expect(query.status).toBe(401);
  });

  it('sends the security headers on the page, an asset, an API answer and a refusal, for a page with no inline script or style to break', async () => {
    for (const [path, headers] of [
      ['/', {}],
      ['/assets/console.js', {}],
      ['/api/overview', { 'X-Rerun-Token': server.token }],
      ['/api/overview', {}],
    ] as const) {
      const response = await get(path, headers);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
      expect(response.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('cache-control'), path).toBe('no-store');
    }
    const html = await (await get('/')).text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style\b/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/\son[a-z]+=/);
  });
});

describe('rerun ui --host', () => {
  function cliIo(signal: AbortSignal) {
    const out = { stdout: [] as string[], stderr: '' };
    const io: CliIo = {
      stdout: (line) => void out.stdout.push(line),
      stderr: (text) => {
        out.stderr += text;
      },
      env: {
        AWS_ENDPOINT_URL: awsEndpoint(),
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        // No rerun dev of this name is running: the console reads the buckets given.
        RERUN_APP_NAME: uniqueName('console-host'),
      },
      isTTY: false,
      signal,
    };
    return { io, out };
  }

  it('refuses an address other machines reach without --insecure-plain-http, naming the flag, and starts nothing; a loopback address such as 127.0.0.2 needs no flag and no warning', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10']) {
      const { io, out } = cliIo(new AbortController().signal);
      const code = await runCli(['ui', '--host', host], io);
      expect(code, host).toBe(2);
      expect(out.stderr, host).toContain('--insecure-plain-http');
      expect(out.stderr, host).toContain('unencrypted');
      expect(out.stdout, host).toEqual([]);
    }
    const s3 = testClients().s3;
    const input = uniqueName('ui-loop-in');
    const output = uniqueName('ui-loop-out');
    await s3.send(new CreateBucketCommand({ Bucket: input }));
    await s3.send(new CreateBucketCommand({ Bucket: output }));
    const ctrlC = new AbortController();
    const { io, out } = cliIo(ctrlC.signal);
    const running = runCli(['ui', '--host', '127.0.0.2', '--input-bucket', input, '--output-bucket', output], io);
    let ended = false;
    void running.finally(() => {
      ended = true;
    });
    // Until it prints its URL, or ends without one (a refused option must fail here, not time out).
    const deadline = Date.now() + 30_000;
    while (out.stdout.length === 0 && !ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const url = new URL((out.stdout[0] ?? '').replace(/^URL /, ''));
    expect(url.hostname, out.stderr).toBe('127.0.0.2');
    expect(out.stderr).not.toContain('WARNING');
    const overview = await fetch(`${url.origin}/api/overview`, {
      headers: { 'X-Rerun-Token': url.searchParams.get('token') ?? '' },
    });
    expect(overview.status).toBe(200);
    ctrlC.abort();
    expect(await running).toBe(0);
  });

  it('serves on 0.0.0.0 with --insecure-plain-http, warning on stderr that the token and data travel unencrypted', async () => {
    const s3 = testClients().s3;
    const input = uniqueName('ui-host-in');
    const output = uniqueName('ui-host-out');
    await s3.send(new CreateBucketCommand({ Bucket: input }));
    await s3.send(new CreateBucketCommand({ Bucket: output }));
    const ctrlC = new AbortController();
    const { io, out } = cliIo(ctrlC.signal);
    const running = runCli(
      ['ui', '--host', '0.0.0.0', '--insecure-plain-http', '--input-bucket', input, '--output-bucket', output],
      io,
    );
    let ended = false;
    void running.finally(() => {
      ended = true;
    });
    // Until it prints its URL, or ends without one (a refused option must fail here, not time out).
    const deadline = Date.now() + 30_000;
    while (out.stdout.length === 0 && !ended && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const url = new URL((out.stdout[0] ?? '').replace(/^URL /, ''));
    expect(url.hostname, out.stderr).toBe('0.0.0.0');
    expect(out.stderr).toMatch(/WARNING: .*plain HTTP.*the token and all the data .* travel unencrypted/);
    const page = await fetch(`http://127.0.0.1:${url.port}/`);
    expect(page.status).toBe(200);
    ctrlC.abort();
    expect(await running).toBe(0);
  });
});
