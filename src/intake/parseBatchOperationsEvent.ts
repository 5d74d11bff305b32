/**
 * S3 Batch Operations intake: the event a `LambdaInvoke` job sends, and the response it expects.
 * Pure: no SDK, no clock. The formats are those of the S3 User Guide, "Invoke AWS Lambda function"
 * (sections "Response and result codes" and "Example request and response"), for invocation
 * schema 1.0 (tasks name their bucket by ARN) and 2.0 (by name, plus the job's `userArguments`).
 */

import { decodeS3EventKey } from './parseS3Event.js';

/** The invocation schemas this intake reads (LambdaInvokeOperation.InvocationSchemaVersion). */
export const BatchOperationsSchema = {
  /** The default: each task names its bucket by `s3BucketArn`. */
  V1: '1.0',
  /** Required for `UserArguments` (and directory buckets): each task names its bucket by `s3Bucket`. */
  V2: '2.0',
} as const;
export type BatchOperationsSchema = (typeof BatchOperationsSchema)[keyof typeof BatchOperationsSchema];

/** One task of an invocation, as S3 sends it. */
export interface BatchOperationsTask {
  readonly taskId: string;
  /** The object key, URL-encoded ("keys from S3 Batch Operations are URL encoded"). */
  readonly s3Key: string;
  readonly s3VersionId?: string | null;
  /** Schema 1.0: `arn:aws:s3:::bucket`. */
  readonly s3BucketArn?: string;
  /** Schema 2.0: the bucket's name. */
  readonly s3Bucket?: string;
}

/** The event of one `LambdaInvoke` invocation. */
export interface BatchOperationsEvent {
  readonly invocationSchemaVersion: string;
  readonly invocationId: string;
  readonly job: { readonly id: string; readonly userArguments?: Readonly<Record<string, string>> };
  readonly tasks: readonly BatchOperationsTask[];
}

/** A task's result code (S3 User Guide, "Response and result codes"). */
export const BatchOperationsResultCode = {
  /** The task completed; its result string goes into the completion report. */
  SUCCEEDED: 'Succeeded',
  /** The task is redriven before the job completes; on the last redrive it is reported failed. */
  TEMPORARY_FAILURE: 'TemporaryFailure',
  /** The task failed and is not retried; the report marks it failed with the result string. */
  PERMANENT_FAILURE: 'PermanentFailure',
} as const;
export type BatchOperationsResultCode = (typeof BatchOperationsResultCode)[keyof typeof BatchOperationsResultCode];

/** One task's result in the response. */
export interface BatchOperationsTaskResult {
  readonly taskId: string;
  readonly resultCode: BatchOperationsResultCode;
  readonly resultString: string;
}

/** The response a `LambdaInvoke` job expects from the function. */
export interface BatchOperationsResponse {
  readonly invocationSchemaVersion: string;
  /** What a task missing from `results` counts as. */
  readonly treatMissingKeysAs: BatchOperationsResultCode;
  readonly invocationId: string;
  readonly results: readonly BatchOperationsTaskResult[];
}

/** A task read from an event: the object it names, or why it names none. */
export type ParsedBatchOperationsTask =
  | {
      readonly ok: true;
      readonly taskId: string;
      readonly bucket: string;
      /** Decoded. */
      readonly key: string;
      readonly versionId?: string;
    }
  | { readonly ok: false; readonly taskId: string; readonly reason: string };

/** What a whole event turned out to be. */
export type ParsedBatchOperationsEvent =
  | {
      readonly ok: true;
      readonly schema: BatchOperationsSchema;
      readonly invocationId: string;
      readonly jobId: string;
      readonly userArguments: Readonly<Record<string, string>>;
      readonly tasks: readonly ParsedBatchOperationsTask[];
    }
  | { readonly ok: false; readonly reason: string };

/**
 * Reads a Batch Operations event. Never throws: an event that is not one comes back as
 * `{ ok: false, reason }`, and a task that names no object as a task with `ok: false`, so that the
 * handler reports it as a permanent failure instead of dropping it.
 *
 * The key is decoded as S3 event keys are (`+` a space, `%XX` UTF-8): the User Guide's example
 * decodes it with `unquote`, and Powertools for AWS Lambda (Python), `S3BatchOperationTask.s3_key`,
 * with `unquote_plus`. The two differ only for a `+`; the manifests rerun writes encode a space as
 * `%20` and a plus as `%2B` (encodeManifestKey), which both read alike.
 *
 * @example
 * const parsed = parseBatchOperationsEvent(event);
 * if (parsed.ok) for (const task of parsed.tasks) if (task.ok) console.log(task.bucket, task.key);
 */
export function parseBatchOperationsEvent(event: unknown): ParsedBatchOperationsEvent {
  if (!isObject(event)) return { ok: false, reason: 'the event is not a JSON object' };
  const version = event.invocationSchemaVersion;
  if (version !== BatchOperationsSchema.V1 && version !== BatchOperationsSchema.V2) {
    return {
      ok: false,
      reason: `unsupported invocationSchemaVersion ${JSON.stringify(version)} (this handler reads 1.0 and 2.0)`,
    };
  }
  if (typeof event.invocationId !== 'string' || event.invocationId === '') {
    return { ok: false, reason: 'the event has no invocationId' };
  }
  const job = event.job;
  if (!isObject(job) || typeof job.id !== 'string') return { ok: false, reason: 'the event has no job.id' };
  if (!Array.isArray(event.tasks)) return { ok: false, reason: 'the event has no tasks array' };
  const userArguments: Record<string, string> = {};
  if (isObject(job.userArguments)) {
    for (const [k, v] of Object.entries(job.userArguments)) if (typeof v === 'string') userArguments[k] = v;
  }
  return {
    ok: true,
    schema: version,
    invocationId: event.invocationId,
    jobId: job.id,
    userArguments,
    tasks: event.tasks.map((task, i) => parseTask(task, version, i)),
  };
}

function parseTask(task: unknown, schema: BatchOperationsSchema, index: number): ParsedBatchOperationsTask {
  if (!isObject(task) || typeof task.taskId !== 'string' || task.taskId === '') {
    return {
      ok: false,
      taskId: isObject(task) ? String(task.taskId ?? index) : String(index),
      reason: 'task has no taskId',
    };
  }
  const taskId = task.taskId;
  const bucket = schema === BatchOperationsSchema.V1 ? bucketOfArn(task.s3BucketArn) : stringOf(task.s3Bucket);
  if (!bucket) {
    const field = schema === BatchOperationsSchema.V1 ? 's3BucketArn' : 's3Bucket';
    return { ok: false, taskId, reason: `task names no bucket (${field} missing or not one, schema ${schema})` };
  }
  if (typeof task.s3Key !== 'string' || task.s3Key === '') return { ok: false, taskId, reason: 'task has no s3Key' };
  let key: string;
  try {
    key = decodeS3EventKey(task.s3Key);
  } catch {
    return { ok: false, taskId, reason: `s3Key is not URL-encoded: ${JSON.stringify(task.s3Key.slice(0, 80))}` };
  }
  const versionId = stringOf(task.s3VersionId);
  return { ok: true, taskId, bucket, key, ...(versionId ? { versionId } : {}) };
}

/**
 * The bucket name of an S3 bucket ARN: `arn:aws:s3:::name`, or the regional form the User Guide's
 * example shows (`arn:aws:s3:us-east-1:0123456788:name`); the name is after the last colon.
 */
function bucketOfArn(arn: unknown): string | undefined {
  if (typeof arn !== 'string' || !/^arn:[^:]+:s3:/.test(arn)) return undefined;
  const name = arn.slice(arn.lastIndexOf(':') + 1);
  return name === '' ? undefined : name;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Encodes an object key for a Batch Operations CSV manifest, whose keys must be URL-encoded (S3
 * User Guide, "Specifying a manifest"): percent-encoding with `/` kept, so a space is `%20` and a
 * plus `%2B`, which decode to the same key whether the reader treats `+` as a space or not.
 *
 * @example
 * encodeManifestKey('incoming/a b+c é.csv'); // 'incoming/a%20b%2Bc%20%C3%A9.csv'
 */
export function encodeManifestKey(key: string): string {
  return encodeURIComponent(key).replace(/%2F/g, '/');
}
