/**
 * The IAM requests an S3 API call is authorized as, with the condition keys S3 puts into each (S3
 * User Guide: "Actions, resources, and condition keys for Amazon S3", "Enforce conditional writes",
 * "Enforce conditional deletes"; API reference of CopyObject: it needs s3:GetObject on the source
 * and s3:PutObject on the destination). `s3:ObjectCreationOperation` is true only for the requests
 * that create the object (PutObject, CopyObject, CompleteMultipartUpload); CreateMultipartUpload
 * and UploadPart (UploadPartCopy too) are s3:PutObject requests without it.
 */
import type { CallerRequest } from './policyEngine.js';

/** Preconditions of a write or delete. */
export interface Preconditions {
  readonly ifMatch?: string;
  readonly ifNoneMatch?: string;
}

const preconditionKeys = (p: Preconditions = {}): Record<string, string> => ({
  ...(p.ifMatch !== undefined ? { 's3:if-match': p.ifMatch } : {}),
  ...(p.ifNoneMatch !== undefined ? { 's3:if-none-match': p.ifNoneMatch } : {}),
});

const objectArn = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`;

/** The S3 calls a worker or an operator makes, as IAM requests of role `as`. */
export function s3As(as: string) {
  return {
    getObject: (bucket: string, key: string): CallerRequest[] => [
      { as, action: 's3:GetObject', resource: objectArn(bucket, key) },
    ],
    putObject: (bucket: string, key: string, p?: Preconditions): CallerRequest[] => [
      {
        as,
        action: 's3:PutObject',
        resource: objectArn(bucket, key),
        context: { ...preconditionKeys(p), 's3:ObjectCreationOperation': 'true' },
      },
    ],
    createMultipartUpload: (bucket: string, key: string): CallerRequest[] => [
      { as, action: 's3:PutObject', resource: objectArn(bucket, key) },
    ],
    uploadPart: (bucket: string, key: string): CallerRequest[] => [
      { as, action: 's3:PutObject', resource: objectArn(bucket, key) },
    ],
    completeMultipartUpload: (bucket: string, key: string, p?: Preconditions): CallerRequest[] => [
      {
        as,
        action: 's3:PutObject',
        resource: objectArn(bucket, key),
        context: { ...preconditionKeys(p), 's3:ObjectCreationOperation': 'true' },
      },
    ],
    abortMultipartUpload: (bucket: string, key: string): CallerRequest[] => [
      { as, action: 's3:AbortMultipartUpload', resource: objectArn(bucket, key) },
    ],
    /** CopyObject of `source` onto `bucket/key` (the preconditions are the destination's If-Match / If-None-Match). */
    copyObject: (bucket: string, key: string, source: { bucket: string; key: string }, p?: Preconditions) => [
      ...s3As(as).putObject(bucket, key, p),
      { as, action: 's3:GetObject', resource: objectArn(source.bucket, source.key) },
    ],
    /**
     * The seal of a large output (S3ObjectStore.sealInPlace): a multipart upload onto the same key
     * whose parts are UploadPartCopy of the object itself (s3:PutObject on the destination without
     * creating it, s3:GetObject on the source), completed with If-Match on the object's ETag.
     */
    sealByPartCopy: (bucket: string, key: string, p: Preconditions): CallerRequest[] => [
      ...s3As(as).createMultipartUpload(bucket, key),
      { as, action: 's3:PutObject', resource: objectArn(bucket, key) },
      { as, action: 's3:GetObject', resource: objectArn(bucket, key) },
      ...s3As(as).completeMultipartUpload(bucket, key, p),
    ],
    deleteObject: (bucket: string, key: string, p?: Preconditions): CallerRequest[] => [
      { as, action: 's3:DeleteObject', resource: objectArn(bucket, key), context: preconditionKeys(p) },
    ],
    /** ListObjectsV2 with `prefix`, or without any (undefined). */
    listObjects: (bucket: string, prefix?: string): CallerRequest[] => [
      {
        as,
        action: 's3:ListBucket',
        resource: `arn:aws:s3:::${bucket}`,
        context: prefix !== undefined ? { 's3:prefix': prefix } : {},
      },
    ],
  };
}
