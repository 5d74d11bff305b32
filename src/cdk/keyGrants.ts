import { Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { checkOptions } from '../options/checkOptions.js';
import { StackConfigurationInvalidError } from './errors.js';

/** The services that use a customer managed key on a worker's behalf. */
export const KeyService = {
  S3: 's3',
  SQS: 'sqs',
  DYNAMODB: 'dynamodb',
} as const;
export type KeyService = (typeof KeyService)[keyof typeof KeyService];

/**
 * What each service needs of the caller's key permissions:
 * - S3 (SSE-KMS, AWS KMS Developer Guide "How Amazon S3 uses AWS KMS"; S3 User Guide "Using
 *   server-side encryption with AWS KMS keys"): `kms:Decrypt` to read; `kms:GenerateDataKey` to
 *   write, plus `kms:Decrypt` for a multipart upload (its parts are encrypted under one data key)
 *   and for a CopyObject of an encrypted source.
 * - SQS (SQS Developer Guide, "Key management"): `kms:Decrypt` to receive; `kms:GenerateDataKey`
 *   and `kms:Decrypt` to send.
 * - DynamoDB (DynamoDB Developer Guide, "Using customer managed keys"): the actions of the AWS
 *   managed `aws/dynamodb` key's policy that an item operation uses: `kms:Decrypt`, `kms:Encrypt`,
 *   `kms:GenerateDataKey` and `kms:DescribeKey`.
 */
const ACTIONS: Record<KeyService, { read: string[]; write: string[] }> = {
  s3: { read: ['kms:Decrypt'], write: ['kms:Decrypt', 'kms:GenerateDataKey'] },
  sqs: { read: ['kms:Decrypt'], write: ['kms:Decrypt', 'kms:GenerateDataKey'] },
  dynamodb: {
    read: ['kms:Decrypt', 'kms:DescribeKey'],
    write: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
  },
};

/**
 * Lets `grantee` use `key` through `service` only (`kms:ViaService`), with exactly the actions
 * that service needs to read (and, with `write`, to write) data encrypted under it. The grant is
 * an identity-policy statement on the key's ARN: enough for a key of this account whose policy
 * delegates to IAM (the default key policy does); a key of another account must allow the role
 * in its own policy as well.
 *
 * @example
 * grantKeyUseVia(worker.function, bucket.encryptionKey, KeyService.S3, { write: true });
 */
export function grantKeyUseVia(
  grantee: IGrantable,
  key: IKey,
  service: KeyService,
  options: { readonly write?: boolean } = {},
): void {
  checkOptions('grantKeyUseVia', options, { write: true } as const, (m) => new StackConfigurationInvalidError([m]));
  const region = Stack.of(key).region;
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: options.write ? ACTIONS[service].write : ACTIONS[service].read,
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `${service}.${region}.amazonaws.com` } },
    }),
  );
}
