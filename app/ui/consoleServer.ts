import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { explainAwsError } from '../status/pipelineResources.js';
import type { ConsoleApi } from './consoleApi.js';
import { UNDATED } from './dayInputs.js';

/** Options of {@link startConsoleServer}. */
export interface ConsoleServerOptions {
  readonly api: ConsoleApi;
  /** @default '127.0.0.1' (loopback only) */
  readonly host?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** @default 32 random bytes, base64url */
  readonly token?: string;
}

/** A running console. */
export interface ConsoleServer {
  /** The URL to open, token included. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

const ASSETS = fileURLToPath(new URL('./assets/', import.meta.url));
/**
 * The files the console serves, by the path that asks for each, with their type: an explicit list
 * in a Map, so that a path such as `/assets/constructor` or `/assets/__proto__` names nothing (an
 * object used as a map answered them with its prototype's members and the request never ended).
 */
const ASSET_FILES: ReadonlyMap<string, { readonly file: string; readonly type: string }> = new Map([
  ['/', { file: 'index.html', type: 'text/html; charset=utf-8' }],
  ['/assets/index.html', { file: 'index.html', type: 'text/html; charset=utf-8' }],
  ['/assets/console.js', { file: 'console.js', type: 'text/javascript; charset=utf-8' }],
  ['/assets/console.css', { file: 'console.css', type: 'text/css; charset=utf-8' }],
]);

/**
 * Serves the console: its three static files and the read-only JSON API of {@link ConsoleApi}. Every
 * request needs the token (the `token` query parameter of the printed URL, then a cookie scoped to
 * this port, or an `X-Rerun-Token` header): without one it is refused with 401, with a wrong one
 * 403. Only GET is answered, and only for a Host naming the address it listens on (a page elsewhere
 * cannot reach it through DNS rebinding).
 *
 * @example
 * const server = await startConsoleServer({ api });
 * console.log(server.url); // http://127.0.0.1:43121/?token=...
 */
export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('base64url');
  let port = 0;
  const server = createServer((request, response) => {
    handle(request, response, { api: options.api, token, port, host }).catch((error: unknown) => {
      send(response, 500, { error: error instanceof Error ? error.message : String(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/?token=${token}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Context {
  readonly api: ConsoleApi;
  readonly token: string;
  readonly port: number;
  readonly host: string;
}

async function handle(request: IncomingMessage, response: ServerResponse, ctx: Context): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://console');
  if (!hostAllowed(request.headers.host, ctx)) return send(response, 403, { error: 'unexpected Host header' });
  const cookieName = `rerun_ui_${ctx.port}`;
  const given =
    url.searchParams.get('token') ??
    header(request, 'x-rerun-token') ??
    cookie(request.headers.cookie, cookieName) ??
    undefined;
  if (given === undefined) return send(response, 401, { error: 'token required: open the URL rerun ui printed' });
  if (!same(given, ctx.token)) return send(response, 403, { error: 'wrong token' });
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return send(response, 405, { error: 'the console is read-only' }, { Allow: 'GET, HEAD' });
  }
  if (url.pathname === '/' && url.searchParams.has('token')) {
    // The token moves into a cookie of this port, and out of the address bar and its history.
    const attributes = 'Path=/; HttpOnly; SameSite=Strict';
    response.writeHead(303, { Location: '/', 'Set-Cookie': `${cookieName}=${ctx.token}; ${attributes}` });
    response.end();
    return;
  }
  if (url.pathname.startsWith('/api/')) return api(url, response, ctx.api);
  const asset = ASSET_FILES.get(url.pathname);
  if (!asset) return send(response, 404, { error: 'not found' });
  response.writeHead(200, {
    'Content-Type': asset.type,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'",
  });
  response.end(await readFile(`${ASSETS}${asset.file}`));
}

async function api(url: URL, response: ServerResponse, consoleApi: ConsoleApi): Promise<void> {
  const q = (name: string) => url.searchParams.get(name) ?? undefined;
  const topology = consoleApi.source.target.topology;
  try {
    switch (url.pathname) {
      case '/api/overview':
        return send(response, 200, await consoleApi.overview());
      case '/api/days':
        return send(response, 200, await consoleApi.days(required(q('from'), 'from'), required(q('to'), 'to')));
      case '/api/inputs': {
        const day = required(q('day'), 'day');
        return send(
          response,
          200,
          await consoleApi.inputs(day === UNDATED ? UNDATED : day, q('after'), wholeNumber(q('limit'), 'limit', 50)),
        );
      }
      case '/api/output':
        return send(response, 200, await consoleApi.output(required(q('key'), 'key')));
      case '/api/live':
        return send(response, 200, await consoleApi.live(wholeNumber(q('after'), 'after', 0)));
      case '/api/dead-letters': {
        const worker = q('queue') === topology.summarize.name ? topology.summarize : topology.normalize;
        return send(response, 200, await consoleApi.deadLetters(worker));
      }
      default:
        return send(response, 404, { error: 'no such API' });
    }
  } catch (error) {
    if (
      error instanceof RangeError ||
      error instanceof TypeError ||
      (error as Error)?.name === 'PartitionWindowInvalidError'
    ) {
      return send(response, 400, { error: (error as Error).message });
    }
    const { target } = consoleApi.source;
    const explained = explainAwsError(error, { role: 'pipeline', name: target.appName, where: target.where, hint: '' });
    return send(response, 502, { error: explained instanceof Error ? explained.message : String(explained) });
  }
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new TypeError(`the ${name} parameter is required`);
  return value;
}

/**
 * A numeric query parameter: absent means `fallback`; anything but a whole number of at least 0
 * is refused (400) by name. `Number('abc')` is NaN, which answered 200 with an empty page.
 */
function wholeNumber(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,15}$/.test(value)) {
    throw new RangeError(`the ${name} parameter must be a whole number of at least 0 (got ${JSON.stringify(value)})`);
  }
  return Number(value);
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (response.headersSent) return;
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
    ...headers,
  });
  response.end(JSON.stringify(body));
}

function hostAllowed(hostHeader: string | undefined, ctx: Context): boolean {
  // Bound to another interface on purpose (--host): the token alone guards it.
  if (!isLoopback(ctx.host)) return true;
  return ['127.0.0.1', 'localhost', '[::1]'].some((name) => hostHeader === `${name}:${ctx.port}`);
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost';
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function cookie(cookies: string | undefined, name: string): string | undefined {
  for (const part of (cookies ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
