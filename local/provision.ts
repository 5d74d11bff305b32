import {
  CreateBucketCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketNotificationConfigurationCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  type LifecycleRule,
  type NotificationConfiguration,
  PutBucketLifecycleConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  PutBucketVersioningCommand,
  type QueueConfiguration,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { AwsClients } from '../src/aws/clients.js';
import { LocalSetupError } from './errors.js';

/**
 * Idempotent creation of local buckets and queues: each `ensure*` reuses what exists, sets again only
 * an attribute that differs, and reports what it did. The reference application composes them into
 * its local pipeline (`app/dev/provisionLocalStack.ts`).
 */

/** What provisioning did to one resource. */
export const ProvisionAction = {
  CREATED: 'created',
  UPDATED: 'updated',
  UNCHANGED: 'unchanged',
  /**
   * Sent, though it may have been in place already: the endpoint does not report the attribute back
   * (moto 5 and RedriveAllowPolicy), so neither "updated" nor "unchanged" can be told.
   */
  SENT: 'sent',
} as const;
export type ProvisionAction = (typeof ProvisionAction)[keyof typeof ProvisionAction];

/**
 * Puts `rule` into the bucket's lifecycle configuration, keeping every other rule; sends nothing when
 * a rule with its ID is already in place as given.
 */
export async function ensureLifecycleRule(
  clients: Pick<AwsClients, 's3'>,
  bucket: string,
  rule: LifecycleRule,
): Promise<ProvisionAction> {
  let rules: LifecycleRule[] = [];
  try {
    rules = (await clients.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }))).Rules ?? [];
  } catch (error) {
    if ((error as { name?: string }).name !== 'NoSuchLifecycleConfiguration') throw error;
  }
  const current = rules.find((r) => r.ID === rule.ID);
  if (current && sameLifecycleRule(current, rule)) return ProvisionAction.UNCHANGED;
  // PutBucketLifecycleConfiguration replaces the whole configuration: keep everyone else's rules.
  await clients.s3.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: bucket,
      LifecycleConfiguration: { Rules: [...rules.filter((r) => r.ID !== rule.ID), rule] },
    }),
  );
  return current ? ProvisionAction.UPDATED : ProvisionAction.CREATED;
}

/**
 * Turns versioning on for `bucket` unless it is on already. As RerunPipeline's input bucket: in a
 * versioned bucket every write sends its own event, so a fresh event's eTag may prove an output
 * current (src/done/eventProvesCurrent.ts).
 *
 * @example
 * await ensureVersioning(clients, 'rerun-input');
 */
export async function ensureVersioning(clients: Pick<AwsClients, 's3'>, bucket: string): Promise<ProvisionAction> {
  const current = await clients.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }));
  if (current.Status === 'Enabled') return ProvisionAction.UNCHANGED;
  await clients.s3.send(
    new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
  );
  return current.Status === undefined ? ProvisionAction.CREATED : ProvisionAction.UPDATED;
}

function sameLifecycleRule(a: LifecycleRule, b: LifecycleRule): boolean {
  return (
    a.Status === b.Status &&
    (a.Filter?.Prefix ?? '') === (b.Filter?.Prefix ?? '') &&
    a.AbortIncompleteMultipartUpload?.DaysAfterInitiation === b.AbortIncompleteMultipartUpload?.DaysAfterInitiation &&
    a.NoncurrentVersionExpiration?.NoncurrentDays === b.NoncurrentVersionExpiration?.NoncurrentDays &&
    a.Expiration?.ExpiredObjectDeleteMarker === b.Expiration?.ExpiredObjectDeleteMarker
  );
}

/**
 * Lets S3 notifications from the input bucket (and only from it, in this account) send to the
 * queue, as S3 requires before it accepts a QueueConfiguration.
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/ways-to-add-notification-config-to-bucket.html
 */
export function s3SendPolicy(queueArn: string, inputBucket: string): Record<string, unknown> {
  const account = queueArn.split(':')[4] ?? '';
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'AllowInputBucketNotifications',
        Effect: 'Allow',
        Principal: { Service: 's3.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: queueArn,
        Condition: {
          ArnLike: { 'aws:SourceArn': `arn:aws:s3:::${inputBucket}` },
          StringEquals: { 'aws:SourceAccount': account },
        },
      },
    ],
  };
}

export async function ensureBucket(
  clients: Pick<AwsClients, 's3'>,
  bucket: string,
  region: string,
): Promise<ProvisionAction> {
  try {
    await clients.s3.send(new HeadBucketCommand({ Bucket: bucket }));
    return ProvisionAction.UNCHANGED;
  } catch (error) {
    const status = httpStatus(error);
    if (status === 403) {
      throw new LocalSetupError(
        `Cannot use bucket ${bucket}: HeadBucket answered 403, so another account owns this name. Choose another app name.`,
        { cause: error },
      );
    }
    if (status !== 404) throw error;
  }
  try {
    await clients.s3.send(
      new CreateBucketCommand({
        Bucket: bucket,
        // us-east-1 is the one region where a LocationConstraint is refused.
        ...(region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: region as never } }),
      }),
    );
    return ProvisionAction.CREATED;
  } catch (error) {
    // A concurrent run created it between our HEAD and CREATE.
    if ((error as { name?: string }).name === 'BucketAlreadyOwnedByYou') return ProvisionAction.UNCHANGED;
    throw error;
  }
}

/**
 * Creates a queue with `attributes`, or brings an existing one's attributes to them (see
 * ensureQueueAttributes); returns its URL, ARN and what was done.
 *
 * @example
 * const dlq = await ensureQueue(clients, 'rerun-summarize-dlq.fifo', { FifoQueue: 'true' });
 */
export async function ensureQueue(
  clients: Pick<AwsClients, 'sqs'>,
  name: string,
  attributes: Partial<Record<QueueAttributeName, string>>,
): Promise<{ url: string; arn: string; action: ProvisionAction }> {
  let url: string | undefined;
  try {
    url = (await clients.sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if (!isQueueMissing(error)) throw error;
  }
  let action: ProvisionAction;
  if (url === undefined) {
    const created = await clients.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    url = created.QueueUrl as string;
    action = ProvisionAction.CREATED;
  } else {
    action = await ensureQueueAttributes(clients, url, attributes);
  }
  const arn = (await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] })))
    .Attributes?.QueueArn;
  if (!arn) throw new LocalSetupError(`The queue ${url} did not report its QueueArn.`);
  return { url, arn, action };
}

/**
 * Sets `desired` on an existing queue when any value differs (compared by meaning, not by text).
 *
 * @example
 * await ensureQueueAttributes(clients, dlqUrl, { RedriveAllowPolicy: JSON.stringify(policy) });
 */
export async function ensureQueueAttributes(
  clients: Pick<AwsClients, 'sqs'>,
  url: string,
  desired: Partial<Record<QueueAttributeName, string>>,
): Promise<ProvisionAction> {
  const current =
    (await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))).Attributes ??
    {};
  const differing = Object.entries(desired)
    .filter(([name, value]) => canonical(current[name as QueueAttributeName]) !== canonical(value))
    .map(([name]) => name as QueueAttributeName);
  if (differing.length === 0) return ProvisionAction.UNCHANGED;
  // Send every desired attribute in one request: moto clears a queue's Policy when a
  // SetQueueAttributes call omits it.
  await clients.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: desired }));
  // Only attributes the queue did not report differed: read them back once. Still unreported, the
  // endpoint does not return them at all, so this run cannot say whether anything changed.
  if (differing.every((name) => current[name] === undefined)) {
    const after =
      (await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))).Attributes ??
      {};
    if (differing.every((name) => after[name] === undefined)) return ProvisionAction.SENT;
  }
  return ProvisionAction.UPDATED;
}

export async function ensureNotification(
  clients: Pick<AwsClients, 's3'>,
  bucket: string,
  desired: QueueConfiguration,
): Promise<ProvisionAction> {
  const current = await clients.s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: bucket }));
  const queues = current.QueueConfigurations ?? [];
  const ours = queues.find((q) => q.Id === desired.Id);
  if (ours && notificationKey(ours) === notificationKey(desired)) return ProvisionAction.UNCHANGED;
  // PutBucketNotificationConfiguration replaces the whole configuration: keep everyone else's.
  const configuration: NotificationConfiguration = {
    QueueConfigurations: [...queues.filter((q) => q.Id !== desired.Id), desired],
    ...(current.TopicConfigurations?.length ? { TopicConfigurations: current.TopicConfigurations } : {}),
    ...(current.LambdaFunctionConfigurations?.length
      ? { LambdaFunctionConfigurations: current.LambdaFunctionConfigurations }
      : {}),
    ...(current.EventBridgeConfiguration ? { EventBridgeConfiguration: current.EventBridgeConfiguration } : {}),
  };
  await clients.s3.send(
    new PutBucketNotificationConfigurationCommand({ Bucket: bucket, NotificationConfiguration: configuration }),
  );
  return ours ? ProvisionAction.UPDATED : ProvisionAction.CREATED;
}

function notificationKey(q: QueueConfiguration): string {
  const rules = (q.Filter?.Key?.FilterRules ?? [])
    .map((r) => `${String(r.Name).toLowerCase()}=${r.Value}`)
    .sort()
    .join('&');
  return `${q.QueueArn}|${[...(q.Events ?? [])].sort().join(',')}|${rules}`;
}

/** JSON attribute values compare by meaning: key order, whitespace and "5" vs 5 do not matter. */
function canonical(value: string | undefined): string {
  if (value === undefined) return '';
  const trimmed = value.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return trimmed;
  try {
    return JSON.stringify(normalizeJson(JSON.parse(trimmed)));
  } catch {
    return trimmed;
  }
}

function normalizeJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, normalizeJson((value as Record<string, unknown>)[k])]),
    );
  }
  if (typeof value === 'number') return String(value);
  return value;
}

function isQueueMissing(error: unknown): boolean {
  const name = (error as { name?: string; Code?: string }).name ?? '';
  return name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue';
}

function httpStatus(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}
