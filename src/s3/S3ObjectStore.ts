import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import type { OutputHead } from '../done/judgeOutput.js';
import { WorkerConfigurationError } from '../errors.js';
import { stripQuotes } from '../intake/parseS3Event.js';
import { checkOptions } from '../options/checkOptions.js';
import { retryOnConflict } from './conflictRetry.js';
import { encodeCopySourceKey } from './copySource.js';
import { classified, classifyS3Error, errorCode, httpStatus, isMissingKey, type S3Target } from './errors.js';
import {
  S3_GET_OPTION_NAMES,
  S3_MIN_PART_BYTES,
  S3_OBJECT_STORE_OPTION_NAMES,
  S3_PUT_OPTION_NAMES,
  type S3ObjectStoreOptions,
  type S3PutOptions,
  type WriteCondition,
} from './s3ObjectStoreOptions.js';
import { withPayloadSha256 } from './signedPayloadSha256.js';

export { httpStatus } from './errors.js';

export type { WriteCondition } from './s3ObjectStoreOptions.js';

/** How a conditional write ended. Conflicts are results, not exceptions: the caller decides. */
export const WriteStatus = {
  WRITTEN: 'written',
  /** 412: the key exists (If-None-Match) or its ETag changed (If-Match): another writer got there. */
  PRECONDITION_FAILED: 'precondition-failed',
  /**
   * 409 ConditionalRequestConflict: a concurrent conflicting write. {@link S3ObjectStore.put} has
   * already retried it (full jitter); a multipart completion must start a new upload instead.
   */
  CONFLICT: 'conflict',
  /** 404 on If-Match: the object we meant to replace is gone. */
  MISSING: 'missing',
} as const;

export type WriteResult =
  | { readonly status: 'written'; readonly etag: string }
  | { readonly status: Exclude<(typeof WriteStatus)[keyof typeof WriteStatus], 'written'> };

/** Result of a conditional GET of an input. */
export type GetResult =
  | { readonly status: 'not-modified' }
  | { readonly status: 'missing' }
  | {
      readonly status: 'ok';
      readonly body: Readable;
      readonly etag: string;
      readonly versionId?: string;
      readonly contentLength: number;
    };

/**
 * Thin adapter over the S3 operations rerun uses. It classifies the answers that matter to
 * idempotency (404, 304, 412, 409), retries a PutObject's 409 (the one place that does), turns
 * configuration failures (403 AccessDenied, NoSuchBucket, InvalidBucketName) into non-retryable
 * errors that name the object and the missing permission (src/s3/errors.ts), and lets every other
 * error through.
 *
 * @example
 * const store = new S3ObjectStore(new S3Client({}));
 * const head = await store.head('out-bucket', 'normalized/in/a.csv.ndjson');
 */
export class S3ObjectStore {
  /** The smallest multipart part this store accepts (every part but the last). */
  readonly minPartBytes: number;

  constructor(
    readonly client: S3Client,
    private readonly options: S3ObjectStoreOptions = {},
  ) {
    checkOptions('S3ObjectStore', options, S3_OBJECT_STORE_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
    this.minPartBytes = options.minPartBytes ?? S3_MIN_PART_BYTES;
  }

  /** HeadObject with `ChecksumMode: 'ENABLED'` (returns the stored checksum); undefined on 404. */
  async head(bucket: string, key: string): Promise<OutputHead | undefined> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
      return {
        etag: stripQuotes(out.ETag ?? ''),
        contentLength: out.ContentLength ?? 0,
        metadata: out.Metadata ?? {},
        ...(out.ChecksumSHA256 ? { checksumSHA256: out.ChecksumSHA256 } : {}),
        ...(out.LastModified ? { lastModified: out.LastModified.getTime() } : {}),
      };
    } catch (error) {
      // A 404 is "no such key" only because the worker holds s3:ListBucket; without it S3 answers
      // 403, which classifyS3Error reports as a permission failure, never as "missing".
      if (isMissingKey(error)) return undefined;
      throw classifyS3Error(error, { operation: 'HeadObject', bucket, key }) ?? error;
    }
  }

  /**
   * GetObject; with `ifNoneMatch` it answers `not-modified` (304, no body read) when the object's
   * ETag still equals it: the cheapest "has this input changed since the output was built?".
   */
  async get(bucket: string, key: string, options: { ifNoneMatch?: string } = {}): Promise<GetResult> {
    checkOptions('S3ObjectStore.get', options, S3_GET_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: bucket,
          Key: key,
          ...(options.ifNoneMatch ? { IfNoneMatch: `"${options.ifNoneMatch}"` } : {}),
        }),
      );
      return {
        status: 'ok',
        body: out.Body as Readable,
        etag: stripQuotes(out.ETag ?? ''),
        contentLength: out.ContentLength ?? 0,
        ...(out.VersionId && out.VersionId !== 'null' ? { versionId: out.VersionId } : {}),
      };
    } catch (error) {
      if (httpStatus(error) === 304) return { status: 'not-modified' };
      if (isMissingKey(error)) return { status: 'missing' };
      throw classifyS3Error(error, { operation: 'GetObject', bucket, key }) ?? error;
    }
  }

  /**
   * A single conditional PutObject. `sha256Base64` is sent so S3 verifies and stores it. A 409
   * ConditionalRequestConflict is retried with the same body (full jitter, `conflictRetry`); a
   * conflict left after the retries is returned as `WriteStatus.CONFLICT`.
   */
  async put(bucket: string, key: string, body: Uint8Array, options: S3PutOptions): Promise<WriteResult> {
    checkOptions('S3ObjectStore.put', options, S3_PUT_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
    const once = () =>
      classifyWrite({ operation: 'PutObject', bucket, key }, async () => {
        const out = await this.client.send(
          withPayloadSha256(
            new PutObjectCommand({
              Bucket: bucket,
              Key: key,
              Body: body,
              ContentLength: body.byteLength,
              Metadata: options.metadata,
              // Naming the algorithm as well as sending the digest: S3 needs only the digest, moto
              // stores the checksum only when the algorithm header is present too.
              ChecksumAlgorithm: 'SHA256',
              ChecksumSHA256: options.sha256Base64,
              ...(options.contentType ? { ContentType: options.contentType } : {}),
              ...conditionHeaders(options.condition),
            }),
            options.sha256Base64,
          ),
        );
        return stripQuotes(out.ETag ?? '');
      });
    return retryOnConflict(once, (r) => r.status === WriteStatus.CONFLICT, this.options.conflictRetry);
  }

  /** CreateMultipartUpload with SHA-256 part checksums; returns the upload id. */
  async createMultipartUpload(
    bucket: string,
    key: string,
    options: { metadata: Record<string, string>; contentType?: string },
  ): Promise<string> {
    const out = await classified({ operation: 'CreateMultipartUpload', bucket, key }, () =>
      this.client.send(
        new CreateMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          Metadata: options.metadata,
          ChecksumAlgorithm: 'SHA256',
          ...(options.contentType ? { ContentType: options.contentType } : {}),
        }),
      ),
    );
    if (!out.UploadId) throw new Error(`CreateMultipartUpload for s3://${bucket}/${key} returned no UploadId`);
    return out.UploadId;
  }

  /** UploadPart with its SHA-256, which S3 verifies. */
  async uploadPart(
    bucket: string,
    key: string,
    part: { uploadId: string; partNumber: number; body: Uint8Array; sha256Base64: string },
  ): Promise<{ partNumber: number; etag: string; sha256Base64: string }> {
    const out = await classified({ operation: 'UploadPart', bucket, key }, () =>
      this.client.send(
        withPayloadSha256(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: part.uploadId,
            PartNumber: part.partNumber,
            Body: part.body,
            ContentLength: part.body.byteLength,
            ChecksumAlgorithm: 'SHA256',
            ChecksumSHA256: part.sha256Base64,
          }),
          part.sha256Base64,
        ),
      ),
    );
    return { partNumber: part.partNumber, etag: out.ETag ?? '', sha256Base64: part.sha256Base64 };
  }

  /**
   * CompleteMultipartUpload with the same conditions as PutObject (412/409 classified). A 409 is not
   * retried: AWS advises a new multipart upload, which only the writer of the parts can make.
   */
  async completeMultipartUpload(
    bucket: string,
    key: string,
    upload: {
      uploadId: string;
      parts: readonly { partNumber: number; etag: string; sha256Base64: string }[];
      condition: WriteCondition;
    },
  ): Promise<WriteResult> {
    return classifyWrite({ operation: 'CompleteMultipartUpload', bucket, key }, async () => {
      const out = await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: upload.uploadId,
          MultipartUpload: {
            Parts: upload.parts.map((p) => ({
              PartNumber: p.partNumber,
              ETag: p.etag,
              ChecksumSHA256: p.sha256Base64,
            })),
          },
          ...conditionHeaders(upload.condition),
        }),
      );
      return stripQuotes(out.ETag ?? '');
    });
  }

  /**
   * Seals an object where it is: copies it onto itself as a new multipart upload that carries
   * `metadata`, only while it is still the version `etag` names. The multipart writer calls it right
   * after CompleteMultipartUpload, because a multipart upload's metadata is fixed at
   * CreateMultipartUpload, before the content, its counts or its side outputs exist
   * (src/publish/OutputWriter.ts).
   *
   * CreateMultipartUpload (with the metadata, SHA-256 part checksums and the content type), one
   * UploadPartCopy per range with `x-amz-copy-source-if-match` on `etag` (the bytes copied are the
   * ones sealed), then CompleteMultipartUpload with `If-Match` on `etag` (the seal replaces nothing
   * written meanwhile). Not a CopyObject: a bucket policy that requires conditional writes makes
   * every CopyObject into its prefixes fail, 403 without a condition header and 501 with one (S3
   * User Guide, "Enforce conditional writes"), while it exempts CreateMultipartUpload and
   * UploadPartCopy and lets a conditional completion through. Each range is at most 5 GiB (S3's
   * largest part); S3 returns each copied part's SHA-256 (CopyPartResult, since the upload names
   * SHA-256), which the completion lists, so S3 stores the composite the writer computed in advance.
   *
   * A 412 (or a 404: the object is gone) means another writer replaced or removed it: the caller
   * lost the race, as on a completion; a 409 on the completion is returned as a conflict. Either
   * way the seal's own upload is aborted.
   *
   * @example
   * const sealed = await store.sealInPlace('out', 'normalized/in/big.csv.ndjson', {
   *   etag: completed.etag, metadata, contentType: 'application/x-ndjson', ranges: plan.ranges });
   */
  async sealInPlace(
    bucket: string,
    key: string,
    options: {
      etag: string;
      metadata: Record<string, string>;
      contentType?: string;
      ranges: readonly { start: number; end: number; sha256Base64: string }[];
    },
  ): Promise<WriteResult> {
    const uploadId = await this.createMultipartUpload(bucket, key, {
      metadata: options.metadata,
      ...(options.contentType ? { contentType: options.contentType } : {}),
    });
    try {
      const parts: { partNumber: number; etag: string; sha256Base64: string }[] = [];
      for (const [index, range] of options.ranges.entries()) {
        const copied = await classifyWrite({ operation: 'UploadPartCopy', bucket, key }, async () => {
          const out = await this.client.send(
            new UploadPartCopyCommand({
              Bucket: bucket,
              Key: key,
              UploadId: uploadId,
              PartNumber: index + 1,
              CopySource: `${bucket}/${encodeCopySourceKey(key)}`,
              CopySourceIfMatch: `"${options.etag}"`,
              CopySourceRange: `bytes=${range.start}-${range.end}`,
            }),
          );
          // The part's SHA-256 as S3 computed it, where it returns one; else the one the writer computed.
          parts.push({
            partNumber: index + 1,
            etag: out.CopyPartResult?.ETag ?? '',
            sha256Base64: out.CopyPartResult?.ChecksumSHA256 ?? range.sha256Base64,
          });
          return stripQuotes(out.CopyPartResult?.ETag ?? '');
        });
        if (copied.status !== WriteStatus.WRITTEN) {
          await this.abortMultipartUpload(bucket, key, uploadId);
          return copied;
        }
      }
      const sealed = await this.completeMultipartUpload(bucket, key, {
        uploadId,
        parts,
        condition: { ifMatch: options.etag },
      });
      if (sealed.status !== WriteStatus.WRITTEN) await this.abortMultipartUpload(bucket, key, uploadId);
      return sealed;
    } catch (error) {
      await this.abortMultipartUpload(bucket, key, uploadId).catch(() => {});
      throw error;
    }
  }

  /** AbortMultipartUpload; a missing upload is fine (already completed or aborted). */
  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    } catch (error) {
      if (httpStatus(error) !== 404)
        throw classifyS3Error(error, { operation: 'AbortMultipartUpload', bucket, key }) ?? error;
    }
  }

  /** DeleteObject (a missing key is not an error in S3). Unconditional: the pipeline uses {@link deleteIfMatch}. */
  async delete(bucket: string, key: string): Promise<void> {
    await classified({ operation: 'DeleteObject', bucket, key }, () =>
      this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })),
    );
  }

  /**
   * DeleteObject with `If-Match: <etag>`: removes the object only while it is still the version
   * the caller looked at, so a delete never removes what a concurrent writer has just published.
   * docs/AWS-BEHAVIOUR.md, "Conditional deletes": a mismatch answers 412 (S3 User Guide, "Conditional
   * deletes"); a missing key answers 404 with If-Match, and both are results here.
   *
   * @example
   * const result = await store.deleteIfMatch('out', 'normalized/in/a.csv.ndjson', head.etag);
   * if (result === DeleteStatus.PRECONDITION_FAILED) console.log('replaced meanwhile: kept');
   */
  async deleteIfMatch(bucket: string, key: string, etag: string): Promise<DeleteStatus> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, IfMatch: `"${etag}"` }));
      return DeleteStatus.DELETED;
    } catch (error) {
      if (httpStatus(error) === 412) return DeleteStatus.PRECONDITION_FAILED;
      if (isMissingKey(error)) return DeleteStatus.MISSING;
      // A 403 (the role or the bucket policy refuses it) is a configuration failure, not retryable.
      throw classifyS3Error(error, { operation: 'DeleteObject', bucket, key }) ?? error;
    }
  }
}

/** How a conditional delete ended. */
export const DeleteStatus = {
  DELETED: 'deleted',
  /** 412: the object is no longer the version whose ETag was given (replaced meanwhile): kept. */
  PRECONDITION_FAILED: 'precondition-failed',
  /** 404: nothing at the key (already removed). */
  MISSING: 'missing',
} as const;
export type DeleteStatus = (typeof DeleteStatus)[keyof typeof DeleteStatus];

function conditionHeaders(condition: WriteCondition): { IfNoneMatch?: string; IfMatch?: string } {
  return 'ifNoneMatch' in condition ? { IfNoneMatch: '*' } : { IfMatch: `"${condition.ifMatch}"` };
}

async function classifyWrite(target: S3Target, write: () => Promise<string>): Promise<WriteResult> {
  try {
    return { status: WriteStatus.WRITTEN, etag: await write() };
  } catch (error) {
    // docs/AWS-BEHAVIOUR.md, "Conditional writes": 412 PreconditionFailed = another writer won; 409 ConditionalRequestConflict =
    // a concurrent write in flight, retry; 404 NoSuchKey on If-Match = the object is gone.
    const status = httpStatus(error);
    if (status === 412) return { status: WriteStatus.PRECONDITION_FAILED };
    if (status === 409 && errorCode(error) === 'ConditionalRequestConflict') return { status: WriteStatus.CONFLICT };
    if (isMissingKey(error)) return { status: WriteStatus.MISSING };
    throw classifyS3Error(error, target) ?? error;
  }
}
