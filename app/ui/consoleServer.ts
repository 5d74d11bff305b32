import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { isOwnProcessRunning } from '../common/findDevSession.js';
import { explainAwsError, isConnectionError } from '../common/pipelineResources.js';
import type { ConsoleApi } from './consoleApi.js';
import { isLoopbackAddress } from './listenAddress.js';
import { stoppedDevSession } from './stoppedDevSession.js';

/** Options of {@link startConsoleServer}. */
export interface ConsoleServerOptions {
  readonly api: ConsoleApi;
  /** @default '127.0.0.1' (loopback only) */
  readonly host?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** @default 32 random bytes, base64url */
  readonly token?: string;
  /**
   * For a console of a `rerun dev` session: when its endpoint no longer answers, finds a newer running
   * `rerun dev` of the same app and returns the console's API over it (undefined when there is none).
   * Asked at most once per {@link REOPEN_INTERVAL_MS}.
   * @default none: the console waits for the same endpoint to answer again
   */
  readonly reopen?: (current: ConsoleApi) => Promise<ConsoleApi | undefined>;
  /** Whether the `rerun dev` process of a pid still runs. @default a signal 0 (isOwnProcessRunning) */
  readonly isAlive?: (pid: number) => boolean;
}

/** How often a stopped session's console looks for its successor. */
export const REOPEN_INTERVAL_MS = 2000;

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
 * The files the console serves, by the path that asks for each, with their type: the page, its
 * style, and its script, an ES module (console.js) with the modules it imports. An explicit list in
 * a Map, so that a path such as `/assets/constructor` or `/assets/__proto__` names nothing (an
 * object used as a map answered them with its prototype's members and the request never ended),
 * and any other file of the folder is refused.
 */
const ASSET_FILES: ReadonlyMap<string, { readonly file: string; readonly type: string }> = new Map([
  ['/', { file: 'index.html', type: 'text/html; charset=utf-8' }],
  ['/assets/index.html', { file: 'index.html', type: 'text/html; charset=utf-8' }],
  ['/assets/console.js', { file: 'console.js', type: 'text/javascript; charset=utf-8' }],
  ['/assets/consolePage.js', { file: 'consolePage.js', type: 'text/javascript; charset=utf-8' }],
  ['/assets/daysView.js', { file: 'daysView.js', type: 'text/javascript; charset=utf-8' }],
  ['/assets/queueViews.js', { file: 'queueViews.js', type: 'text/javascript; charset=utf-8' }],
  ['/assets/console.css', { file: 'console.css', type: 'text/css; charset=utf-8' }],
]);

/**
 * Serves the console: its static files (the page, its style and its script's modules) and the
 * read-only JSON API of {@link ConsoleApi}. The static files hold no data and are served to anyone
 * who reaches the port; every `/api/` path needs the token in an `X-Rerun-Token` header (the page
 * reads it once from its `?token=` and keeps it in the tab's sessionStorage): without one it is
 * refused with 401, with a wrong one 403. The token is never put in a cookie: browsers send a
 * cookie to every port of a host, so another server on 127.0.0.1 would receive it. Every response
 * forbids framing and caching. Only GET is answered, and only for a Host naming the address it
 * listens on (a page elsewhere cannot reach it through DNS rebinding).
 *
 * @example
 * const server = await startConsoleServer({ api });
 * console.log(server.url); // http://127.0.0.1:43121/?token=...
 */
export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('base64url');
  let port = 0;
  const live: LiveApi = { api: options.api, lastReopen: 0 };
  const isAlive = options.isAlive ?? isOwnProcessRunning;
  const server = createServer((request, response) => {
    handle(request, response, { live, reopen: options.reopen, isAlive, token, port, host }).catch((error: unknown) => {
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

/**
 * On every response, the page, its files, the API's answers and its refusals alike. The page builds
 * its DOM and SVG from its script (console.js and the modules it imports) with no inline script or
 * style, so a strict policy costs nothing; `frame-ancestors 'none'` (and X-Frame-Options for older
 * browsers) keeps another site from framing it; `no-referrer` keeps the `?token=` of the first load
 * out of the Referer of the page's own requests.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
} as const;

/** The API the console serves now: a newer `rerun dev` of the same app replaces a stopped one's. */
interface LiveApi {
  api: ConsoleApi;
  lastReopen: number;
  reopening?: Promise<ConsoleApi | undefined>;
}

interface Context {
  readonly live: LiveApi;
  readonly reopen: ConsoleServerOptions['reopen'];
  readonly isAlive: (pid: number) => boolean;
  readonly token: string;
  readonly port: number;
  readonly host: string;
}

async function handle(request: IncomingMessage, response: ServerResponse, ctx: Context): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://console');
  if (!hostAllowed(request.headers.host, ctx)) return send(response, 403, { error: 'unexpected Host header' });
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return send(response, 405, { error: 'the console is read-only' }, { Allow: 'GET, HEAD' });
  }
  if (url.pathname.startsWith('/api/')) {
    // The header only: a cookie would reach every port of this host, a query parameter the logs.
    const given = header(request, 'x-rerun-token');
    if (given === undefined) {
      return send(response, 401, { error: 'token required: open the URL rerun ui printed' });
    }
    if (!same(given, ctx.token)) return send(response, 403, { error: 'wrong token: open the URL rerun ui printed' });
    return api(url, response, ctx);
  }
  const asset = ASSET_FILES.get(url.pathname);
  if (!asset) return send(response, 404, { error: 'not found' });
  response.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': asset.type });
  response.end(await readFile(`${ASSETS}${asset.file}`));
}

async function api(url: URL, response: ServerResponse, ctx: Context, retried = false): Promise<void> {
  const consoleApi = ctx.live.api;
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
        return send(response, 200, await consoleApi.drillDown(day, q('after'), wholeNumber(q('limit'), 'limit', 50)));
      }
      case '/api/output':
        return send(response, 200, await consoleApi.output(required(q('key'), 'key')));
      case '/api/live':
        return send(response, 200, await consoleApi.live(wholeNumber(q('after'), 'after', 0)));
      case '/api/dead-letters': {
        // A worker by its name (normalize by default), else a user's window stage by its name.
        const queue = q('queue');
        const worker =
          queue === topology.summarize.name
            ? topology.summarize
            : queue === undefined || queue === topology.normalize.name
              ? topology.normalize
              : queue;
        return send(response, 200, await consoleApi.deadLetters(worker));
      }
      default:
        return send(response, 404, { error: 'no such API' });
    }
  } catch (error) {
    if (
      error instanceof RangeError ||
      error instanceof TypeError ||
      (error as Error)?.name === 'PartitionWindowInvalidError' ||
      (error as Error)?.name === 'WindowNameInvalidError'
    ) {
      return send(response, 400, { error: (error as Error).message });
    }
    const { target, session } = consoleApi.source;
    if (session && isConnectionError(error)) {
      // The rerun dev it was reading has stopped. A newer one of the same app takes its place; else
      // say so in the session's own words: the user set no AWS_ENDPOINT_URL to unset.
      if (!retried && (await reopened(ctx, consoleApi))) return api(url, response, ctx, true);
      const stopped = stoppedDevSession(session, ctx.isAlive(session.pid));
      return send(response, 503, { error: stopped.message, stopped });
    }
    const explained = explainAwsError(error, { role: 'pipeline', name: target.appName, where: target.where, hint: '' });
    return send(response, 502, { error: explained instanceof Error ? explained.message : String(explained) });
  }
}

/** Replaces a stopped session's API by its successor's, when one runs; asked once per interval. */
async function reopened(ctx: Context, stale: ConsoleApi): Promise<boolean> {
  const { live, reopen } = ctx;
  if (live.api !== stale) return true; // another request already moved on
  if (!reopen) return false;
  if (!live.reopening) {
    if (Date.now() - live.lastReopen < REOPEN_INTERVAL_MS) return false;
    live.lastReopen = Date.now();
    live.reopening = reopen(stale)
      .catch(() => undefined)
      .finally(() => {
        live.reopening = undefined;
      });
  }
  const next = await live.reopening;
  if (next && live.api === stale) live.api = next;
  return live.api !== stale;
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
    ...SECURITY_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    ...headers,
  });
  response.end(JSON.stringify(body));
}

function hostAllowed(hostHeader: string | undefined, ctx: Context): boolean {
  // Bound to another interface on purpose (--host with --insecure-plain-http): the token alone guards it.
  if (!isLoopbackAddress(ctx.host)) return true;
  const bound = ctx.host.includes(':') ? `[${ctx.host}]` : ctx.host;
  return ['127.0.0.1', 'localhost', '[::1]', bound].some((name) => hostHeader === `${name}:${ctx.port}`);
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
