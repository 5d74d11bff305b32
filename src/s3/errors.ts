import { RerunError } from '../errors.js';

/** The S3 operation an error came from, as the API names it. */
export type S3Operation =
  | 'HeadObject'
  | 'GetObject'
  | 'PutObject'
  | 'CreateMultipartUpload'
  | 'UploadPart'
  | 'CompleteMultipartUpload'
  | 'UploadPartCopy'
  | 'AbortMultipartUpload'
  | 'DeleteObject'
  | 'ListObjectsV2';

/** Which object (or bucket) an S3 request was about. */
export interface S3Target {
  readonly operation: S3Operation;
  readonly bucket: string;
  /** Absent for bucket-level operations (ListObjectsV2). */
  readonly key?: string;
}

/**
 * 403 AccessDenied: the caller's role or the bucket policy refuses the request. Not retryable: the
 * same request gets the same answer until someone changes IAM. The message names the permission
 * that is missing, so the failure record tells the operator what to grant before a redrive.
 *
 * For HeadObject and GetObject a 403 is also what S3 answers for a key that does not exist when the
 * caller lacks `s3:ListBucket` on the bucket (HeadObject API reference, "Permissions"): it is never
 * read as "missing".
 */
export class S3AccessDeniedError extends RerunError {
  readonly operation: S3Operation;
  readonly bucket: string;
  readonly key: string | undefined;
  /** The IAM actions (or policy condition) whose absence explains the 403. */
  readonly missingPermission: string;
  constructor(target: S3Target, options: { cause?: unknown } = {}) {
    const permission = missingPermissionOf(target.operation);
    super(
      `${target.operation} ${describeTarget(target)} was denied (403 AccessDenied): the caller lacks ${permission}. ` +
        'Grant it (docs/DEPLOY.md, "Permissions"), then redrive the message.',
      { ...options, retryable: false },
    );
    this.name = 'S3AccessDeniedError';
    this.operation = target.operation;
    this.bucket = target.bucket;
    this.key = target.key;
    this.missingPermission = permission;
  }
}

/** 404 NoSuchBucket: the bucket named by the event or the configuration does not exist. Not retryable. */
export class S3BucketMissingError extends RerunError {
  readonly bucket: string;
  constructor(target: S3Target, options: { cause?: unknown } = {}) {
    super(
      `${target.operation} ${describeTarget(target)} failed: bucket "${target.bucket}" does not exist (NoSuchBucket). ` +
        'Check the bucket name in the event or in the worker configuration (OUTPUT_BUCKET).',
      { ...options, retryable: false },
    );
    this.name = 'S3BucketMissingError';
    this.bucket = target.bucket;
  }
}

/** 400 InvalidBucketName: no bucket can ever have this name. Not retryable. */
export class S3BucketNameInvalidError extends RerunError {
  readonly bucket: string;
  constructor(target: S3Target, options: { cause?: unknown } = {}) {
    super(
      `${target.operation} ${describeTarget(target)} failed: "${target.bucket}" is not a valid bucket name (InvalidBucketName). ` +
        'The event or the configuration names a bucket that cannot exist.',
      { ...options, retryable: false },
    );
    this.name = 'S3BucketNameInvalidError';
    this.bucket = target.bucket;
  }
}

/**
 * The non-retryable configuration failure an S3 error stands for, or undefined when the error is
 * something else (transient, or a status such as 404/304/412 that the caller classifies itself).
 *
 * @example
 * try { await s3.send(new HeadObjectCommand({ Bucket, Key })); }
 * catch (error) { throw classifyS3Error(error, { operation: 'HeadObject', bucket: Bucket, key: Key }) ?? error; }
 */
export function classifyS3Error(error: unknown, target: S3Target): RerunError | undefined {
  const status = httpStatus(error);
  const name = errorCode(error);
  if (status === 403 || name === 'AccessDenied') return new S3AccessDeniedError(target, { cause: error });
  if (name === 'NoSuchBucket') return new S3BucketMissingError(target, { cause: error });
  if (name === 'InvalidBucketName') return new S3BucketNameInvalidError(target, { cause: error });
  return undefined;
}

/**
 * True when an S3 error means "this key does not exist": a 404 that is neither NoSuchBucket nor
 * NoSuchUpload (a HEAD has no body, so its 404 is only "NotFound").
 *
 * @example
 * if (isMissingKey(error)) return undefined;
 */
export function isMissingKey(error: unknown): boolean {
  if (httpStatus(error) !== 404) return false;
  const name = errorCode(error);
  return name !== 'NoSuchBucket' && name !== 'NoSuchUpload';
}

/** The HTTP status of an SDK error, if it has one. */
export function httpStatus(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/** The S3 error code (`Code` in the XML body, else the SDK's error name). */
export function errorCode(error: unknown): string | undefined {
  const e = error as { name?: string; Code?: string } | undefined;
  return e?.Code ?? e?.name;
}

function describeTarget(target: S3Target): string {
  return target.key === undefined ? `on bucket s3://${target.bucket}` : `of s3://${target.bucket}/${target.key}`;
}

function missingPermissionOf(operation: S3Operation): string {
  switch (operation) {
    case 'HeadObject':
    case 'GetObject':
      // S3 User Guide / HeadObject "Permissions": without ListBucket, a missing key answers 403.
      return 's3:GetObject on the key, or s3:ListBucket on the bucket (without ListBucket S3 answers 403, not 404, for a key that does not exist), or kms:Decrypt for an object encrypted with a KMS key';
    case 'PutObject':
    case 'CreateMultipartUpload':
    case 'UploadPart':
    case 'CompleteMultipartUpload':
      // An SSE-KMS bucket also needs the key: GenerateDataKey for every write, Decrypt for a
      // multipart upload (S3 User Guide, "Using server-side encryption with AWS KMS keys").
      return (
        's3:PutObject on the key (or the bucket policy refused a write without If-None-Match / If-Match), or ' +
        "kms:GenerateDataKey (and kms:Decrypt for a multipart upload) on the bucket's KMS key when it is encrypted with one"
      );
    case 'UploadPartCopy':
      // The seal copies the object onto itself: a read of the source and a write of the destination.
      return 's3:GetObject and s3:PutObject on the key, or kms:Decrypt and kms:GenerateDataKey for an object encrypted with a KMS key';
    case 'AbortMultipartUpload':
      return 's3:AbortMultipartUpload on the key';
    case 'DeleteObject':
      return 's3:DeleteObject on the key';
    case 'ListObjectsV2':
      return 's3:ListBucket on the bucket';
  }
}

/** Runs one request; a configuration failure (403, NoSuchBucket, InvalidBucketName) is classified. */
export async function classified<T>(target: S3Target, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw classifyS3Error(error, target) ?? error;
  }
}
