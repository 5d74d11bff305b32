import { createHash } from 'node:crypto';
import { RerunError } from '../errors.js';
import { canonicalJson } from '../ledger/payloadHash.js';

/** A published (or found-valid) output, as the worker knows it after the done-check. */
export interface PublishedOutput {
  /** Output bucket. */
  readonly bucket: string;
  /** Output object key. */
  readonly key: string;
  /** SHA-256 of the output's bytes, as the publisher records it (hex or base64; used verbatim). */
  readonly sha256: string;
  /**
   * Records in the output, when the output's metadata records it (multipart outputs found valid
   * on a rerun do not: their metadata is written before the content exists).
   * @default omitted
   */
  readonly records?: number;
  /** Rows sent to quarantine instead. @default omitted */
  readonly quarantined?: number;
  /** Output size in bytes. @default omitted */
  readonly bytes?: number;
  /** Version of the code that produced the output: new code may mean new content under the same key. */
  readonly codeVersion: string;
  /** The input the output was derived from. */
  readonly source: {
    readonly bucket: string;
    readonly key: string;
    /** @default omitted */
    readonly etag?: string;
    /** @default omitted */
    readonly versionId?: string;
  };
}

/**
 * What the notification's dedupe key is computed from, and the ledger payload: output location,
 * content hash and code version. Descriptive fields (source, counts) are left out on purpose: an
 * unchanged output re-derived from a touched input (new ETag, same bytes) is the same notification.
 */
export interface OutputNotificationIdentity {
  readonly bucket: string;
  readonly key: string;
  readonly sha256: string;
  readonly codeVersion: string;
}

/** The JSON body POSTed to NOTIFY_URL. Deterministic: no send time, so every retry sends identical bytes. */
export interface OutputNotificationBody {
  readonly type: 'rerun.output.published';
  readonly schemaVersion: 1;
  /** Same value as the Idempotency-Key header, for receivers that cannot read headers. */
  readonly dedupeKey: string;
  readonly output: {
    readonly bucket: string;
    readonly key: string;
    readonly sha256: string;
    readonly records?: number;
    readonly quarantined?: number;
    readonly bytes?: number;
  };
  readonly source: PublishedOutput['source'];
  readonly codeVersion: string;
}

/** A `PublishedOutput` is missing a field the notification needs. Terminal: a caller bug. */
export class OutputNotificationInputError extends RerunError {
  constructor(problem: string) {
    super(`Cannot describe the output for its notification: ${problem}.`, { retryable: false });
    this.name = 'OutputNotificationInputError';
  }
}

/** Prefix of every output-notification dedupe key (versioned: a change of derivation must not collide). */
export const OUTPUT_NOTIFICATION_KEY_PREFIX = 'rerun-notify-v1-';

/**
 * The identity the dedupe key is derived from (and the payload given to the ledger).
 *
 * @example
 * outputNotificationIdentity(output); // { bucket, key, sha256, codeVersion }
 */
export function outputNotificationIdentity(output: PublishedOutput): OutputNotificationIdentity {
  validate(output);
  return { bucket: output.bucket, key: output.key, sha256: output.sha256, codeVersion: output.codeVersion };
}

/**
 * The dedupe key of "output X with content C, made by code V": changed content (from a changed input)
 * gives a new key and so a new notification; a rerun over unchanged input gives the same key, which
 * the ledger has already seen, so no notification.
 *
 * @example
 * outputNotificationKey(output); // 'rerun-notify-v1-3b0c…' (64 hex digits)
 */
export function outputNotificationKey(output: PublishedOutput): string {
  const digest = createHash('sha256')
    .update(canonicalJson(outputNotificationIdentity(output)), 'utf8')
    .digest('hex');
  return `${OUTPUT_NOTIFICATION_KEY_PREFIX}${digest}`;
}

/**
 * The notification body for an output.
 *
 * @example
 * await notifyWebhook({ url, body: outputNotificationBody(output), dedupeKey: outputNotificationKey(output) });
 */
export function outputNotificationBody(output: PublishedOutput): OutputNotificationBody {
  validate(output);
  const source: { bucket: string; key: string; etag?: string; versionId?: string } = {
    bucket: output.source.bucket,
    key: output.source.key,
  };
  if (output.source.etag !== undefined) source.etag = output.source.etag;
  if (output.source.versionId !== undefined) source.versionId = output.source.versionId;
  return {
    type: 'rerun.output.published',
    schemaVersion: 1,
    dedupeKey: outputNotificationKey(output),
    output: {
      bucket: output.bucket,
      key: output.key,
      sha256: output.sha256,
      ...(output.records !== undefined ? { records: output.records } : {}),
      ...(output.quarantined !== undefined ? { quarantined: output.quarantined } : {}),
      ...(output.bytes !== undefined ? { bytes: output.bytes } : {}),
    },
    source,
    codeVersion: output.codeVersion,
  };
}

function validate(output: PublishedOutput): void {
  for (const field of ['bucket', 'key', 'sha256', 'codeVersion'] as const) {
    if (typeof output[field] !== 'string' || output[field].length === 0) {
      throw new OutputNotificationInputError(`"${field}" must be a non-empty string`);
    }
  }
  if (output.records !== undefined && (!Number.isInteger(output.records) || output.records < 0)) {
    throw new OutputNotificationInputError(`"records" must be a non-negative integer (got ${output.records})`);
  }
  if (typeof output.source?.bucket !== 'string' || typeof output.source.key !== 'string') {
    throw new OutputNotificationInputError('"source" needs "bucket" and "key"');
  }
}
