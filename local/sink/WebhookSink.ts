import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashPayload } from '../../src/ledger/payloadHash.js';
import { checkOptions, type OptionNames } from '../../src/options/checkOptions.js';
import { LocalSetupError } from '../errors.js';

/** The header that carries the dedupe key (the convention of Stripe and the IETF Idempotency-Key draft). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** One recorded delivery (per Idempotency-Key; every keyless POST is its own entry). */
export interface SinkDelivery {
  /** The Idempotency-Key, or null when the POST had none. */
  readonly key: string | null;
  /** True when the POST had no Idempotency-Key: the sink cannot discard repeats of such a delivery. */
  readonly missingKey: boolean;
  /** Request path of the first POST. */
  readonly path: string;
  /** Body of the first applied POST: parsed JSON, or the raw text when it is not JSON. */
  readonly body: unknown;
  /** Every POST with this key, including repeats and injected failures. */
  readonly attempts: number;
  /** Whether the sink applied (accepted) the delivery; false while only injected failures came. */
  readonly applied: boolean;
  /** POSTs answered with the stored first response instead of being applied again. */
  readonly repeats: number;
  /** Repeats whose body differed from the applied one (answered 422, as Stripe does). */
  readonly conflicts: number;
  /** The first response, replayed to every repeat. */
  readonly response: { readonly status: number; readonly body: string } | undefined;
  /** ISO time of the first POST with this key. */
  readonly firstReceivedAt: string;
}

/** What a fault injector sees. */
export interface SinkRequestInfo {
  readonly key: string | null;
  readonly path: string;
  /** 1 for the first POST with this key. */
  readonly attempt: number;
}

/** A reply that replaces applying the delivery (nothing is applied; the key can be sent again). */
export interface SinkFault {
  readonly status: number;
  /** @default '' */
  readonly body?: string;
  /** Wait this long before answering (for client timeouts). @default 0 */
  readonly delayMs?: number;
}

/** Options of {@link startWebhookSink}. */
export interface WebhookSinkOptions {
  /** @default 0 (a free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /**
   * Answer the first N POSTs of every key with 503 without applying them.
   * @default 0
   */
  failFirst?: number;
  /**
   * Fault injection per POST: return a fault to answer with it instead of applying (checked after
   * `failFirst`, before the repeat check). @default undefined
   */
  inject?: (request: SinkRequestInfo) => SinkFault | undefined;
  /**
   * Clock for `firstReceivedAt`, epoch milliseconds.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Largest accepted body; larger ones get 413 and are not recorded.
   * @default 1_048_576
   */
  maxBodyBytes?: number;
}

/** The names of {@link WebhookSinkOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const WEBHOOK_SINK_OPTION_NAMES = {
  failFirst: true,
  host: true,
  inject: true,
  maxBodyBytes: true,
  now: true,
  port: true,
} as const satisfies OptionNames<WebhookSinkOptions>;

/** A running {@link startWebhookSink}. */
export interface WebhookSink {
  /** Base URL, e.g. `http://127.0.0.1:41234`; POST to any path under it. */
  readonly url: string;
  /** The recorded deliveries, in order of first arrival. Same data as `GET {url}/deliveries`. */
  deliveries(): SinkDelivery[];
  /** Stops listening and closes open connections. */
  stop(): Promise<void>;
}

interface MutableDelivery {
  key: string | null;
  missingKey: boolean;
  path: string;
  body: unknown;
  bodyHash: string | undefined;
  attempts: number;
  applied: boolean;
  repeats: number;
  conflicts: number;
  response: { status: number; body: string } | undefined;
  firstReceivedAt: string;
}

/**
 * A small HTTP receiver that behaves like a well-built webhook endpoint: it records every POST, applies
 * each Idempotency-Key once, answers a repeated key with the FIRST response (same status and body) and
 * counts the repeat. `GET /deliveries` returns what it recorded as JSON. `rerun dev` runs one as the
 * local notification target; tests use it to prove an effect was applied exactly once.
 *
 * @example
 * const sink = await startWebhookSink();
 * await fetch(`${sink.url}/notify`, { method: 'POST', headers: { 'Idempotency-Key': 'k1' }, body: '{}' });
 * sink.deliveries(); // [{ key: 'k1', attempts: 1, repeats: 0, applied: true, ... }]
 * await sink.stop();
 */
export async function startWebhookSink(options: WebhookSinkOptions = {}): Promise<WebhookSink> {
  checkOptions('startWebhookSink', options, WEBHOOK_SINK_OPTION_NAMES, (m) => new LocalSetupError(m));
  const host = options.host ?? '127.0.0.1';
  const failFirst = options.failFirst ?? 0;
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const now = options.now ?? Date.now;
  const byKey = new Map<string, MutableDelivery>();
  const ordered: MutableDelivery[] = [];
  let appliedCount = 0;

  const snapshot = (): SinkDelivery[] =>
    ordered.map(({ bodyHash: _hash, response, ...rest }) => ({
      ...rest,
      response: response === undefined ? undefined : { ...response },
    }));

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? '/', 'http://sink').pathname;
    if (request.method === 'GET' && path === '/deliveries') {
      return reply(response, 200, JSON.stringify(snapshot()));
    }
    if (request.method !== 'POST') return reply(response, 404, JSON.stringify({ error: 'POST to any path' }));

    const raw = await readBody(request, maxBodyBytes);
    if (raw === undefined) return reply(response, 413, JSON.stringify({ error: 'body too large' }));
    const header = request.headers[IDEMPOTENCY_KEY_HEADER];
    const key = typeof header === 'string' && header.length > 0 ? header : null;
    const body = parseBody(raw);

    let delivery = key === null ? undefined : byKey.get(key);
    if (delivery === undefined) {
      delivery = {
        key,
        missingKey: key === null,
        path,
        body,
        bodyHash: undefined,
        attempts: 0,
        applied: false,
        repeats: 0,
        conflicts: 0,
        response: undefined,
        firstReceivedAt: new Date(now()).toISOString(),
      };
      if (key !== null) byKey.set(key, delivery);
      ordered.push(delivery);
    }
    delivery.attempts += 1;
    const fault =
      delivery.attempts <= failFirst
        ? { status: 503, body: JSON.stringify({ error: 'injected failure' }) }
        : options.inject?.({ key, path, attempt: delivery.attempts });
    if (fault) {
      if (fault.delayMs) await sleep(fault.delayMs);
      return reply(response, fault.status, fault.body ?? '');
    }

    const bodyHash = hashBody(body);
    if (delivery.applied && delivery.response) {
      if (bodyHash !== delivery.bodyHash) {
        // Stripe answers a reused key with different parameters with an error instead of replaying.
        delivery.conflicts += 1;
        return reply(response, 422, JSON.stringify({ error: 'Idempotency-Key reused with a different body', key }));
      }
      delivery.repeats += 1;
      return reply(response, delivery.response.status, delivery.response.body);
    }
    appliedCount += 1;
    delivery.applied = true;
    delivery.body = body;
    delivery.bodyHash = bodyHash;
    delivery.response = { status: 200, body: JSON.stringify({ received: true, key, delivery: appliedCount }) };
    return reply(response, delivery.response.status, delivery.response.body);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) reply(response, 500, JSON.stringify({ error: String(error) }));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${host}:${port}`,
    deliveries: snapshot,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function reply(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    // Keep reading past the limit so the client gets the 413 instead of a reset connection.
    if (size > maxBytes) {
      tooLarge = true;
    } else {
      chunks.push(chunk as Buffer);
    }
  }
  return tooLarge ? undefined : Buffer.concat(chunks).toString('utf8');
}

function parseBody(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function hashBody(body: unknown): string {
  try {
    return hashPayload(body);
  } catch {
    return `raw:${String(body)}`;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
