import { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The checkov checks the constructs accept on some resources, each acknowledged with its reason. */
export const CheckovCheck = {
  /** S3 bucket versioning. */
  S3_VERSIONING: 'CKV_AWS_21',
  /** S3 server access logging. */
  S3_ACCESS_LOGGING: 'CKV_AWS_18',
  /** SQS encryption with a KMS key. */
  SQS_KMS: 'CKV_AWS_27',
  /** DynamoDB encryption with a customer managed key. */
  DYNAMODB_CMK: 'CKV_AWS_119',
  /** Lambda inside a VPC. */
  LAMBDA_VPC: 'CKV_AWS_117',
  /** Lambda dead-letter queue (asynchronous invocations). */
  LAMBDA_DLQ: 'CKV_AWS_116',
  /** Lambda reserved concurrency. */
  LAMBDA_CONCURRENCY: 'CKV_AWS_115',
  /** Lambda environment variables encrypted with a customer managed key. */
  LAMBDA_ENV_CMK: 'CKV_AWS_173',
  /** CloudWatch Logs encrypted with a KMS key. */
  LOGS_KMS: 'CKV_AWS_158',
} as const;
export type CheckovCheck = (typeof CheckovCheck)[keyof typeof CheckovCheck];

/**
 * Records in the template that checkov should skip `check` on `scope`'s CloudFormation resource, with
 * the reason (checkov reads `Metadata.checkov.skip` of each resource, and prints the reason with the
 * skip). A resource keeps every skip it is given; `scope` is the resource or a construct whose
 * default child is it.
 *
 * @example
 * acknowledgeCheckov(queue, CheckovCheck.SQS_KMS, 'SSE-SQS encrypts at rest; no key policy to manage');
 */
export function acknowledgeCheckov(scope: IConstruct, check: CheckovCheck, reason: string): void {
  const resource = scope instanceof CfnResource ? scope : scope.node.defaultChild;
  if (!(resource instanceof CfnResource)) {
    throw new Error(`acknowledgeCheckov: ${scope.node.path} has no CloudFormation resource to carry the skip`);
  }
  const current = (resource.getMetadata('checkov') as { skip?: { id: string; comment: string }[] } | undefined) ?? {};
  const skip = (current.skip ?? []).filter((s) => s.id !== check);
  resource.addMetadata('checkov', { ...current, skip: [...skip, { id: check, comment: reason }] });
}
