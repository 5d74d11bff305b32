import { createHash } from 'node:crypto';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { WorkerConfigurationError } from '../errors.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { readWholeObject } from '../s3/readWholeObject.js';
import { httpStatus, type S3ObjectStore, type WriteCondition, WriteStatus } from '../s3/S3ObjectStore.js';
import type { CoveredInput } from '../worker/outcomes.js';
import type { FailedDelivery, FailureRecorder, StartedDelivery, StartedRecord } from './FailureRecorder.js';
import { failureIndexInputPrefix, failureIndexKey, objectOfSubject } from './failureIndex.js';
import {
  DEFAULT_FAILURE_PREFIX,
  FAILURE_RECORD_SCHEMA,
  type FailureRecord,
  failureRecordKey,
  GiveUpReason,
  giveUpReason,
  LAST_ATTEMPT_STARTED_REASON,
  parseFailureRecord,
  queueNameOfArn,
} from './failureRecord.js';
import { maxReceiveCountOfPolicy } from './redrivePolicy.js';
import { removeSucceededRecord } from './removeSucceededRecord.js';

/**
 * The message of the warn line a recorder writes when a failure record cannot be written (a 403 on
 * the failure prefix, say), with the message id, the reason and the error: where the cause is left
 * for `rerun redrive` (app/redrive/failureFromLogs.ts).
 *
 * @example
 * line.message === RECORDER_WRITE_FAILED_MESSAGE; // the recorder could not write this message's record
 */
export const RECORDER_WRITE_FAILED_MESSAGE = 'could not record why the message was given up on';

/** Options of {@link S3FailureRecorder}. */
export interface S3FailureRecorderOptions {
  readonly store: S3ObjectStore;
  /** Used to read a queue's maxReceiveCount from its RedrivePolicy (once per queue and container). */
  readonly sqs: SQSClient;
  /** The bucket that holds the records (the output bucket). */
  readonly bucket: string;
  /** @default DEFAULT_FAILURE_PREFIX ('failures/') */
  readonly prefix?: string;
  /**
   * The queue's maxReceiveCount, when known; otherwise it is read from the queue's RedrivePolicy
   * (GetQueueAttributes, which the worker's event source mapping already allows), so the record
   * follows the queue's actual setting, also when it was changed outside the topology.
   * @default read from the queue
   */
  readonly maxReceiveCount?: number;
  /**
   * How to read a queue's maxReceiveCount (by the queue's ARN) when `maxReceiveCount` is not given: a
   * handler that looks its queues up already passes its own lookup, so that one GetQueueUrl and one
   * GetQueueAttributes per queue serve both.
   * @default GetQueueUrl, then GetQueueAttributes of the RedrivePolicy, once per queue
   */
  readonly maxReceiveCountOf?: (queueArn: string) => Promise<number | undefined>;
  /** The clock of `failedAt` (epoch ms). @default Date.now */
  readonly now?: () => number;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * Also index each record of an S3 object by that object (src/failures/failureIndex.ts), so that
   * `rerun status` finds from a listing which inputs of a day have a failure record. Off for
   * handlers whose messages are not about one input (e.g. partition tasks).
   * @default true
   */
  readonly indexByObject?: boolean;
}

/** The names of {@link S3FailureRecorderOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const S3_FAILURE_RECORDER_OPTION_NAMES = {
  bucket: true,
  indexByObject: true,
  logger: true,
  maxReceiveCount: true,
  maxReceiveCountOf: true,
  now: true,
  prefix: true,
  sqs: true,
  store: true,
} as const satisfies OptionNames<S3FailureRecorderOptions>;

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
  private readonly indexByObject: boolean;
  private readonly maxReceiveCounts = new Map<string, Promise<number | undefined>>();

  constructor(private readonly options: S3FailureRecorderOptions) {
    checkOptions(
      'S3FailureRecorder',
      options,
      S3_FAILURE_RECORDER_OPTION_NAMES,
      (m) => new WorkerConfigurationError(m),
    );
    // Typed as a string, but a JavaScript caller (or an unset variable) can pass anything: refused here,
    // not on the first failure, whose record would then go nowhere.
    if (typeof options.bucket !== 'string' || options.bucket === '') {
      throw new WorkerConfigurationError(
        `S3FailureRecorder: bucket must be the name of the bucket that holds the failure records, got ${JSON.stringify(options.bucket) ?? 'undefined'}`,
      );
    }
    this.prefix = options.prefix ?? DEFAULT_FAILURE_PREFIX;
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? silentLogger;
    this.indexByObject = options.indexByObject ?? true;
  }

  async record(failure: FailedDelivery, started?: StartedRecord): Promise<string | undefined> {
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
      const deferred = failure.outcome.deferredSeconds;
      // A deferral (ledger in progress elsewhere, a webhook's Retry-After) spends a receive like any
      // failure: when it spent the last one, say so, or the DLQ holds a healthy message that looks
      // like it failed.
      const reason =
        givenUp === GiveUpReason.LAST_RECEIVE && deferred !== undefined
          ? `receives used up by deferrals: the last receive (${failure.receiveCount} of ${maxReceiveCount}) was deferred ${deferred} s, so the queue's redrive policy moves it to the DLQ when the deferral ends; last reason: ${failure.outcome.reason}`
          : failure.outcome.reason;
      const record: FailureRecord = {
        schema: FAILURE_RECORD_SCHEMA,
        queueName,
        queueArn: failure.queueArn,
        messageId: failure.messageId,
        receiveCount: failure.receiveCount,
        ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
        givenUp,
        retryable: failure.outcome.retryable !== false,
        reason,
        ...(failure.outcome.error ? { error: failure.outcome.error } : {}),
        ...(failure.subject ? { subject: failure.subject } : {}),
        failedAt: new Date(this.now()).toISOString(),
      };
      const key = failureRecordKey(this.prefix, queueName, failure.messageId);
      await this.write(key, recordBody(record), started?.key === key ? { ifMatch: started.etag } : undefined);
      await this.index(failure.subject, queueName, failure.messageId, givenUp);
      return key;
    } catch (error) {
      // The record's place could not be written, and there is no other: this line (message id,
      // the recorder's error, the reason) is what `rerun redrive --stack` reads back instead.
      this.logger.warn(RECORDER_WRITE_FAILED_MESSAGE, {
        messageId: failure.messageId,
        reason: failure.outcome.reason,
        error,
      });
      return undefined;
    }
  }

  async attemptStarted(delivery: StartedDelivery): Promise<StartedRecord | undefined> {
    try {
      const maxReceiveCount = await this.maxReceiveCountOf(delivery.queueArn);
      if (maxReceiveCount === undefined || delivery.receiveCount < maxReceiveCount) return undefined;
      const queueName = queueNameOfArn(delivery.queueArn);
      const key = failureRecordKey(this.prefix, queueName, delivery.messageId);
      const record: FailureRecord = {
        schema: FAILURE_RECORD_SCHEMA,
        queueName,
        queueArn: delivery.queueArn,
        messageId: delivery.messageId,
        receiveCount: delivery.receiveCount,
        maxReceiveCount,
        givenUp: GiveUpReason.LAST_RECEIVE,
        retryable: true,
        reason: LAST_ATTEMPT_STARTED_REASON,
        ...(delivery.subject ? { subject: delivery.subject } : {}),
        failedAt: new Date(this.now()).toISOString(),
      };
      const { store, bucket } = this.options;
      const body = recordBody(record);
      const result = await store.put(bucket, key, body, {
        condition: { ifNoneMatch: '*' },
        metadata: {},
        sha256Base64: sha256Base64(body),
        contentType: 'application/json',
      });
      if (result.status === WriteStatus.WRITTEN) {
        const started = { key, etag: result.etag, subject: delivery.subject };
        try {
          await this.index(delivery.subject, queueName, delivery.messageId, GiveUpReason.LAST_RECEIVE);
        } catch (error) {
          // The record is written: its handle must reach the attempt's end, which completes or removes it
          // (and an entry a lost answer left); else a success leaves a record of a message never dead-lettered.
          this.logger.warn('could not index the record that the last attempt of the message started', { key, error });
        }
        return started;
      }
      // A record of this message exists already (an earlier non-retryable failure): its reason says
      // more than "started"; keep it, and complete or remove that one when the attempt ends.
      const head = await store.head(bucket, key);
      return head ? { key, etag: head.etag, subject: delivery.subject, kept: true } : undefined;
    } catch (error) {
      this.logger.warn('could not record that the last attempt of the message started', {
        messageId: delivery.messageId,
        error,
      });
      return undefined;
    }
  }

  async attemptSucceeded(started: StartedRecord): Promise<void> {
    const { store, bucket } = this.options;
    try {
      await removeSucceededRecord({ store, bucket, prefix: this.prefix, indexByObject: this.indexByObject }, started);
    } catch (error) {
      this.logger.warn('could not remove the provisional failure record of a message that succeeded', {
        key: started.key,
        error,
      });
    }
  }

  async retrySucceeded(delivery: StartedDelivery): Promise<void> {
    // A first receive follows no attempt that could have written a record: no request at all.
    if (delivery.receiveCount <= 1) return;
    const queueName = queueNameOfArn(delivery.queueArn);
    const key = failureRecordKey(this.prefix, queueName, delivery.messageId);
    try {
      const found = await this.readWithEtag(key);
      // Only what an earlier receive wrote: a record of this receive or a later one is another
      // delivery's, still running or given up since, and stands.
      if (!found || found.record.receiveCount >= delivery.receiveCount) return;
      const object = this.indexByObject ? objectOfSubject(found.record.subject) : undefined;
      if (object) {
        const entry = failureIndexKey(this.prefix, object, queueName, delivery.messageId, found.record.givenUp);
        const seen = await this.options.store.head(this.options.bucket, entry);
        if (seen) await this.options.store.deleteIfMatch(this.options.bucket, entry, seen.etag);
      }
      // If-Match on the ETag read: a record another delivery replaced since stands.
      await this.options.store.deleteIfMatch(this.options.bucket, key, found.etag);
    } catch (error) {
      this.logger.warn('could not remove the failure record of a message whose retry succeeded', { key, error });
    }
  }

  async inputCovered(input: CoveredInput): Promise<void> {
    if (!this.indexByObject) return;
    const { store, bucket } = this.options;
    const folder = failureIndexInputPrefix(this.prefix, input);
    try {
      // One listing of this input's entries: the whole cost of a success when it has none.
      const listed = await store.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: folder }));
      const entries = (listed.Contents ?? []).flatMap((o) =>
        o.Key && o.ETag ? [{ key: o.Key, etag: o.ETag.replace(/"/g, '') }] : [],
      );
      if (entries.length === 0) return;
      // The listing comes first, then the input's HEAD: S3 reads are strongly consistent, so an entry
      // listed before a HEAD that still shows the content the output was built from is a failure of
      // that content or an older one, which this output supersedes. When the input changed since
      // (a newer content, perhaps failing now), nothing is removed: its own success clears it.
      const current = await store.head(input.bucket, input.key);
      if (!current || current.etag !== input.etag) return;
      for (const entry of entries) {
        // If-Match on the listed ETag, like every delete of the pipeline; an entry written after the
        // listing (a failure landing now) was not listed and stands.
        await store.deleteIfMatch(bucket, entry.key, entry.etag);
      }
    } catch (error) {
      this.logger.warn('could not remove the failure index entries of an input that succeeded', {
        input: `s3://${input.bucket}/${input.key}`,
        error,
      });
    }
  }

  /** Writes the index entry of a record about an S3 object (create-only; an existing one is the same entry). */
  private async index(
    subject: string | undefined,
    queueName: string,
    messageId: string,
    givenUp: GiveUpReason,
  ): Promise<void> {
    const object = this.indexByObject ? objectOfSubject(subject) : undefined;
    if (!object) return;
    const body = Buffer.alloc(0);
    await this.options.store.put(
      this.options.bucket,
      failureIndexKey(this.prefix, object, queueName, messageId, givenUp),
      body,
      {
        condition: { ifNoneMatch: '*' },
        metadata: {},
        sha256Base64: sha256Base64(body),
        contentType: 'application/octet-stream',
      },
    );
  }

  /** The failure record of a message, or undefined when there is none. */
  async read(queueName: string, messageId: string): Promise<FailureRecord | undefined> {
    const key = failureRecordKey(this.prefix, queueName, messageId);
    try {
      const { bytes } = await readWholeObject(this.options.store.client, { Bucket: this.options.bucket, Key: key });
      return parseFailureRecord(bytes);
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  /** A record with the ETag it was read at, or undefined when there is none (or it is unreadable). */
  private async readWithEtag(key: string): Promise<{ record: FailureRecord; etag: string } | undefined> {
    try {
      const { client } = this.options.store;
      const { bytes, output } = await readWholeObject(client, { Bucket: this.options.bucket, Key: key });
      const record = parseFailureRecord(bytes);
      const etag = output.ETag?.replace(/"/g, '');
      return record && etag ? { record, etag } : undefined;
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  private async write(key: string, body: Buffer, first?: WriteCondition): Promise<void> {
    const { store, bucket } = this.options;
    const checksum = sha256Base64(body);
    let condition: WriteCondition = first ?? { ifNoneMatch: '*' };
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await store.put(bucket, key, body, {
        condition,
        metadata: {},
        sha256Base64: checksum,
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
    // Not a queue (a Batch Operations job's tasks, batchOperationsFailureSource): no receive count
    // to read, and only non-retryable failures are handed over.
    if (queueArn.split(':')[2] !== 'sqs') return Promise.resolve(undefined);
    let pending = this.maxReceiveCounts.get(queueArn);
    if (!pending) {
      pending = this.options.maxReceiveCountOf?.(queueArn) ?? this.readMaxReceiveCount(queueArn);
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
    return maxReceiveCountOfPolicy(attributes.Attributes?.RedrivePolicy);
  }
}

function recordBody(record: FailureRecord): Buffer {
  return Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
}

function sha256Base64(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64');
}
