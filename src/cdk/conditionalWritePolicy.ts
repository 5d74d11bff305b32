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
 * Adds {@link denyBlindOverwriteStatement} to the bucket's policy and returns the statement: under
 * these prefixes, nobody can create or replace an object without `If-None-Match` or `If-Match`.
 * Prefixes are given one by one or as arrays. A bucket imported from elsewhere has no policy this
 * app manages: then nothing is added (check `bucket.policy`).
 *
 * @example
 * requireConditionalWrites(output.bucket, 'normalized/', 'quarantine/');
 */
export function requireConditionalWrites(
  bucket: IBucket,
  ...prefixes: readonly (string | readonly string[])[]
): PolicyStatement {
  return addOnce(overwriteStatements, bucket, prefixes.flat(), denyBlindOverwriteStatement);
}

/**
 * The bucket-policy statement that forbids blind deletes under `prefixes`: DeleteObject is denied
 * unless it carries `If-Match` (an ETag, or `*`), so a delete names the version it removes and can
 * never remove an output that a concurrent worker has just rebuilt (412 instead).
 * Source: Amazon S3 User Guide, "Enforce conditional deletes" (condition key `s3:if-match`;
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-deletes.html); see
 * docs/AWS-BEHAVIOUR.md, "Conditional deletes". A delete with an ETag also needs s3:GetObject, which the
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
 * Prefixes are given one by one or as arrays.
 *
 * @example
 * requireConditionalDeletes(output.bucket, 'normalized/', 'quarantine/');
 */
export function requireConditionalDeletes(
  bucket: IBucket,
  ...prefixes: readonly (string | readonly string[])[]
): PolicyStatement {
  return addOnce(deleteStatements, bucket, prefixes.flat(), denyBlindDeleteStatement);
}

const overwriteStatements = new WeakMap<IBucket, PolicyStatement>();
const deleteStatements = new WeakMap<IBucket, PolicyStatement>();

/**
 * One statement per bucket and kind: a second call (a construct and its stack both protecting
 * prefixes of one bucket) adds its prefixes to the first statement, so the policy never holds two
 * statements with one Sid (S3 refuses such a policy).
 */
function addOnce(
  seen: WeakMap<IBucket, PolicyStatement>,
  bucket: IBucket,
  prefixes: readonly string[],
  build: (bucketArn: string, prefixes: readonly string[]) => PolicyStatement,
): PolicyStatement {
  const existing = seen.get(bucket);
  if (existing) {
    const known = new Set(existing.resources);
    existing.addResources(...objectArnsUnder(bucket.bucketArn, prefixes).filter((arn) => !known.has(arn)));
    return existing;
  }
  const statement = build(bucket.bucketArn, prefixes);
  bucket.addToResourcePolicy(statement);
  seen.set(bucket, statement);
  return statement;
}
