import { RerunError, WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';

/** Largest response-body excerpt kept (in results and error messages): results are stored in the ledger. */
export const WEBHOOK_BODY_EXCERPT_BYTES = 1024;

/** Options of {@link notifyWebhook}. */
export interface NotifyWebhookOptions {
  /** Where to POST. */
  url: string;
  /** Sent as JSON. */
  body: unknown;
  /** Sent as the `Idempotency-Key` header, so the receiver can discard a repeat after a crash. */
  dedupeKey: string;
  /**
   * Abort the request (including reading the response) after this long.
   * @default 10_000
   */
  timeoutMs?: number;
  /** Extra headers (e.g. an authorization header). @default {} */
  headers?: Record<string, string>;
  /** The fetch implementation. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** The names of {@link NotifyWebhookOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const NOTIFY_WEBHOOK_OPTION_NAMES = {
  body: true,
  dedupeKey: true,
  fetch: true,
  headers: true,
  timeoutMs: true,
  url: true,
} as const satisfies OptionNames<NotifyWebhookOptions>;

/** A 2xx answer. */
export interface WebhookResponse {
  readonly status: number;
  /** The start of the response body (at most `WEBHOOK_BODY_EXCERPT_BYTES` bytes). */
  readonly body: string;
}

/**
 * A webhook delivery did not succeed. `retryable` follows HTTP semantics: 408, 429, 5xx, network
 * errors and timeouts may succeed later; any other status (4xx, 3xx) will not, so retrying only
 * delays the dead-letter queue.
 *
 * @example
 * catch (error) { if (error instanceof WebhookDeliveryError && !error.retryable) alert(error.status); }
 */
export class WebhookDeliveryError extends RerunError {
  /** HTTP status, undefined for network errors and timeouts. */
  readonly status: number | undefined;
  /** Seconds from a numeric `Retry-After` header, if the receiver sent one. */
  readonly retryAfterSeconds: number | undefined;
  constructor(
    message: string,
    options: { retryable: boolean; status?: number; retryAfterSeconds?: number; cause?: unknown },
  ) {
    super(message, { retryable: options.retryable, cause: options.cause });
    this.name = 'WebhookDeliveryError';
    this.status = options.status;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * POSTs a JSON body with an `Idempotency-Key` header. Resolves with the status and a body excerpt on
 * 2xx; throws {@link WebhookDeliveryError} otherwise (retryable or terminal, see there). Redirects are
 * not followed: a POST redirected to GET would silently drop the notification.
 *
 * @example
 * await notifyWebhook({ url: process.env.NOTIFY_URL, body: { output: 'normalized/a.ndjson' }, dedupeKey });
 */
export async function notifyWebhook(options: NotifyWebhookOptions): Promise<WebhookResponse> {
  checkOptions('notifyWebhook', options, NOTIFY_WEBHOOK_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const target = describeUrl(options.url);
  if (!/^[\x21-\x7e]{1,255}$/.test(options.dedupeKey)) {
    throw new WebhookDeliveryError(
      `Dedupe key ${JSON.stringify(options.dedupeKey)} cannot be an Idempotency-Key header (1-255 visible ASCII characters).`,
      { retryable: false },
    );
  }
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  let excerpt: string;
  try {
    response = await doFetch(options.url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        'idempotency-key': options.dedupeKey,
      },
      body: JSON.stringify(options.body ?? null),
    });
    excerpt = await readExcerpt(response, WEBHOOK_BODY_EXCERPT_BYTES);
  } catch (error) {
    const timedOut = signal.aborted;
    throw new WebhookDeliveryError(
      timedOut
        ? `Webhook ${target} did not answer within ${timeoutMs} ms (key ${options.dedupeKey}); will retry.`
        : `Webhook ${target} could not be reached (key ${options.dedupeKey}): ${networkReason(error)}; will retry.`,
      { retryable: true, cause: error },
    );
  }
  const { status } = response;
  if (status >= 200 && status < 300) return { status, body: excerpt };

  const retryable = status === 408 || status === 429 || status >= 500;
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new WebhookDeliveryError(
    `Webhook ${target} answered ${status} for key ${options.dedupeKey}` +
      `${excerpt ? `: ${excerpt.slice(0, 200)}` : ''}; ${retryable ? 'will retry' : 'not retryable: fix the receiver or the request'}.`,
    {
      retryable,
      status,
      ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterSeconds: retryAfter } : {}),
    },
  );
}

/** Origin and path only: webhook URLs often carry secrets in their query string. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    throw new WebhookDeliveryError(`Webhook URL ${JSON.stringify(url)} is not a valid URL.`, { retryable: false });
  }
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

async function readExcerpt(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < maxBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
  }
  // Stop reading a large body; the status is all that decides.
  await reader.cancel().catch(() => {});
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}
