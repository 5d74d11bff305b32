import type { AfterOutputHook } from '../batch/createSqsBatchHandler.js';
import { WorkerConfigurationError } from '../errors.js';
import type { Ledger } from '../ledger/Ledger.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { notifyOutputOnce } from './notifyOutputOnce.js';

/** Options for {@link notifyAfterOutput}. */
export interface NotifyAfterOutputOptions {
  readonly ledger: Ledger;
  /** The webhook (NOTIFY_URL). */
  readonly url: string;
  /** The worker's code version (part of the notification's identity). */
  readonly codeVersion: string;
  /** @default 10_000 */
  readonly timeoutMs?: number;
}

/** The names of {@link NotifyAfterOutputOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const NOTIFY_AFTER_OUTPUT_OPTION_NAMES = {
  codeVersion: true,
  ledger: true,
  timeoutMs: true,
  url: true,
} as const satisfies OptionNames<NotifyAfterOutputOptions>;

/**
 * The reference side effect as a batch-handler hook: after an output is valid and current, notify
 * the webhook once per output content (dedupe ledger + `Idempotency-Key`). A rerun of unchanged
 * input finds the ledger entry and sends nothing (one conditional write).
 *
 * @example
 * createSqsBatchHandler({ worker, store, sqs, afterOutput: notifyAfterOutput({ ledger, url, codeVersion }) });
 */
export function notifyAfterOutput(options: NotifyAfterOutputOptions): AfterOutputHook {
  checkOptions('notifyAfterOutput', options, NOTIFY_AFTER_OUTPUT_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  return async (output, { source, remainingTimeMs }) => {
    const records = output.summary.records;
    const quarantined = output.summary.quarantined;
    const result = await notifyOutputOnce({
      ledger: options.ledger,
      url: options.url,
      remainingTimeMs,
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      output: {
        bucket: output.bucket,
        key: output.key,
        sha256: output.sha256,
        codeVersion: options.codeVersion,
        ...(records !== undefined ? { records: Number(records) } : {}),
        ...(quarantined !== undefined ? { quarantined: Number(quarantined) } : {}),
        source: { bucket: source.bucket, key: source.key, etag: output.sourceEtag },
      },
    });
    return result.status === 'executed'
      ? { executed: true, note: 'notified' }
      : { executed: false, note: 'notification already sent' };
  };
}
