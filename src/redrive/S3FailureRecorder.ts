import { createHash } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type Logger, silentLogger } from '../logging/logger.js';
import { httpStatus, type S3ObjectStore, type WriteCondition, WriteStatus } from '../s3/S3ObjectStore.js';
import { topology } from '../topology.js';
import type { FailedDelivery, FailureRecorder } from './FailureRecorder.js';
import {
  FAILURE_RECORD_SCHEMA,
  type FailureRecord,
  failureRecordKey,
  giveUpReason,
  parseFailureRecord,
  queueNameOfArn,
} from './failureRecord.js';

/** Options of {@link S3FailureRecorder}. */
export interface S3FailureRecorderOptions {
  readonly store: S3ObjectStore;
  /** Used to read a queue's maxReceiveCount from its RedrivePolicy (once per queue and container). */
  readonly sqs: SQSClient;
  /** The bucket that holds the records (the output bucket). */
  readonly bucket: string;
  /** @default topology.failurePrefix ('failures/') */
  readonly prefix?: string;
  /**
   * The queue's maxReceiveCount, when known; otherwise it is read from the queue's RedrivePolicy
   * (GetQueueAttributes, which the worker's event source mapping already allows), so the record
   * follows the queue's actual setting, also when it was changed outside the topology.
   * @default read from the queue
   */
  readonly maxReceiveCount?: number;
  /** The clock of `failedAt` (epoch ms). @default Date.now */
  readonly now?: () => number;
  /** @default silentLogger */
  readonly logger?: Logger;
}

/**
 * Stores failure records as JSON objects in S3 (`failures/{queue}/{messageId}.json`). Writes are
 * conditional like every other write of the pipeline: create-only, and when a record of the same
 * message exists (an earlier non-retryable failure of the same message), compare-and-swap on its
 * ETag, so the last give-up wins and nothing is blindly overwritten.
 *
 * @example
 * const recorder = new S3FailureRecorder({ store: new S3ObjectStore(s3), sqs, bucket: 'rerun-output' });
 * const record = await recorder.read('rerun-normalize-queue', messageId);
 */
export class S3FailureRecorder implements FailureRecorder {
  private readonly prefix: string;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly maxReceiveCounts = new Map<string, Promise<number | undefined>>();

  constructor(private readonly options: S3FailureRecorderOptions) {
    this.prefix = options.prefix ?? topology.failurePrefix;
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? silentLogger;
  }

  async record(failure: FailedDelivery): Promise<string | undefined> {
    try {
      const maxReceiveCount = await this.maxReceiveCountOf(failure.queueArn);
      const givenUp = giveUpReason(
        {
          receiveCount: failure.receiveCount,
          ...(failure.outcome.retryable !== undefined ? { retryable: failure.outcome.retryable } : {}),
        },
        maxReceiveCount,
      );
      if (!givenUp) return undefined;
      const queueName = queueNameOfArn(failure.queueArn);
      const record: FailureRecord = {
        schema: FAILURE_RECORD_SCHEMA,
        queueName,
        queueArn: failure.queueArn,
        messageId: failure.messageId,
        receiveCount: failure.receiveCount,
        ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
        givenUp,
        retryable: failure.outcome.retryable !== false,
        reason: failure.outcome.reason,
        ...(failure.subject ? { subject: failure.subject } : {}),
        failedAt: new Date(this.now()).toISOString(),
      };
      const key = failureRecordKey(this.prefix, queueName, failure.messageId);
      await this.write(key, Buffer.from(`${JSON.stringify(record)}\n`, 'utf8'));
      return key;
    } catch (error) {
      this.logger.warn('could not record why the message was given up on', {
        messageId: failure.messageId,
        error,
      });
      return undefined;
    }
  }

  /** The failure record of a message, or undefined when there is none. */
  async read(queueName: string, messageId: string): Promise<FailureRecord | undefined> {
    const key = failureRecordKey(this.prefix, queueName, messageId);
    try {
      const out = await this.options.store.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return parseFailureRecord(await (out.Body?.transformToByteArray() ?? Promise.resolve(new Uint8Array())));
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  private async write(key: string, body: Buffer): Promise<void> {
    const { store, bucket } = this.options;
    const sha256Base64 = createHash('sha256').update(body).digest('base64');
    let condition: WriteCondition = { ifNoneMatch: '*' };
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await store.put(bucket, key, body, {
        condition,
        metadata: {},
        sha256Base64,
        contentType: 'application/json',
      });
      if (result.status === WriteStatus.WRITTEN) return;
      if (result.status === WriteStatus.PRECONDITION_FAILED) {
        // A record of this message exists (an earlier give-up): replace it with the newer one.
        const head = await store.head(bucket, key);
        condition = head ? { ifMatch: head.etag } : { ifNoneMatch: '*' };
      } else if (result.status === WriteStatus.MISSING) {
        condition = { ifNoneMatch: '*' };
      }
    }
    throw new Error(`failure record s3://${bucket}/${key} kept changing under concurrent writers`);
  }

  private maxReceiveCountOf(queueArn: string): Promise<number | undefined> {
    if (this.options.maxReceiveCount !== undefined) return Promise.resolve(this.options.maxReceiveCount);
    let pending = this.maxReceiveCounts.get(queueArn);
    if (!pending) {
      pending = this.readMaxReceiveCount(queueArn);
      pending.catch(() => this.maxReceiveCounts.delete(queueArn));
      this.maxReceiveCounts.set(queueArn, pending);
    }
    return pending;
  }

  private async readMaxReceiveCount(queueArn: string): Promise<number | undefined> {
    const [, , , , account, name] = queueArn.split(':');
    const url = (
      await this.options.sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
    ).QueueUrl;
    const attributes = await this.options.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['RedrivePolicy'] }),
    );
    const policy = attributes.Attributes?.RedrivePolicy;
    if (!policy) return undefined;
    const count = Number((JSON.parse(policy) as { maxReceiveCount?: unknown }).maxReceiveCount);
    return Number.isFinite(count) ? count : undefined;
  }
}
