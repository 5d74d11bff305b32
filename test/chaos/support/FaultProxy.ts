import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { classifyAwsRequest, type RequestIdentity, Service } from './awsRequest.js';
import { type CannedResponse, internalError, jsonError, s3Error, THROTTLING_CODES } from './faultResponses.js';
import { createPrng, type Prng } from './prng.js';

/** The faults a {@link FaultProxy} injects. */
export const FaultKind = {
  /** 500 InternalError in the service's error shape. */
  ERROR_500: 'error-500',
  /** S3 503 SlowDown (XML). */
  SLOW_DOWN_503: 'slowdown-503',
  /** SQS/DynamoDB throttling (400 + ThrottlingException, ProvisionedThroughputExceededException, ...); 429 for plain HTTP. */
  THROTTLE: 'throttle',
  /** S3 409 ConditionalRequestConflict on a conditional write (If-None-Match / If-Match). */
  CONFLICT_409: 'conflict-409',
  /** The connection is reset before the request reaches the server: nothing was applied. */
  RESET_BEFORE: 'reset-before',
  /** The server applied the request, then the connection is reset: the client never sees the answer. */
  RESET_AFTER: 'reset-after',
  /** S3 GetObject: the headers and part of the body arrive, then the connection is reset. */
  RESET_MID_BODY: 'reset-mid-body',
  /** The request is delayed before it is forwarded. */
  LATENCY: 'latency',
  /** The request is held without an answer for `hangMs`, then the connection is dropped. */
  TIMEOUT: 'timeout',
} as const;
export type FaultKind = (typeof FaultKind)[keyof typeof FaultKind];

/** Probability per request of each fault, among the requests it applies to. The sum must not exceed 1. */
export type FaultRates = Partial<Record<FaultKind, number>>;

/** What to inject and how hard. */
export interface FaultPlan {
  /** @default {} (no faults: a counting proxy) */
  readonly rates?: FaultRates;
  /** Delay added by {@link FaultKind.LATENCY}, uniform in [min, max] ms. @default [50, 400] */
  readonly latencyMs?: readonly [number, number];
  /** How long {@link FaultKind.TIMEOUT} holds a request before dropping the connection. @default 5000 */
  readonly hangMs?: number;
  /**
   * A fixed delay added to every request of a service, before it is forwarded: a model of the
   * network and service latency of the real thing (not a fault, not counted). @default none
   */
  readonly serviceLatencyMs?: Readonly<Partial<Record<Service, number>>>;
}

/** A request as the proxy saw it (also what an {@link Interceptor} receives). */
export interface ProxyLogEntry extends RequestIdentity {
  /** 1-based, in arrival order, per proxy. */
  readonly id: number;
  readonly method: string;
  readonly url: string;
  /** The fault injected, if any. */
  fault?: FaultKind;
  /** The error code of an injected error answer. */
  faultCode?: string;
  /** Status the client received (undefined when the connection was dropped). */
  status?: number;
  /** Whether the request reached the upstream server. */
  forwarded: boolean;
  /** Whether the proxy dropped the connection (a fault or an interceptor). */
  dropped: boolean;
  requestBodyBytes: number;
  /** Body bytes of the upstream answer (what the client read, or would have read). */
  responseBodyBytes: number;
  /** The upstream answer's body as text, for JSON-protocol services and plain HTTP (capped at 64 KiB). */
  responseText?: string;
}

/** Where an {@link Interceptor} is called: before the request is forwarded, or after the upstream answer arrived. */
export type InterceptPhase = 'before-forward' | 'after-response';

/**
 * Called for every request at both phases. Return `drop` to reset the connection (after awaiting
 * whatever must happen first, e.g. killing the client process): at `before-forward` the request is
 * then never applied, at `after-response` it was applied but the client never sees the answer.
 * A request the plan resets after the server applied it ({@link FaultKind.RESET_AFTER}) reaches
 * `after-response` too, with `entry.fault` set: its connection drops whatever the interceptor answers.
 */
export type Interceptor = (
  entry: ProxyLogEntry,
  phase: InterceptPhase,
) => 'continue' | 'drop' | Promise<'continue' | 'drop'>;

/** Options of {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  /** Where requests go, e.g. `http://127.0.0.1:5000` (moto) or a webhook sink. */
  readonly upstream: string;
  /** Seed of the fault decisions. @default 1 */
  readonly seed?: number;
  /** @default no faults */
  readonly plan?: FaultPlan;
  /** @default none */
  readonly intercept?: Interceptor;
  /** Names requests; AWS SDK requests are recognised by default, anything else is `HTTP`. @default classifyAwsRequest */
  readonly classify?: typeof classifyAwsRequest;
  /** Keep every request in {@link FaultProxy.log}. @default true */
  readonly keepLog?: boolean;
  /**
   * Called once per request when the proxy is done with it, with when it arrived and ended (epoch
   * ms): `CHAOS_DEBUG` prints each one, to tell what a receive that died was waiting for.
   * @default none
   */
  readonly onRequestDone?: (
    entry: ProxyLogEntry,
    timing: { readonly startedAt: number; readonly endedAt: number },
  ) => void;
}

/** Totals of a {@link FaultProxy}. */
export interface FaultProxyStats {
  requests: number;
  byService: Record<string, number>;
  byOperation: Record<string, number>;
  faults: Record<string, number>;
  faultCodes: Record<string, number>;
  responseBodyBytes: Record<string, number>;
  requestBodyBytes: Record<string, number>;
}

const JSON_BODY_CAPTURE_BYTES = 64 * 1024;

/**
 * An HTTP proxy on 127.0.0.1 in front of the emulator (or the webhook sink) that injects seeded,
 * rate-controlled faults at the HTTP level and counts every request by service and operation.
 * Clients point their endpoint at {@link url}; the product code is unchanged, its SDK clients retry
 * as configured and the pipeline's idempotency must absorb the rest.
 *
 * @example
 * const proxy = await FaultProxy.start({ upstream: moto.endpoint, seed: 7, plan: { rates: { 'reset-after': 0.05 } } });
 * const clients = createAwsClients({ endpoint: proxy.url });
 * // ... run the pipeline ...
 * proxy.stats().faults; // { 'reset-after': 12 }
 * await proxy.stop();
 */
export class FaultProxy {
  readonly url: string;
  readonly log: ProxyLogEntry[] = [];
  private plan: FaultPlan;
  private intercept: Interceptor | undefined;
  private readonly rng: Prng;
  private readonly totals: FaultProxyStats = emptyStats();
  private open = 0;
  /** The requests being handled now, with when each arrived (for a drain that never ends). */
  private readonly openEntries = new Map<number, { entry: ProxyLogEntry; since: number }>();
  private lastActivity = Date.now();
  private sequence = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    private readonly upstream: URL,
    private readonly agent: Agent,
    private readonly options: FaultProxyOptions,
  ) {
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    this.plan = options.plan ?? {};
    this.intercept = options.intercept;
    this.rng = createPrng(options.seed ?? 1);
    validatePlan(this.plan);
  }

  /** Starts a proxy on a free loopback port. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const server = createServer();
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new FaultProxy(server, new URL(options.upstream), agent, options);
    server.on('connection', (socket) => {
      proxy.sockets.add(socket);
      socket.once('close', () => proxy.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      proxy.handle(req, res).catch(() => destroyConnection(req));
    });
    return proxy;
  }

  /** Requests being handled now. */
  get inFlight(): number {
    return this.open;
  }

  /**
   * Requests in flight that may be doing work: all but the SQS polls (ReceiveMessage,
   * GetQueueAttributes). A poll holds no work of its own: once SQS hands it a message, the queue
   * counts that message as in flight.
   */
  get inFlightWork(): number {
    let n = 0;
    for (const { entry } of this.openEntries.values()) {
      const poll =
        entry.service === Service.SQS &&
        (entry.operation === 'ReceiveMessage' || entry.operation === 'GetQueueAttributes');
      if (!poll) n++;
    }
    return n;
  }

  /** The requests in flight, oldest first: `S3:PutObject 12.3 s (fault timeout, forwarded)`. */
  describeInFlight(): string[] {
    const now = Date.now();
    return [...this.openEntries.values()].map(
      ({ entry, since }) =>
        `${entry.service}:${entry.operation} ${((now - since) / 1000).toFixed(1)} s` +
        ` (${entry.fault ? `fault ${entry.fault}, ` : ''}${entry.forwarded ? 'forwarded' : 'not forwarded'})`,
    );
  }

  /** Replaces the fault plan (e.g. none for a clean phase). */
  setPlan(plan: FaultPlan): void {
    validatePlan(plan);
    this.plan = plan;
  }

  /** Replaces the interceptor (undefined removes it). */
  setInterceptor(intercept: Interceptor | undefined): void {
    this.intercept = intercept;
  }

  /** A copy of the totals since start (or the last {@link resetStats}). */
  stats(): FaultProxyStats {
    return structuredClone(this.totals);
  }

  /** Clears the totals and the log. */
  resetStats(): void {
    Object.assign(this.totals, emptyStats());
    this.log.length = 0;
  }

  /** Resolves once no request is in flight and none arrived for `quietMs`. */
  async whenQuiet(quietMs: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.open > 0 || Date.now() - this.lastActivity < quietMs) {
      if (Date.now() > deadline)
        throw new Error(`proxy ${this.url} still busy after ${timeoutMs} ms (${this.open} in flight)`);
      await sleep(50);
    }
  }

  /** Stops listening and closes every connection. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.agent.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.open++;
    this.lastActivity = Date.now();
    const identity = (this.options.classify ?? classifyAwsRequest)({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
    });
    const entry: ProxyLogEntry = {
      ...identity,
      id: ++this.sequence,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      forwarded: false,
      dropped: false,
      requestBodyBytes: 0,
      responseBodyBytes: 0,
    };
    const startedAt = Date.now();
    this.openEntries.set(entry.id, { entry, since: startedAt });
    try {
      await this.process(req, res, entry);
    } finally {
      this.openEntries.delete(entry.id);
      this.open--;
      this.lastActivity = Date.now();
      this.record(entry);
      this.options.onRequestDone?.(entry, { startedAt, endedAt: this.lastActivity });
    }
  }

  private async process(req: IncomingMessage, res: ServerResponse, entry: ProxyLogEntry): Promise<void> {
    const { gone, dispose } = closed(req);
    try {
      await this.processBody(req, res, entry, gone);
    } finally {
      dispose();
    }
  }

  private async processBody(
    req: IncomingMessage,
    res: ServerResponse,
    entry: ProxyLogEntry,
    gone: Promise<void>,
  ): Promise<void> {
    const body = await readBody(req);
    if (body === undefined) {
      // The client went away mid-request (e.g. it was killed): nothing reaches the server.
      entry.dropped = true;
      return;
    }
    entry.requestBodyBytes = body.byteLength;
    if ((await this.intercept?.(entry, 'before-forward')) === 'drop') return drop(req, entry);
    const latency = this.plan.serviceLatencyMs?.[entry.service] ?? 0;
    if (latency > 0) await sleep(latency);

    const fault = this.chooseFault(entry);
    if (fault) entry.fault = fault;
    const requestId = `chaos-${entry.id}`;
    switch (fault) {
      case FaultKind.ERROR_500:
        return answer(res, entry, internalError(entry, requestId));
      case FaultKind.SLOW_DOWN_503:
        return answer(res, entry, s3Error(503, 'SlowDown', 'Please reduce your request rate.', requestId));
      case FaultKind.THROTTLE:
        return answer(res, entry, this.throttle(entry, requestId));
      case FaultKind.CONFLICT_409:
        return answer(
          res,
          entry,
          s3Error(
            409,
            'ConditionalRequestConflict',
            'A conflicting conditional operation is currently in progress against this resource. Please try again.',
            requestId,
          ),
        );
      case FaultKind.RESET_BEFORE:
        return drop(req, entry);
      case FaultKind.TIMEOUT:
        await Promise.race([sleep(this.plan.hangMs ?? 5000), gone]);
        return drop(req, entry);
      case FaultKind.LATENCY: {
        const [min, max] = this.plan.latencyMs ?? [50, 400];
        await sleep(this.rng.int(min, max));
        break;
      }
      default:
        break;
    }

    const upstream = await this.forward(req, body, entry);
    const buffer =
      this.intercept !== undefined || fault === FaultKind.RESET_AFTER || fault === FaultKind.RESET_MID_BODY;
    if (!buffer) return this.relay(upstream, res, entry, gone);

    const chunks: Buffer[] = [];
    for await (const chunk of upstream) chunks.push(chunk as Buffer);
    const payload = Buffer.concat(chunks);
    entry.responseBodyBytes = payload.byteLength;
    this.capture(entry, upstream, payload);
    if (fault === FaultKind.RESET_AFTER) {
      // The server applied it: the interceptor still sees the answer the client never gets (a
      // ReceiveMessage's messages are then in flight with nobody holding them). The connection drops
      // whatever it answers.
      await this.intercept?.(entry, 'after-response');
      return drop(req, entry);
    }
    if ((await this.intercept?.(entry, 'after-response')) === 'drop') return drop(req, entry);
    const status = upstream.statusCode ?? 502;
    entry.status = status;
    // A body too short to cut (a 304, an empty object) is relayed whole: that request had no fault.
    if (fault === FaultKind.RESET_MID_BODY && payload.byteLength <= 1) delete entry.fault;
    if (fault === FaultKind.RESET_MID_BODY && payload.byteLength > 1) {
      res.writeHead(status, relayHeaders(upstream));
      res.write(payload.subarray(0, Math.floor(payload.byteLength / 2)));
      await sleep(20);
      return drop(req, entry);
    }
    res.writeHead(status, relayHeaders(upstream));
    res.end(payload);
  }

  private chooseFault(entry: RequestIdentity): FaultKind | undefined {
    const rates = this.plan.rates ?? {};
    const r = this.rng.next();
    let cumulative = 0;
    for (const kind of Object.values(FaultKind)) {
      const rate = rates[kind] ?? 0;
      if (rate <= 0 || !applies(kind, entry)) continue;
      cumulative += rate;
      if (r < cumulative) return kind;
    }
    return undefined;
  }

  private throttle(entry: ProxyLogEntry, requestId: string): CannedResponse {
    if (entry.service === Service.DYNAMODB || entry.service === Service.SQS) {
      const code = this.rng.pick(THROTTLING_CODES[entry.service]);
      return jsonError(entry.service, 400, code, 'Rate exceeded', requestId);
    }
    return {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '0' },
      body: '{"error":"too many requests"}',
      code: 'TooManyRequests',
    };
  }

  private forward(req: IncomingMessage, body: Buffer, entry: ProxyLogEntry): Promise<IncomingMessage> {
    entry.forwarded = true;
    const headers = { ...req.headers, 'content-length': String(body.byteLength) };
    delete headers['transfer-encoding'];
    return new Promise((resolve, reject) => {
      const upstream = httpRequest(
        {
          host: this.upstream.hostname,
          port: this.upstream.port,
          method: req.method,
          path: req.url,
          headers,
          agent: this.agent,
        },
        resolve,
      );
      upstream.once('error', reject);
      upstream.end(body);
    });
  }

  private async relay(
    upstream: IncomingMessage,
    res: ServerResponse,
    entry: ProxyLogEntry,
    gone: Promise<void>,
  ): Promise<void> {
    entry.status = upstream.statusCode ?? 502;
    res.writeHead(entry.status, relayHeaders(upstream));
    const captured: Buffer[] = [];
    const capture = entry.service !== Service.S3;
    let capturedBytes = 0;
    try {
      for await (const chunk of upstream) {
        const buffer = chunk as Buffer;
        entry.responseBodyBytes += buffer.byteLength;
        if (capture && capturedBytes < JSON_BODY_CAPTURE_BYTES) {
          captured.push(buffer);
          capturedBytes += buffer.byteLength;
        }
        if (!res.write(buffer)) await Promise.race([once(res, 'drain'), gone]);
        if (res.destroyed) {
          upstream.destroy();
          return;
        }
      }
      res.end();
    } finally {
      this.capture(entry, upstream, Buffer.concat(captured));
    }
  }

  private capture(entry: ProxyLogEntry, upstream: IncomingMessage, payload: Buffer): void {
    if (entry.service === Service.S3) return;
    const type = String(upstream.headers['content-type'] ?? '');
    if (/json|text/.test(type) || entry.service !== Service.HTTP) {
      entry.responseText = payload.subarray(0, JSON_BODY_CAPTURE_BYTES).toString('utf8');
    }
  }

  private record(entry: ProxyLogEntry): void {
    const t = this.totals;
    t.requests++;
    t.byService[entry.service] = (t.byService[entry.service] ?? 0) + 1;
    const op = `${entry.service}:${entry.operation}`;
    t.byOperation[op] = (t.byOperation[op] ?? 0) + 1;
    if (entry.fault) t.faults[entry.fault] = (t.faults[entry.fault] ?? 0) + 1;
    if (entry.faultCode) t.faultCodes[entry.faultCode] = (t.faultCodes[entry.faultCode] ?? 0) + 1;
    t.responseBodyBytes[entry.service] = (t.responseBodyBytes[entry.service] ?? 0) + entry.responseBodyBytes;
    t.requestBodyBytes[entry.service] = (t.requestBodyBytes[entry.service] ?? 0) + entry.requestBodyBytes;
    if (this.options.keepLog ?? true) this.log.push(entry);
  }
}

/** Which requests a fault can hit. */
function applies(kind: FaultKind, r: RequestIdentity): boolean {
  switch (kind) {
    case FaultKind.SLOW_DOWN_503:
      return r.service === Service.S3;
    case FaultKind.CONFLICT_409:
      return r.service === Service.S3 && r.conditionalWrite;
    case FaultKind.RESET_MID_BODY:
      return r.service === Service.S3 && r.operation === 'GetObject';
    default:
      return true;
  }
}

function validatePlan(plan: FaultPlan): void {
  const rates = plan.rates ?? {};
  const known = new Set<string>(Object.values(FaultKind));
  for (const [kind, rate] of Object.entries(rates)) {
    if (!known.has(kind)) throw new Error(`unknown fault kind "${kind}" (known: ${[...known].join(', ')})`);
    if (typeof rate !== 'number' || rate < 0 || rate > 1) throw new Error(`fault rate of ${kind} must be in [0, 1]`);
  }
  const sum = Object.values(rates).reduce((a, b) => a + (b ?? 0), 0);
  if (sum > 1) throw new Error(`fault rates add up to ${sum}, more than 1`);
}

function answer(res: ServerResponse, entry: ProxyLogEntry, canned: CannedResponse): void {
  entry.status = canned.status;
  entry.faultCode = canned.code;
  const body = entry.method === 'HEAD' ? '' : canned.body;
  res.writeHead(canned.status, { ...canned.headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

function drop(req: IncomingMessage, entry: ProxyLogEntry): void {
  entry.dropped = true;
  destroyConnection(req);
}

function destroyConnection(req: IncomingMessage): void {
  // destroy() (a FIN, "socket hang up" at the client) rather than resetAndDestroy() (an RST): on
  // Node 20 a reset socket can stay registered and make the process spin at exit. Both are the
  // connection errors the SDK retries.
  req.socket.destroy();
}

/** Hop-by-hop headers are the proxy's own business; framing is redone by Node. */
function relayHeaders(upstream: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value === undefined) continue;
    if (['connection', 'keep-alive', 'transfer-encoding'].includes(name)) continue;
    headers[name] = value;
  }
  return headers;
}

/** The whole request body, or undefined when the client closed the connection before sending it all. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of req) chunks.push(chunk as Buffer);
  } catch {
    return undefined;
  }
  return req.complete ? Buffer.concat(chunks) : undefined;
}

/** A promise settled when the client's connection closes, and the way to stop listening (keep-alive sockets serve many requests). */
function closed(req: IncomingMessage): { gone: Promise<void>; dispose: () => void } {
  const socket = req.socket;
  let listener: (() => void) | undefined;
  const gone = new Promise<void>((resolve) => {
    if (socket.destroyed) return resolve();
    listener = () => resolve();
    socket.once('close', listener);
  });
  return { gone, dispose: () => listener && socket.off('close', listener) };
}

function once(emitter: ServerResponse, event: string): Promise<void> {
  return new Promise((resolve) => emitter.once(event, () => resolve()));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Totals before any request. */
export function emptyStats(): FaultProxyStats {
  return {
    requests: 0,
    byService: {},
    byOperation: {},
    faults: {},
    faultCodes: {},
    responseBodyBytes: {},
    requestBodyBytes: {},
  };
}
