import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleApi } from '../../app/ui/consoleApi.js';
import { type ConsoleServer, startConsoleServer } from '../../app/ui/consoleServer.js';

const ASSETS = fileURLToPath(new URL('../../app/ui/assets/', import.meta.url));

/** The modules the page's script loads: console.js and, transitively, each module it imports. */
function pageModules(): string[] {
  const found = new Set<string>();
  const visit = (name: string) => {
    if (found.has(name)) return;
    found.add(name);
    const source = readFileSync(`${ASSETS}${name}`, 'utf8');
    for (const [, imported] of source.matchAll(/^import [^;]* from '\.\/([\w.]+)';$/gm)) visit(imported as string);
  };
  visit('console.js');
  return [...found];
}

/**
 * The real console server over an API that only records what reaches it: the requests below are
 * answered (or refused) by the server itself, so no pipeline is needed behind it.
 */
describe('rerun ui: hostile paths and query parameters', () => {
  let server: ConsoleServer;
  const calls: string[] = [];
  const api = {
    source: { target: { topology: { normalize: { name: 'normalize' }, summarize: { name: 'summarize' } } } },
    async drillDown(day: string, after: string | undefined, limit: number) {
      calls.push(`inputs ${day} ${after} ${limit}`);
      return { day, inputs: [] };
    },
    async live(after: number) {
      calls.push(`live ${after}`);
      return { from: 'dev', queues: [], runs: [], notes: [] };
    },
  } as unknown as ConsoleApi;
  const get = (path: string) =>
    fetch(`http://127.0.0.1:${server.port}${path}`, {
      headers: { 'X-Rerun-Token': server.token },
      // "Never answers" must fail this test, not hang it.
      signal: AbortSignal.timeout(5000),
    });

  beforeAll(async () => {
    server = await startConsoleServer({ api });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers 404 for an asset path that names a member of Object's prototype, and still serves its own files", async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'nothing.js']) {
      const response = await get(`/assets/${name}`);
      expect(response.status, name).toBe(404);
      expect(await response.json(), name).toEqual({ error: 'not found' });
    }
    for (const [path, type] of [
      ['/', 'text/html'],
      ['/assets/console.js', 'text/javascript'],
      ['/assets/console.css', 'text/css'],
    ] as const) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toContain(type);
    }
  });

  it("serves every module the page's script imports, as JavaScript (a module the list forgets breaks the page)", async () => {
    const modules = pageModules();
    expect(modules.length).toBeGreaterThan(1);
    for (const name of modules) {
      const response = await get(`/assets/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-type'), name).toContain('text/javascript');
      expect(await response.text(), name).toBe(readFileSync(`${ASSETS}${name}`, 'utf8'));
    }
  });

  it('refuses a file of the assets folder that the page does not load', async () => {
    const served = new Set([...pageModules(), 'index.html', 'console.css']);
    const others = readdirSync(ASSETS).filter((name) => !served.has(name));
    for (const name of [...others, '../consoleServer.ts', '..%2FconsoleServer.ts', 'console.js.map']) {
      expect((await get(`/assets/${name}`)).status, name).toBe(404);
    }
  });

  it('refuses a numeric query parameter that is not a whole number with 400 naming it, before the API runs', async () => {
    calls.length = 0;
    for (const [path, name] of [
      ['/api/inputs?day=2026-04-07&limit=abc', 'limit'],
      ['/api/inputs?day=2026-04-07&limit=-5', 'limit'],
      ['/api/inputs?day=2026-04-07&limit=1e3', 'limit'],
      ['/api/inputs?day=2026-04-07&limit=', 'limit'],
      ['/api/live?after=abc', 'after'],
    ] as const) {
      const response = await get(path);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as { error: string }).error, path).toMatch(
        new RegExp(`the ${name} parameter must be a whole number`),
      );
    }
    expect(calls).toEqual([]);
    expect((await get('/api/inputs?day=2026-04-07&limit=7')).status).toBe(200);
    expect((await get('/api/inputs?day=2026-04-07')).status).toBe(200);
    expect((await get('/api/live?after=3')).status).toBe(200);
    expect(calls).toEqual(['inputs 2026-04-07 undefined 7', 'inputs 2026-04-07 undefined 50', 'live 3']);
  });
});
