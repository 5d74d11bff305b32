import type { QueueConfiguration } from '@aws-sdk/client-s3';
import {
  ensureBucket,
  ensureLifecycleRule,
  ensureNotification,
  ensureQueue,
  ensureQueueAttributes,
  ensureVersioning,
  ProvisionAction,
  s3SendPolicy,
} from '../../local/provision.js';
import type { AwsClients } from '../../src/aws/clients.js';
import { type Logger, silentLogger } from '../../src/logging/logger.js';
import { topology as defaultTopology, INPUT_EVENTS, type ResourceNames, type Topology } from '../topology.js';

/** Options of {@link provisionLocalStack}. */
export interface ProvisionLocalStackOptions {
  /** S3 and SQS clients pointed at the emulator (or an account you own). */
  clients: Pick<AwsClients, 's3' | 'sqs'>;
  /** Resource names, usually `localResourceNames(topology)`. */
  names: ResourceNames;
  /**
   * Prefix, timeouts and retention. Override single values by spreading, e.g.
   * `{ ...topology, normalize: { ...topology.normalize, visibilityTimeoutSeconds: 2, maxReceiveCount: 2 } }`.
   * @default topology (app/topology.ts)
   */
  topology?: Topology;
  /** @default silentLogger */
  logger?: Logger;
  /**
   * Version the input bucket, as RerunPipeline's is (replaced versions expire after a day). Off for
   * `rerun dev`: moto sends no event for a delete in a versioned bucket (S3 sends
   * `ObjectRemoved:DeleteMarkerCreated`), so deletes would not propagate, and its events carry no
   * `versionId`, so versioning would save nothing there (docs/EMULATORS.md). Tests and the bench that
   * send S3's events by hand, with the upload's version, turn it on to measure the deployed path.
   * @default false
   */
  versionedInput?: boolean;
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
 * emulator cannot report a value: moto 5 does not return `RedriveAllowPolicy`, so it is sent again and
 * reported as `sent`, never as `updated`).
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
    // As in the stack when asked (versionedInput): every write then sends its own event.
    if (bucket === names.inputBucket && options.versionedInput === true) {
      note(`versioning ${bucket}`, await ensureVersioning(clients, bucket));
      note(
        `lifecycle rule ${bucket} expire-noncurrent-versions`,
        await ensureLifecycleRule(clients, bucket, {
          ID: 'expire-noncurrent-versions',
          Status: 'Enabled',
          Filter: { Prefix: '' },
          NoncurrentVersionExpiration: { NoncurrentDays: t.noncurrentInputVersionDays },
          Expiration: { ExpiredObjectDeleteMarker: true },
        }),
      );
    }
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
