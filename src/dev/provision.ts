import {
  CreateBucketCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketNotificationConfigurationCommand,
  HeadBucketCommand,
  type LifecycleRule,
  type NotificationConfiguration,
  PutBucketLifecycleConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  type QueueConfiguration,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { AwsClients } from '../aws/clients.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { topology as defaultTopology, INPUT_EVENTS, type ResourceNames, type Topology } from '../topology.js';
import { LocalSetupError } from './errors.js';

/** What provisioning did to one resource. */
export const ProvisionAction = { CREATED: 'created', UPDATED: 'updated', UNCHANGED: 'unchanged' } as const;
export type ProvisionAction = (typeof ProvisionAction)[keyof typeof ProvisionAction];

/** Options of {@link provisionLocalStack}. */
export interface ProvisionLocalStackOptions {
  /** S3 and SQS clients pointed at the emulator (or an account you own). */
  clients: Pick<AwsClients, 's3' | 'sqs'>;
  /** Resource names, usually `localResourceNames(topology)`. */
  names: ResourceNames;
  /**
   * Prefix, timeouts and retention. Override single values by spreading, e.g.
   * `{ ...topology, normalize: { ...topology.normalize, visibilityTimeoutSeconds: 2, maxReceiveCount: 2 } }`.
   * @default topology (src/topology.ts)
   */
  topology?: Topology;
  /** @default silentLogger */
  logger?: Logger;
}

/** The provisioned resources. */
export interface LocalStackResources {
  readonly inputBucket: string;
  readonly outputBucket: string;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
  /** What happened to each resource on this run (all `unchanged` when it was already in place). */
  readonly actions: readonly { readonly resource: string; readonly action: ProvisionAction }[];
}

/**
 * Idempotently creates the local pipeline: input and output buckets, the work queue with its
 * redrive policy to the DLQ, the DLQ's redrive-allow policy, the queue policy that lets S3 send,
 * and the input bucket's notification of `s3:ObjectCreated:*` and `s3:ObjectRemoved:*` (INPUT_EVENTS)
 * under `topology.inputPrefix`.
 *
 * Existing resources are reused; an attribute that differs from the topology is set again, and a
 * second run with the same inputs sends no creating or modifying request (except where the
 * emulator cannot report a value: moto 5 does not return `RedriveAllowPolicy`, so it is set again).
 * Setting the notification makes S3 send an `s3:TestEvent` to the queue, which the worker acknowledges.
 *
 * @example
 * const stack = await provisionLocalStack({ clients, names: localResourceNames(topology) });
 * stack.queueUrl; // http://127.0.0.1:40123/123456789012/rerun-normalize-queue
 */
export async function provisionLocalStack(options: ProvisionLocalStackOptions): Promise<LocalStackResources> {
  const { clients, names } = options;
  const t = options.topology ?? defaultTopology;
  const logger = options.logger ?? silentLogger;
  const actions: { resource: string; action: ProvisionAction }[] = [];
  const note = (resource: string, action: ProvisionAction) => {
    actions.push({ resource, action });
    if (action !== ProvisionAction.UNCHANGED) logger.info(`provision: ${action} ${resource}`);
  };
  const region = await clients.s3.config.region();

  for (const bucket of [names.inputBucket, names.outputBucket]) {
    note(`bucket ${bucket}`, await ensureBucket(clients, bucket, region));
    // As in the stack (DataBucket): a worker killed mid-upload leaves a multipart upload behind.
    note(
      `lifecycle rule ${bucket} abort-incomplete-multipart-uploads`,
      await ensureLifecycleRule(clients, bucket, {
        ID: 'abort-incomplete-multipart-uploads',
        Status: 'Enabled',
        Filter: { Prefix: '' },
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: t.abortIncompleteMultipartUploadAfterDays },
      }),
    );
  }

  const dlq = await ensureQueue(clients, names.dlq, {
    MessageRetentionPeriod: String(t.normalize.dlqRetentionDays * 86_400),
  });
  note(`queue ${names.dlq}`, dlq.action);

  // Queue ARNs differ only in their name: the work queue's ARN is known before it exists, so the
  // queue is created with its policy in one request.
  const queueArn = `${dlq.arn.slice(0, dlq.arn.lastIndexOf(':') + 1)}${names.queue}`;
  const queue = await ensureQueue(clients, names.queue, {
    VisibilityTimeout: String(t.normalize.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(t.normalize.queueRetentionDays * 86_400),
    // After maxReceiveCount receives SQS itself moves a message to the DLQ; the worker never does.
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: t.normalize.maxReceiveCount }),
    Policy: JSON.stringify(s3SendPolicy(queueArn, names.inputBucket)),
  });
  note(`queue ${names.queue}`, queue.action);

  // Only the work queue may use this DLQ (RedriveAllowPolicy byQueue), so the DLQ cannot silently
  // collect another queue's failures; it also makes the DLQ the redrive source of StartMessageMoveTask.
  const allow = await ensureQueueAttributes(clients, dlq.url, {
    RedriveAllowPolicy: JSON.stringify({ redrivePermission: 'byQueue', sourceQueueArns: [queue.arn] }),
  });
  note(`queue ${names.dlq} redrive-allow policy`, allow);

  note(
    `notification ${names.inputBucket}/${t.inputPrefix}* -> ${names.queue}`,
    await ensureNotification(clients, names.inputBucket, {
      Id: `${t.appName}-${t.normalize.name}`,
      QueueArn: queue.arn,
      Events: [...INPUT_EVENTS] as QueueConfiguration['Events'],
      Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: t.inputPrefix }] } },
    }),
  );

  return {
    inputBucket: names.inputBucket,
    outputBucket: names.outputBucket,
    queueUrl: queue.url,
    queueArn: queue.arn,
    dlqUrl: dlq.url,
    dlqArn: dlq.arn,
    actions,
  };
}

/**
 * Puts `rule` into the bucket's lifecycle configuration, keeping every other rule; sends nothing when
 * a rule with its ID is already in place as given.
 */
async function ensureLifecycleRule(
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

function sameLifecycleRule(a: LifecycleRule, b: LifecycleRule): boolean {
  return (
    a.Status === b.Status &&
    (a.Filter?.Prefix ?? '') === (b.Filter?.Prefix ?? '') &&
    a.AbortIncompleteMultipartUpload?.DaysAfterInitiation === b.AbortIncompleteMultipartUpload?.DaysAfterInitiation
  );
}

/**
 * Lets S3 notifications from the input bucket (and only from it, in this account) send to the
 * queue, as S3 requires before it accepts a QueueConfiguration.
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/ways-to-add-notification-config-to-bucket.html
 */
function s3SendPolicy(queueArn: string, inputBucket: string): Record<string, unknown> {
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

async function ensureBucket(clients: Pick<AwsClients, 's3'>, bucket: string, region: string): Promise<ProvisionAction> {
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
  const differs = Object.entries(desired).some(
    ([name, value]) => canonical(current[name as QueueAttributeName]) !== canonical(value),
  );
  if (!differs) return ProvisionAction.UNCHANGED;
  // Send every desired attribute in one request: moto clears a queue's Policy when a
  // SetQueueAttributes call omits it.
  await clients.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: desired }));
  return ProvisionAction.UPDATED;
}

async function ensureNotification(
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
