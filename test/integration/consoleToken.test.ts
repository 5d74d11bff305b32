import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleApi } from '../../app/ui/consoleApi.js';
import { type ConsoleServer, startConsoleServer } from '../../app/ui/consoleServer.js';

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
