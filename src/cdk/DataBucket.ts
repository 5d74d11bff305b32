import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { acknowledgeCheckov, CheckovCheck } from './checkovAcknowledgements.js';
import { checkProps, DATA_BUCKET_PROP_NAMES } from './checkProps.js';

/** Props of {@link DataBucket}. */
export interface DataBucketProps {
  /**
   * Where S3 server access logs of this bucket go (AwsSolutions-S1). Leave unset only for the
   * access-log bucket itself: logging a log bucket into itself would loop.
   * @default no server access logging
   */
  readonly accessLogsBucket?: IBucket;
  /**
   * Key prefix of this bucket's access logs in `accessLogsBucket`.
   * @default `${id}/`
   */
  readonly accessLogsPrefix?: string;
  /**
   * What CloudFormation does with the bucket when it leaves the stack. Data buckets are kept:
   * a `cdk destroy` must never delete inputs or published outputs.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Days after which S3 aborts incomplete multipart uploads. A worker that times out mid-upload
   * leaves parts behind that are billed until aborted.
   * @default 1
   */
  readonly abortIncompleteMultipartUploadAfterDays?: number;
  /**
   * Days after which objects expire (for log buckets).
   * @default objects never expire
   */
  readonly expireObjectsAfterDays?: number;
  /**
   * Keep every write as a version, and delete replaced and deleted versions after
   * `noncurrentVersionExpirationDays` (with the delete markers they leave). RerunPipeline's input
   * bucket is versioned: in a versioned bucket every write sends its own event notification, while
   * two writes made at the same time to a non-versioned object may send only one (S3 User Guide,
   * "Amazon S3 event notifications"), so only there may an event's eTag alone prove an output current.
   * @default false
   */
  readonly versioned?: boolean;
  /**
   * Days after which S3 deletes a version that was replaced or deleted (with `versioned`).
   * @default 1
   */
  readonly noncurrentVersionExpirationDays?: number;
  /**
   * Encrypt with this KMS key (SSE-KMS, with an S3 Bucket Key to cut KMS requests) instead of
   * SSE-S3. `grantPrefixAccess` then grants the key's use through S3 with every object grant. Not
   * for an access-log bucket: S3 server access logging delivers to SSE-S3 buckets only.
   * @default SSE-S3
   */
  readonly encryptionKey?: IKey;
}

/**
 * An S3 bucket with the project's safe defaults always on: SSE-S3 (or SSE-KMS) encryption at rest, all public
 * access blocked, ACLs disabled (bucket owner enforced), a bucket policy that denies any request not
 * made over TLS 1.2 or later, retained on stack delete, incomplete multipart uploads aborted.
 *
 * SSE-S3 by default rather than SSE-KMS: nothing in the pipeline needs key-level access control, the
 * notification to an SSE-SQS queue and the access-log delivery both work without key policies, and
 * it costs no KMS request per object. `encryptionKey` switches to SSE-KMS where policy requires it.
 *
 * @example
 * const logs = new DataBucket(this, 'AccessLogs', { expireObjectsAfterDays: 90 });
 * const input = new DataBucket(this, 'Input', { accessLogsBucket: logs.bucket });
 * input.bucket.bucketName;
 */
export class DataBucket extends Construct {
  /** The bucket. */
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: DataBucketProps = {}) {
    checkProps('DataBucket', props, DATA_BUCKET_PROP_NAMES);
    super(scope, id);
    // ACLs are disabled (bucket owner enforced), so access logs must be delivered by bucket policy,
    // whatever the app's feature flags say: CDK reads this flag on the *target* bucket's scope, and
    // without it would grant the log delivery group an ACL that BUCKET_OWNER_ENFORCED refuses.
    this.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    this.bucket = new Bucket(this, 'Bucket', {
      ...(props.encryptionKey
        ? { encryption: BucketEncryption.KMS, encryptionKey: props.encryptionKey, bucketKeyEnabled: true }
        : { encryption: BucketEncryption.S3_MANAGED }),
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      ...(props.accessLogsBucket
        ? { serverAccessLogsBucket: props.accessLogsBucket, serverAccessLogsPrefix: props.accessLogsPrefix ?? `${id}/` }
        : {}),
      ...(props.versioned ? { versioned: true } : {}),
      lifecycleRules: [
        {
          id: 'abort-incomplete-multipart-uploads',
          abortIncompleteMultipartUploadAfter: Duration.days(props.abortIncompleteMultipartUploadAfterDays ?? 1),
          ...(props.expireObjectsAfterDays ? { expiration: Duration.days(props.expireObjectsAfterDays) } : {}),
        },
        ...(props.versioned
          ? [
              {
                id: 'expire-noncurrent-versions',
                noncurrentVersionExpiration: Duration.days(props.noncurrentVersionExpirationDays ?? 1),
              },
              // A separate rule: S3 refuses ExpiredObjectDeleteMarker beside other expiration actions.
              { id: 'remove-expired-delete-markers', expiredObjectDeleteMarker: true },
            ]
          : []),
      ],
    });
    if (!props.versioned) {
      acknowledgeCheckov(
        this.bucket,
        CheckovCheck.S3_VERSIONING,
        'Not versioned on purpose: every write and delete of what rerun owns is conditional (If-None-Match, If-Match), ' +
          'outputs are rebuilt from their inputs, and versioning would keep every replaced output and turn deletes into ' +
          'delete markers. The input bucket is versioned (its events then name each write).',
      );
    }
    if (!props.accessLogsBucket) {
      acknowledgeCheckov(
        this.bucket,
        CheckovCheck.S3_ACCESS_LOGGING,
        'The access-log bucket itself: logging it into itself would loop (the data buckets log here).',
      );
    }
  }
}
