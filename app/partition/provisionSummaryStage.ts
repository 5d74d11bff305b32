import { CreateQueueCommand, GetQueueUrlCommand, type QueueAttributeName } from '@aws-sdk/client-sqs';
import { ensureQueue, ensureQueueAttributes, ProvisionAction } from '../../local/provision.js';
import type { AwsClients } from '../../src/aws/clients.js';
import { topology as defaultTopology, type Topology, workerQueueNames } from '../topology.js';

/** Options of {@link provisionSummaryStage}. */
export interface ProvisionSummaryStageOptions {
  readonly clients: Pick<AwsClients, 'sqs'>;
  /**
   * Names of the summarize queue and its DLQ.
   * @default workerQueueNames(topology.appName, topology.summarize)
   */
  readonly names?: { readonly queue: string; readonly dlq: string };
  /** @default topology (app/topology.ts) */
  readonly topology?: Topology;
}

/** The provisioned summary stage. */
export interface SummaryStageResources {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
  readonly actions: readonly { readonly resource: string; readonly action: ProvisionAction }[];
}

/**
 * Idempotently creates the summary stage's queues as the stack does (src/cdk/SqsWorker.ts
 * with `topology.summarize`): a FIFO work queue with content-based deduplication, the topology's
 * visibility timeout and retention, a redrive policy to a FIFO DLQ, and the DLQ's `byQueue` redrive
 * allow policy. A second run sends no creating or modifying request (moto does not report
 * RedriveAllowPolicy, so that one is sent again there, reported as `sent`).
 *
 * @example
 * const stage = await provisionSummaryStage({ clients, names: workerQueueNames('rerun', topology.summarize) });
 */
export async function provisionSummaryStage(options: ProvisionSummaryStageOptions): Promise<SummaryStageResources> {
  const t = options.topology ?? defaultTopology;
  const w = t.summarize;
  const names = options.names ?? workerQueueNames(t.appName, w);
  const fifo = w.fifo === true;
  const actions: { resource: string; action: ProvisionAction }[] = [];

  const dlqCreated = fifo && (await createFifoIfMissing(options.clients, names.dlq, {}));
  const dlq = await ensureQueue(options.clients, names.dlq, {
    MessageRetentionPeriod: String(w.dlqRetentionDays * 86_400),
  });
  actions.push({ resource: `queue ${names.dlq}`, action: dlqCreated ? ProvisionAction.CREATED : dlq.action });

  const queueCreated = fifo && (await createFifoIfMissing(options.clients, names.queue, {}));
  const queue = await ensureQueue(options.clients, names.queue, {
    VisibilityTimeout: String(w.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(w.queueRetentionDays * 86_400),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: w.maxReceiveCount }),
    ...(fifo ? { ContentBasedDeduplication: 'true' } : {}),
  });
  actions.push({ resource: `queue ${names.queue}`, action: queueCreated ? ProvisionAction.CREATED : queue.action });

  const allow = await ensureQueueAttributes(options.clients, dlq.url, {
    RedriveAllowPolicy: JSON.stringify({ redrivePermission: 'byQueue', sourceQueueArns: [queue.arn] }),
  });
  actions.push({ resource: `queue ${names.dlq} redrive-allow policy`, action: allow });

  return { queueUrl: queue.url, queueArn: queue.arn, dlqUrl: dlq.url, dlqArn: dlq.arn, actions };
}

/**
 * `FifoQueue` can only be given when a queue is created (SetQueueAttributes refuses it), so a FIFO
 * queue is created here first and its other attributes are then brought in line by ensureQueue.
 */
async function createFifoIfMissing(
  clients: Pick<AwsClients, 'sqs'>,
  name: string,
  attributes: Partial<Record<QueueAttributeName, string>>,
): Promise<boolean> {
  try {
    await clients.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    return false;
  } catch (error) {
    const code = (error as { name?: string }).name ?? '';
    if (code !== 'QueueDoesNotExist' && code !== 'AWS.SimpleQueueService.NonExistentQueue') throw error;
  }
  await clients.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { ...attributes, FifoQueue: 'true' } }));
  return true;
}
