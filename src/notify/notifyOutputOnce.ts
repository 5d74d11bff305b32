import type { Ledger, OnceResult } from '../ledger/Ledger.js';
import { notifyWebhook, type WebhookResponse } from './notifyWebhook.js';
import {
  outputNotificationBody,
  outputNotificationIdentity,
  outputNotificationKey,
  type PublishedOutput,
} from './outputNotification.js';

/** Options of {@link notifyOutputOnce}. */
export interface NotifyOutputOnceOptions {
  /** The dedupe ledger (a `DynamoDBLedger` in the worker). */
  ledger: Ledger;
  /** The webhook (NOTIFY_URL). */
  url: string;
  /** The output the worker published or found valid. */
  output: PublishedOutput;
  /**
   * The Lambda's remaining time: sets the ledger lease and caps the request timeout so the request
   * ends before the function does.
   * @default undefined (the ledger's default lease; `timeoutMs` as given)
   */
  remainingTimeMs?: number;
  /**
   * Request timeout.
   * @default 10_000
   */
  timeoutMs?: number;
  /** Extra headers (e.g. authorization). @default {} */
  headers?: Record<string, string>;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** Time kept back from the Lambda's remaining time for the ledger's final write. */
const FINAL_WRITE_RESERVE_MS = 1_000;

/**
 * Notifies the webhook about an output exactly once in effect per output content: the ledger key is
 * {@link outputNotificationKey}, the receiver gets the same key as `Idempotency-Key`. A rerun over
 * unchanged input resolves with `status: 'replayed'` and sends nothing.
 *
 * Errors are the ledger's (e.g. `LedgerInProgressError`: defer the message) or the webhook's
 * (`WebhookDeliveryError`, retryable or terminal; a terminal one is stored and replayed).
 *
 * @example
 * const outcome = await notifyOutputOnce({ ledger, url: NOTIFY_URL, output, remainingTimeMs: context.getRemainingTimeInMillis() });
 * if (outcome.status === 'executed') summary.notified += 1;
 */
export async function notifyOutputOnce(options: NotifyOutputOnceOptions): Promise<OnceResult<WebhookResponse>> {
  const body = outputNotificationBody(options.output);
  const requested = options.timeoutMs ?? 10_000;
  const timeoutMs =
    options.remainingTimeMs === undefined
      ? requested
      : Math.max(100, Math.min(requested, options.remainingTimeMs - FINAL_WRITE_RESERVE_MS));
  return options.ledger.once(
    outputNotificationKey(options.output),
    outputNotificationIdentity(options.output),
    ({ dedupeKey }) =>
      notifyWebhook({
        url: options.url,
        body,
        dedupeKey,
        timeoutMs,
        ...(options.headers ? { headers: options.headers } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    options.remainingTimeMs === undefined ? {} : { remainingTimeMs: options.remainingTimeMs },
  );
}
