import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { RerunError, WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';

/** `AWS_ENDPOINT_URL` (or another endpoint) cannot be used: the message names the cause and the fix. */
export class EndpointUnusableError extends RerunError {
  readonly endpoint: string;
  constructor(endpoint: string, message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
    this.name = 'EndpointUnusableError';
    this.endpoint = endpoint;
  }
}

/** Options of {@link checkEndpoint}. */
export interface CheckEndpointOptions {
  /**
   * How long the endpoint may take to answer.
   * @default 5000
   */
  readonly timeoutMs?: number;
  /** Where the endpoint came from, for the messages. @default 'AWS_ENDPOINT_URL' */
  readonly source?: string;
}

/** The names of {@link CheckEndpointOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const CHECK_ENDPOINT_OPTION_NAMES = {
  source: true,
  timeoutMs: true,
} as const satisfies OptionNames<CheckEndpointOptions>;

/**
 * Checks, in one request and a few seconds at most, that an endpoint is an AWS API a client can talk
 * to, so that a wrong setting fails at once with what to do, instead of as `TypeError: Invalid URL`,
 * a minute and a half of SDK retries against a port that never answers, or "bucket does not exist"
 * from a web server. Refuses: an endpoint without an `http://` or `https://` scheme; one where nothing
 * listens, whose host is unknown, or that does not answer within `timeoutMs`; and a server whose
 * answer carries none of AWS's marks (an `x-amz-request-id` / `x-amzn-RequestId` / `x-amz-id-2`
 * header, or an S3 XML body).
 *
 * @example
 * await checkEndpoint(process.env.AWS_ENDPOINT_URL ?? '');
 */
export async function checkEndpoint(endpoint: string, options: CheckEndpointOptions = {}): Promise<void> {
  checkOptions('checkEndpoint', options, CHECK_ENDPOINT_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const source = options.source ?? 'AWS_ENDPOINT_URL';
  const timeoutMs = options.timeoutMs ?? 5000;
  const shown = `${source}=${endpoint}`;
  if (!/^https?:\/\//i.test(endpoint)) {
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(endpoint)?.[1];
    throw new EndpointUnusableError(
      endpoint,
      scheme
        ? `${shown} uses the scheme "${scheme}"; an AWS endpoint is http:// or https://.`
        : `${shown} has no scheme: write http://${endpoint} (or https://${endpoint}).`,
    );
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch (error) {
    throw new EndpointUnusableError(endpoint, `${shown} is not a valid URL.`, { cause: error });
  }

  let response: PreflightResponse;
  try {
    response = await getRoot(url, timeoutMs);
  } catch (error) {
    throw new EndpointUnusableError(endpoint, unreachableMessage(shown, error, timeoutMs), { cause: error });
  }
  if (!speaksAws(response.headers, response.body)) {
    const type = response.headers['content-type'] ?? 'no content type';
    throw new EndpointUnusableError(
      endpoint,
      `The server at ${shown} is not an AWS API: it answered HTTP ${response.status} (${type}) without any AWS ` +
        'request id. Check the port: an emulator such as moto or LocalStack usually listens on 5000 or 4566.',
    );
  }
}

interface PreflightResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * One GET of the endpoint's root with node:http, as the SDK's own handler talks (fetch would refuse
 * the ports the Fetch standard calls bad, 6000 among them, which the SDK reaches). The whole exchange,
 * from connecting to the last byte of the first 4 KiB, must finish within `timeoutMs`.
 */
function getRoot(url: URL, timeoutMs: number): Promise<PreflightResponse> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: 'GET', timeout: timeoutMs, headers: { accept: '*/*' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
        if (body.length >= 4096) response.destroy();
      });
      const done = () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: body.slice(0, 4096) });
      response.once('end', done);
      response.once('close', done);
      response.once('error', () => done());
    });
    const timer = setTimeout(() => request.destroy(timeoutError(timeoutMs)), timeoutMs);
    request.once('timeout', () => request.destroy(timeoutError(timeoutMs)));
    request.once('error', reject);
    request.once('close', () => clearTimeout(timer));
    request.end();
  });
}

function timeoutError(timeoutMs: number): Error {
  return Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' });
}

function speaksAws(headers: IncomingHttpHeaders, body: string): boolean {
  if (headers['x-amz-request-id'] || headers['x-amzn-requestid'] || headers['x-amz-id-2']) return true;
  return /<(ListAllMyBucketsResult|Error)[\s>]/.test(body) && body.includes('<');
}

function unreachableMessage(shown: string, error: unknown, timeoutMs: number): string {
  const code = causeCode(error);
  const start = 'Start that emulator, or fix or unset the variable';
  if ((error as { name?: string })?.name === 'TimeoutError') {
    return `${shown} did not answer within ${timeoutMs / 1000} s. Is something else listening on that port? ${start}.`;
  }
  if (code === 'ECONNREFUSED') return `Nothing listens at ${shown} (connection refused). ${start}.`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `The host of ${shown} is unknown (${code}). ${start}.`;
  return `Could not reach ${shown} (${code ?? String(error)}). ${start}.`;
}

/** The system error code (ECONNREFUSED, ...) behind a fetch failure. */
function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
