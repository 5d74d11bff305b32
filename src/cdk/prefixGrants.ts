import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { StackConfigurationInvalidError } from './errors.js';
import { grantKeyUseVia, KeyService } from './keyGrants.js';

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
   * ListBucket on the bucket, so that a HEAD or GET of a key that does not exist answers 404 instead
   * of 403 (HeadObject / GetObject API reference, "Permissions": "If you have the s3:ListBucket
   * permission on the bucket, Amazon S3 returns 404 ... If you don't, 403"). The worker's done-check
   * HEADs outputs that do not exist yet, and a deleted input must read as "gone", not "forbidden".
   *
   * The grant's condition is `StringLikeIfExists s3:prefix`: an actual listing must stay under these
   * prefixes, and a request that carries no `s3:prefix` passes. A HEAD or GET carries none, so the
   * implicit ListBucket check of the 404 rule passes whatever S3 puts in its context: no `s3:prefix`
   * at all (then IfExists holds), or the requested key as `s3:prefix` (then it matches the prefix
   * pattern). A plain `StringLike s3:prefix`, which the stack used before, needs the key to be
   * present and would very likely turn every missing-key HEAD into a 403. The price: a
   * ListObjectsV2 without any Prefix is allowed too (docs/DEPLOY.md, "Permissions").
   * @default true when read is set
   */
  readonly list?: boolean;
}

/** The names of {@link PrefixAccessOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const PREFIX_ACCESS_OPTION_NAMES = {
  delete: true,
  list: true,
  read: true,
  write: true,
} as const satisfies OptionNames<PrefixAccessOptions>;

/**
 * Grants `grantee` exactly the named S3 actions on `bucket` under `prefixes`, and, when the bucket
 * is encrypted with a KMS key (`bucket.encryptionKey`), the use of that key through S3
 * ({@link grantKeyUseVia}).
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
  checkOptions(
    'grantPrefixAccess',
    options,
    PREFIX_ACCESS_OPTION_NAMES,
    (m) => new StackConfigurationInvalidError([m]),
  );
  const objects = objectArnsUnder(bucket.bucketArn, prefixes);
  const actions = [
    ...(options.read ? ['s3:GetObject'] : []),
    ...(options.write ? ['s3:PutObject', 's3:AbortMultipartUpload'] : []),
    ...(options.delete ? ['s3:DeleteObject'] : []),
  ];
  if (actions.length > 0) {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions, resources: objects }));
  }
  // SSE-KMS: S3 uses the bucket's key with the caller's permissions, so without a grant on the key
  // every GET and PUT is an AccessDenied (a listing or a HEAD needs none).
  if (bucket.encryptionKey && (options.read || options.write)) {
    grantKeyUseVia(grantee, bucket.encryptionKey, KeyService.S3, { write: options.write === true });
  }
  if (options.list ?? options.read === true) {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLikeIfExists: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
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
