import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { S3ObjectEvent } from '../../src/intake/parseS3Event.js';
import { DynamoModel } from './model/DynamoModel.js';
import { type ObjectChange, S3Model } from './model/S3Model.js';
import { SqsModel } from './model/SqsModel.js';
import type { Actor, Scheduler } from './Scheduler.js';

/** Names of the simulated pipeline's resources. */
export const INPUT_BUCKET = 'in';
export const OUTPUT_BUCKET = 'out';
/** Where the simulated worker writes: its main and quarantine outputs. */
export const OUTPUT_PREFIXES = ['out/', 'quarantine/'];
export const LEDGER_TABLE = 'ledger';
/** The work queue's visibility timeout and the function's timeout, in seconds (6x, as the stack sizes them). */
export const VISIBILITY_TIMEOUT_SECONDS = 60;
export const FUNCTION_TIMEOUT_SECONDS = 10;
export const MAX_RECEIVE_COUNT = 5;

/**
 * The simulated AWS of one execution: the three in-memory services, the pipeline's resources on
 * them (input and output buckets, the work queue with its DLQ and redrive policy, the ledger
 * table), S3's event notifications from the input bucket to the work queue, and SDK-shaped clients
 * whose every request goes through the scheduler.
 */
export class SimWorld {
  readonly s3: S3Model;
  readonly sqs = new SqsModel();
  readonly dynamodb = new DynamoModel();
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** Every event S3 sent for the input bucket, in order (for checks). */
  readonly events: ObjectChange[] = [];
  /** Whether writes to the input bucket send events (off while a configuration builds its start). */
  notifications = true;
  private readonly eventCopies: number;
  private readonly versioned: boolean;

  constructor(
    readonly scheduler: Scheduler,
    options: {
      /** The multipart part size S3 accepts: small, so multipart outputs cost microseconds. */
      minPartBytes: number;
      /** Copies S3 delivers of each event (at-least-once: 2 is a duplicate delivery). */
      eventCopies: number;
      /**
       * Whether the input bucket is versioned (RerunPipeline's is): every write then sends its own
       * event, naming its version. A non-versioned bucket's events carry no versionId, and two
       * writes made at the same time may send one event (spawnUploader's `together`).
       * @default true
       */
      versioned?: boolean;
      /** S3's 409 on a conditional completion overtaken by a delete (S3Model). @default false */
      conditionalConflicts?: boolean;
      /**
       * S3's 409 on a conditional PutObject overtaken by another write of its key (S3Model): each
       * such put is two steps, its upload beginning and ending. @default false
       */
      putConflicts?: boolean;
    },
  ) {
    // The output bucket under the policy RerunPipeline attaches: conditional writes and deletes only.
    this.s3 = new S3Model({
      minPartBytes: options.minPartBytes,
      conditionalPrefixes: { [OUTPUT_BUCKET]: OUTPUT_PREFIXES },
      conditionalConflicts: options.conditionalConflicts ?? false,
      putConflicts: options.putConflicts ?? false,
    });
    this.eventCopies = options.eventCopies;
    this.versioned = options.versioned ?? true;
    this.s3.createBucket(INPUT_BUCKET);
    this.s3.createBucket(OUTPUT_BUCKET);
    this.dynamodb.createTable(LEDGER_TABLE);
    this.dlqUrl = this.sqs.createQueue('work-dlq', { visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS });
    this.queueUrl = this.sqs.createQueue('work', {
      visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
      deadLetter: { url: this.dlqUrl, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
    // S3 delivers each event of the input bucket (versioned: one event per write) to the queue some
    // time after the write (usually seconds), at least once: each copy is a send of its own, which the explorer places anywhere
    // after the write.
    this.s3.onWrite = (change) => {
      if (change.bucket !== INPUT_BUCKET) return;
      this.events.push(change);
      if (this.notifications) this.notify(this.events.length);
    };
  }

  /**
   * S3's event of the `sequence`-th write to the input bucket (1-based), sent now: each copy a send of
   * its own, which the explorer places anywhere from here on.
   */
  notify(sequence: number): void {
    const change = this.events[sequence - 1];
    if (!change) throw new Error(`simulation: no write ${sequence} to the input bucket`);
    const body = JSON.stringify(eventNotification(change, this.scheduler.now, sequence, this.versioned));
    for (let copy = 1; copy <= this.eventCopies; copy++) {
      this.scheduler.spawn(`s3-event-${sequence}.${copy}`, async (actor) => {
        await this.request(actor, 'SQS', 'SendMessage', { QueueUrl: this.queueUrl, MessageBody: body });
      });
    }
  }

  /** The last write to the input bucket, as the worker reads an event of it. */
  lastEvent(): S3ObjectEvent {
    const change = this.events[this.events.length - 1];
    if (!change) throw new Error('simulation: no write to the input bucket yet');
    return {
      bucket: change.bucket,
      key: change.key,
      eventName: change.eventName,
      ...(change.object ? { eTag: change.object.etag, size: change.object.body.byteLength } : {}),
      ...(this.versioned ? { versionId: versionOf(this.events.length) } : {}),
    };
  }

  /**
   * Sends an event of an earlier write once more (a duplicate or a late delivery), as `actor`'s
   * request, to the work queue or to `queueUrl` (the DLQ: a message that failed its receives).
   */
  async sendEvent(actor: Actor, event: S3ObjectEvent, queueUrl = this.queueUrl): Promise<void> {
    const index = this.events.findIndex((c) => c.key === event.key && c.object?.etag === event.eTag);
    const change = this.events[index];
    if (!change) throw new Error('simulation: no such write to deliver an event of');
    const body = JSON.stringify(eventNotification(change, this.scheduler.now, index + 1, this.versioned));
    await this.request(actor, 'SQS', 'SendMessage', { QueueUrl: queueUrl, MessageBody: body });
  }

  /** Called with every request applied and its answer (for recording sequences to replay elsewhere). */
  onRequest?: (request: {
    service: Service;
    name: string;
    input: Record<string, unknown>;
    answer?: Record<string, unknown>;
    error?: unknown;
  }) => void;

  /** Other state of the execution (the webhook receiver), named in {@link digest}. */
  readonly parts: { digest(): string }[] = [];

  /** The state of every service, as a string: equal strings, equal worlds. */
  digest(): string {
    return `${this.s3.digest()}|${this.sqs.digest()}|${this.dynamodb.digest()}|${this.events.length}|${this.parts.map((p) => p.digest()).join('|')}`;
  }

  /** SDK-shaped clients for one actor: `send(command)` is a scheduled request. */
  clientsFor(actor: Actor): { s3: S3Client; sqs: SQSClient; dynamodb: DynamoDBClient } {
    const client = (service: Service) => ({
      send: (command: { constructor: { name: string }; input: Record<string, unknown> }) =>
        this.request(actor, service, command.constructor.name.replace(/Command$/, ''), command.input),
    });
    return {
      s3: client('S3') as unknown as S3Client,
      sqs: client('SQS') as unknown as SQSClient,
      dynamodb: client('DynamoDB') as unknown as DynamoDBClient,
    };
  }

  /** One scheduled request to a service model. */
  request(
    actor: Actor,
    service: Service,
    name: string,
    input: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (service === 'S3' && name === 'PutObject' && this.s3.putInFlight(input)) return this.putInFlight(actor, input);
    const model = service === 'S3' ? this.s3 : service === 'SQS' ? this.sqs : this.dynamodb;
    return this.scheduler.request(actor, {
      label: `${service} ${name} ${describeInput(input)}`,
      footprint: model.footprint(name, input),
      // Seen by nobody else: a new upload and its parts are invisible until completed (the
      // completion and the abort are choice points), and a queue's URL never changes.
      invisible: INVISIBLE.has(name),
      apply: () =>
        this.answer(service, name, input, () =>
          service === 'DynamoDB'
            ? this.dynamodb.handle(name, input)
            : service === 'S3'
              ? this.s3.handle(name, input, this.scheduler.now, actor.id)
              : this.sqs.handle(name, input, this.scheduler.now),
        ),
    });
  }

  /**
   * A conditional PutObject whose upload is in flight between two steps (putConflicts): its begin
   * reads how often the key changed so far (the answer the actor sees, hence part of its state),
   * and its end writes, or answers 409 when the key changed in between (S3Model).
   */
  private async putInFlight(actor: Actor, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const bucket = String(input.Bucket);
    const key = String(input.Key);
    const begunAt = await this.scheduler.request(actor, {
      label: `S3 PutObject upload begins ${describeInput(input)}`,
      footprint: { reads: [`s3:${bucket}/${key}`], writes: [] },
      apply: () => this.s3.changesOf(bucket, key),
    });
    return this.scheduler.request(actor, {
      label: `S3 PutObject ${describeInput(input)}`,
      footprint: this.s3.footprint('PutObject', input),
      apply: () =>
        this.answer('S3', 'PutObject', input, () =>
          this.s3.handle('PutObject', input, this.scheduler.now, actor.id, begunAt),
        ),
    });
  }

  /** Applies one request to its model, telling {@link SimWorld.onRequest} its answer or error. */
  private answer(
    service: Service,
    name: string,
    input: Record<string, unknown>,
    apply: () => Record<string, unknown>,
  ): Record<string, unknown> {
    try {
      const answer = apply();
      this.onRequest?.({ service, name, input, answer });
      return answer;
    } catch (error) {
      this.onRequest?.({ service, name, input, error });
      throw error;
    }
  }
}

export type Service = 'S3' | 'SQS' | 'DynamoDB';

const INVISIBLE = new Set(['CreateMultipartUpload', 'UploadPart', 'GetQueueUrl']);

/**
 * The version id of the input bucket's `sequence`-th write (or delete marker). The input bucket is
 * versioned, as RerunPipeline creates it: every write sends its own event, each naming its version.
 */
function versionOf(sequence: number): string {
  return `v${sequence}`;
}

/** The event S3 sends for a write or delete (S3 User Guide, "Event message structure"). */
function eventNotification(change: ObjectChange, now: number, sequence: number, versioned: boolean): unknown {
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        awsRegion: 'us-east-1',
        eventTime: new Date(now).toISOString(),
        eventName: change.eventName,
        s3: {
          s3SchemaVersion: '1.0',
          bucket: { name: change.bucket, arn: `arn:aws:s3:::${change.bucket}` },
          object: {
            // URL-encoded as in an HTML form, as S3 writes keys into events.
            key: encodeURIComponent(change.key).replace(/%20/g, '+'),
            ...(change.object ? { size: change.object.body.byteLength, eTag: change.object.etag } : {}),
            // S3 User Guide, "Event message structure": versionId only in a versioned bucket.
            ...(versioned ? { versionId: versionOf(sequence) } : {}),
            sequencer: sequence.toString(16).toUpperCase().padStart(16, '0'),
          },
        },
      },
    ],
  };
}

function describeInput(input: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof input.Key === 'string') parts.push(input.Key);
  if (input.IfNoneMatch !== undefined) parts.push(`If-None-Match ${String(input.IfNoneMatch)}`);
  if (input.IfMatch !== undefined) parts.push(`If-Match ${String(input.IfMatch)}`);
  if (input.CopySourceIfMatch !== undefined) parts.push(`copy-source-if-match ${String(input.CopySourceIfMatch)}`);
  if (input.UploadId !== undefined) parts.push(String(input.UploadId));
  if (input.PartNumber !== undefined) parts.push(`part ${String(input.PartNumber)}`);
  if (input.ReceiptHandle !== undefined) parts.push(String(input.ReceiptHandle));
  if (input.Prefix !== undefined) parts.push(`prefix ${String(input.Prefix)}`);
  if (input.MessageBody !== undefined) parts.push(`body ${String(input.MessageBody).slice(0, 60)}`);
  const key = (input.Key as Record<string, { S?: string }> | undefined)?.pk?.S;
  if (key) parts.push(key.slice(0, 40));
  if (input.ConditionExpression !== undefined) parts.push(`if ${String(input.ConditionExpression)}`);
  return parts.join(' ');
}
