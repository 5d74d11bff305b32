import { HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { RerunError } from '../../src/errors.js';

/**
 * A pipeline resource the command needs is missing, unreachable or forbidden. The message names the
 * resource, where it was looked for, and what to do. Not retryable as is.
 */
export class PipelineResourceError extends RerunError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
    this.name = 'PipelineResourceError';
  }
}

/** A resource as an operator knows it, for error messages. */
export interface ResourceRef {
  /** e.g. `output bucket`, `summarize queue`. */
  readonly role: string;
  /** Its name or URL. */
  readonly name: string;
  /** Where it was looked for, e.g. `http://127.0.0.1:4566` or `AWS (us-east-1)`. */
  readonly where: string;
  /** What to do when it is missing, e.g. `Set RERUN_OUTPUT_BUCKET to the stack output OutputBucketName.` */
  readonly hint: string;
}

/**
 * Turns an SDK error into a {@link PipelineResourceError} that says which resource and what to do,
 * for the errors an operator can fix (missing resource, access denied, no credentials, nothing
 * listening at the endpoint); returns any other error unchanged.
 *
 * @example
 * try { await list(); } catch (error) { throw explainAwsError(error, { role: 'output bucket', name, where, hint }); }
 */
export function explainAwsError(error: unknown, resource: ResourceRef): unknown {
  const e = error as { name?: string; Code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const name = e?.Code ?? e?.name ?? '';
  const status = e?.$metadata?.httpStatusCode;
  const what = `the ${resource.role} "${resource.name}"`;
  if (name === 'CredentialsProviderError') {
    return new PipelineResourceError(
      `No AWS credentials to reach ${what} at ${resource.where}: the default credential chain (environment, ` +
        'AWS_PROFILE, SSO, instance role) found none. For an emulator any will do: export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test.',
      { cause: error },
    );
  }
  if (isConnectionError(error)) {
    return new PipelineResourceError(
      `Nothing answers at ${resource.where} (looking for ${what}). Start the emulator (rerun dev prints its endpoint ` +
        'in its READY line) or unset AWS_ENDPOINT_URL to use AWS.',
      { cause: error },
    );
  }
  if (
    name === 'QueueDoesNotExist' ||
    name === 'AWS.SimpleQueueService.NonExistentQueue' ||
    name === 'NoSuchBucket' ||
    (name === 'NotFound' && status === 404)
  ) {
    return new PipelineResourceError(`${capitalize(what)} does not exist at ${resource.where}. ${resource.hint}`, {
      cause: error,
    });
  }
  if (status === 403 || /AccessDenied|Forbidden|UnauthorizedOperation/.test(name)) {
    return new PipelineResourceError(
      `Access denied to ${what} at ${resource.where}${e?.message && e.message !== name ? ` (${e.message})` : ''}. ` +
        'Use credentials allowed to read it (the deploying profile), or ask for the permission named above.',
      { cause: error },
    );
  }
  return error;
}

/**
 * Checks that a bucket exists and is reachable (HeadBucket), with an explained error otherwise.
 *
 * @example
 * await requireBucket(s3, { role: 'output bucket', name: 'rerun-output', where, hint: 'Set RERUN_OUTPUT_BUCKET.' });
 */
export async function requireBucket(s3: S3Client, resource: ResourceRef): Promise<void> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: resource.name }));
  } catch (error) {
    throw explainAwsError(error, resource);
  }
}

/**
 * The URL of a queue given by URL or by name (GetQueueUrl), with an explained error when it does
 * not exist or cannot be reached.
 *
 * @example
 * const url = await requireQueueUrl(sqs, { role: 'summarize queue', name: 'rerun-summarize-queue.fifo', where, hint });
 */
export async function requireQueueUrl(sqs: SQSClient, resource: ResourceRef): Promise<string> {
  try {
    if (/^https?:\/\//.test(resource.name)) {
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: resource.name, AttributeNames: ['QueueArn'] }));
      return resource.name;
    }
    const out = await sqs.send(new GetQueueUrlCommand({ QueueName: resource.name }));
    if (!out.QueueUrl) throw new PipelineResourceError(`GetQueueUrl returned no URL for ${resource.name}`);
    return out.QueueUrl;
  } catch (error) {
    throw explainAwsError(error, resource);
  }
}

/**
 * Whether an error, or one of its causes, says nothing answered at the endpoint (refused, reset,
 * unknown host, unreachable).
 *
 * @example
 * if (isConnectionError(error)) console.error('nothing answers at the endpoint');
 */
export function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: string }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ECONNRESET' || code === 'EHOSTUNREACH')
      return true;
  }
  return false;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
