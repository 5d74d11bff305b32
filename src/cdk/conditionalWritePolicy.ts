import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { objectArnsUnder } from './prefixGrants.js';

/**
 * The bucket-policy statement that forbids blind overwrites under `prefixes`: an object-creating
 * request (PutObject, CompleteMultipartUpload, CopyObject) is denied unless it carries
 * `If-None-Match` (create-only) or `If-Match` (compare-and-swap). Even a buggy worker, or an
 * operator with broad IAM rights, cannot silently replace a published output.
 *
 * Why three condition keys, not two: CreateMultipartUpload, UploadPart and UploadPartCopy are
 * authorized as s3:PutObject too, yet never carry conditional headers, so "deny PutObject when
 * both `s3:if-none-match` and `s3:if-match` are Null" alone would also break every multipart
 * upload. `s3:ObjectCreationOperation` is true only for the requests that create the object
 * (PutObject, CompleteMultipartUpload, CopyObject), so requiring it in the Deny exempts the parts
 * while the final CompleteMultipartUpload still needs its condition.
 * Source: Amazon S3 User Guide, "Enforce conditional writes on Amazon S3 buckets"
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes-enforce.html).
 * Same page: CopyObject into these prefixes is refused (403 without headers, 501 with them), which
 * the pipeline never does.
 *
 * All keys inside one condition block must match for the Deny to apply (IAM ANDs them).
 *
 * @example
 * bucket.addToResourcePolicy(denyBlindOverwriteStatement(bucket.bucketArn, ['normalized/', 'quarantine/']));
 */
export function denyBlindOverwriteStatement(bucketArn: string, prefixes: readonly string[]): PolicyStatement {
  return new PolicyStatement({
    sid: 'DenyPutWithoutIfNoneMatchOrIfMatch',
    effect: Effect.DENY,
    principals: [new AnyPrincipal()],
    actions: ['s3:PutObject'],
    resources: objectArnsUnder(bucketArn, prefixes),
    conditions: {
      Null: { 's3:if-none-match': 'true', 's3:if-match': 'true' },
      Bool: { 's3:ObjectCreationOperation': 'true' },
    },
  });
}

/**
 * Adds {@link denyBlindOverwriteStatement} to the bucket's policy and returns the statement.
 *
 * @example
 * requireConditionalWrites(output.bucket, [topology.outputPrefix, topology.quarantinePrefix]);
 */
export function requireConditionalWrites(bucket: IBucket, prefixes: readonly string[]): PolicyStatement {
  const statement = denyBlindOverwriteStatement(bucket.bucketArn, prefixes);
  bucket.addToResourcePolicy(statement);
  return statement;
}

/**
 * The bucket-policy statement that forbids blind deletes under `prefixes`: DeleteObject is denied
 * unless it carries `If-Match` (an ETag, or `*`), so a delete names the version it removes and can
 * never remove an output that a concurrent worker has just rebuilt (412 instead).
 * Source: Amazon S3 User Guide, "Enforce conditional deletes" (condition key `s3:if-match`;
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html); see
 * AWS-SEMANTICS "Conditional deletes". A delete with an ETag also needs s3:GetObject, which the
 * functions that delete hold on the same prefixes.
 *
 * @example
 * bucket.addToResourcePolicy(denyBlindDeleteStatement(bucket.bucketArn, ['normalized/', 'quarantine/']));
 */
export function denyBlindDeleteStatement(bucketArn: string, prefixes: readonly string[]): PolicyStatement {
  return new PolicyStatement({
    sid: 'DenyDeleteWithoutIfMatch',
    effect: Effect.DENY,
    principals: [new AnyPrincipal()],
    actions: ['s3:DeleteObject'],
    resources: objectArnsUnder(bucketArn, prefixes),
    conditions: { Null: { 's3:if-match': 'true' } },
  });
}

/**
 * Adds {@link denyBlindDeleteStatement} to the bucket's policy and returns the statement.
 *
 * @example
 * requireConditionalDeletes(output.bucket, [topology.outputPrefix, topology.quarantinePrefix]);
 */
export function requireConditionalDeletes(bucket: IBucket, prefixes: readonly string[]): PolicyStatement {
  const statement = denyBlindDeleteStatement(bucket.bucketArn, prefixes);
  bucket.addToResourcePolicy(statement);
  return statement;
}
