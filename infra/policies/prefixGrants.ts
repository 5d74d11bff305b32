import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { StackConfigurationInvalidError } from '../errors.js';

/**
 * Least-privilege S3 grants scoped to key prefixes, with every action named (CDK's
 * `bucket.grantRead`/`grantWrite` use wildcard actions such as `s3:GetObject*` and `s3:List*`,
 * which this project does not allow).
 */

/**
 * `arn/prefix*` for each prefix. Prefixes must end with `/` and contain no wildcard, so a grant on
 * `normalized/` can never reach `normalized-old/`.
 *
 * @example
 * objectArnsUnder('arn:aws:s3:::b', ['incoming/']); // ['arn:aws:s3:::b/incoming/*']
 */
export function objectArnsUnder(bucketArn: string, prefixes: readonly string[]): string[] {
  assertPrefixes(prefixes);
  return prefixes.map((p) => `${bucketArn}/${p}*`);
}

/** Options of {@link grantPrefixAccess}. */
export interface PrefixAccessOptions {
  /** Read objects (GetObject, which also authorizes HeadObject and conditional GETs). @default false */
  readonly read?: boolean;
  /**
   * Write objects: PutObject (which also authorizes CreateMultipartUpload, UploadPart and
   * CompleteMultipartUpload) and AbortMultipartUpload (to clean up a failed multipart upload).
   * @default false
   */
  readonly write?: boolean;
  /** Delete objects. @default false */
  readonly delete?: boolean;
  /**
   * ListBucket restricted by an `s3:prefix` condition to these prefixes. Without ListBucket, S3
   * answers 403 AccessDenied instead of 404 NoSuchKey for a missing key (S3 User Guide, GetObject
   * "Permissions"), and the worker must tell "deleted" from "forbidden". For that implicit check S3
   * evaluates the policy with the requested key as `s3:prefix` (the behaviour Ceph RGW copied in
   * ceph/ceph#68577), so `incoming/*` covers reads of `incoming/...` keys.
   * @default true when read is set
   */
  readonly list?: boolean;
}

/**
 * Grants `grantee` exactly the named S3 actions on `bucket` under `prefixes`.
 *
 * @example
 * grantPrefixAccess(worker.function, input.bucket, ['incoming/'], { read: true });
 * grantPrefixAccess(worker.function, output.bucket, ['normalized/', 'quarantine/'], { read: true, write: true });
 */
export function grantPrefixAccess(
  grantee: IGrantable,
  bucket: IBucket,
  prefixes: readonly string[],
  options: PrefixAccessOptions,
): void {
  const objects = objectArnsUnder(bucket.bucketArn, prefixes);
  const actions = [
    ...(options.read ? ['s3:GetObject'] : []),
    ...(options.write ? ['s3:PutObject', 's3:AbortMultipartUpload'] : []),
    ...(options.delete ? ['s3:DeleteObject'] : []),
  ];
  if (actions.length > 0) {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions, resources: objects }));
  }
  if (options.list ?? options.read === true) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
      }),
    );
  }
}

function assertPrefixes(prefixes: readonly string[]): void {
  const bad = prefixes.filter((p) => !/^[^*?]+\/$/.test(p) || p.startsWith('/'));
  if (prefixes.length === 0 || bad.length > 0) {
    throw new StackConfigurationInvalidError([
      `key prefixes must be non-empty, end with "/", not start with "/" and contain no wildcard; got ${JSON.stringify(prefixes)}`,
    ]);
  }
}
