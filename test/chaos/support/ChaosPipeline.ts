import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { AwsClients } from '../../../src/aws/clients.js';
import { type LocalStackResources, provisionLocalStack } from '../../../src/dev/provision.js';
import type { OutputHead } from '../../../src/done/judgeOutput.js';
import { createLedgerTable } from '../../../src/ledger/createLedgerTable.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import { type SinkDelivery, startWebhookSink, type WebhookSink } from '../../../src/sink/WebhookSink.js';
import type { Topology } from '../../../src/topology.js';
import { type FaultPlan, FaultProxy, type FaultProxyStats, type Interceptor } from './FaultProxy.js';
import { emptyRunnerTotals, type RunnerEvent, RunnerSupervisor, type RunnerTotals } from './RunnerSupervisor.js';

/** Runner settings of a chaos pipeline (the event source mapping of each runner process). */
export interface ChaosRunnerSettings {
  /**
   * Function timeout. The deployed handler keeps a 5 s deadline margin (createSqsBatchHandler's
   * default), so anything under ~7 s leaves records no time to start.
   */
  readonly functionTimeoutSeconds: number;
  readonly batchSize: number;
  /** Concurrent invocations per runner process. */
  readonly maxConcurrency: number;
}

/** Options of {@link ChaosPipeline.create}. */
export interface ChaosPipelineOptions {
  /** The emulator (moto with atomic writes). */
  readonly endpoint: string;
  /** Clients talking to the emulator directly (no faults): uploads, checks, snapshots. */
  readonly clients: AwsClients;
  /** A unique prefix for every resource name. */
  readonly id: string;
  readonly topology: Topology;
  readonly runner: ChaosRunnerSettings;
  /** Runner processes polling the same queue. @default 1 */
  readonly runners?: number;
  /** Faults between the runners and AWS. @default none */
  readonly awsFaults?: FaultPlan;
  /** Faults between the runners and the webhook receiver. @default none */
  readonly webhookFaults?: FaultPlan;
  /** Seed of the fault decisions (each proxy derives its own). @default 1 */
  readonly seed?: number;
  /** Called for every event of every runner process. */
  readonly onRunnerEvent?: (event: RunnerEvent, slot: number) => void;
}

/** One runner process with its two fault proxies. */
export interface RunnerSlot {
  readonly index: number;
  readonly aws: FaultProxy;
  readonly webhook: FaultProxy;
  readonly runner: RunnerSupervisor;
}

/** An object of the output bucket as a snapshot holds it. */
export interface SnapshotObject {
  readonly key: string;
  readonly head: OutputHead;
  readonly bytes: Buffer;
}

/** The final state of a pipeline: outputs, sink deliveries, the DLQ. */
export interface PipelineSnapshot {
  readonly inputBucket: string;
  readonly outputBucket: string;
  readonly objects: readonly SnapshotObject[];
  readonly deliveries: readonly SinkDelivery[];
  /** The DLQ's messages (SQS keeps a message's id when it moves it to the DLQ). */
  readonly dlq: readonly { readonly messageId: string; readonly body: string }[];
  /** Multipart uploads left open (abandoned by a kill; invisible; the stack's lifecycle rule aborts them). */
  readonly openUploads: number;
}

/**
 * A complete local pipeline for one chaos scenario: input and output buckets with the S3 -> SQS
 * notification, the work queue and its DLQ, a ledger table, a webhook sink, and N runner processes
 * (LocalRunner + the real normalize handler), each talking to AWS and to the sink through its own
 * fault proxy. Test code reaches the emulator directly, never through the faults.
 *
 * @example
 * const p = await ChaosPipeline.create({ endpoint, clients, id: 'c1', topology, runner, runners: 4 });
 * await p.upload('incoming/a.csv', 'id\n1\n');
 * p.startRunners();
 * await p.waitDrained();
 * await p.stopRunners();
 * const state = await p.snapshot();
 * await p.dispose();
 */
export class ChaosPipeline {
  readonly slots: RunnerSlot[] = [];

  private constructor(
    readonly options: ChaosPipelineOptions,
    readonly stack: LocalStackResources,
    readonly ledgerTable: string,
    readonly sink: WebhookSink,
  ) {}

  /** Provisions the resources and starts the proxies (the runners start with {@link startRunners}). */
  static async create(options: ChaosPipelineOptions): Promise<ChaosPipeline> {
    const { clients, id } = options;
    const stack = await provisionLocalStack({
      clients,
      names: { inputBucket: `${id}-in`, outputBucket: `${id}-out`, queue: `${id}-q`, dlq: `${id}-dlq` },
      topology: options.topology,
    });
    const ledgerTable = `${id}-ledger`;
    await createLedgerTable({ client: clients.dynamodb, tableName: ledgerTable });
    const sink = await startWebhookSink();
    const pipeline = new ChaosPipeline(options, stack, ledgerTable, sink);
    // The bucket notification's s3:TestEvent is not part of any scenario.
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: stack.queueUrl }));
    const seed = options.seed ?? 1;
    for (let index = 0; index < (options.runners ?? 1); index++) {
      const aws = await FaultProxy.start({
        upstream: options.endpoint,
        seed: seed * 101 + index,
        plan: options.awsFaults ?? {},
      });
      const webhook = await FaultProxy.start({
        upstream: sink.url,
        seed: seed * 103 + index,
        plan: options.webhookFaults ?? {},
      });
      const runner = new RunnerSupervisor({
        env: {
          AWS_ENDPOINT_URL: aws.url,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'test',
          AWS_SECRET_ACCESS_KEY: 'test',
          OUTPUT_BUCKET: stack.outputBucket,
          LEDGER_TABLE: ledgerTable,
          NOTIFY_URL: `${webhook.url}/notify`,
          LOG_LEVEL: 'error',
          RUNNER_QUEUE_URL: stack.queueUrl,
          RUNNER_FUNCTION_TIMEOUT: String(options.runner.functionTimeoutSeconds),
          RUNNER_BATCH_SIZE: String(options.runner.batchSize),
          RUNNER_MAX_CONCURRENCY: String(options.runner.maxConcurrency),
        },
        onEvent: (event: RunnerEvent) => {
          // CHAOS_DEBUG=1 prints every runner event with its time, to replay a failing seed by eye.
          if (process.env.CHAOS_DEBUG)
            process.stderr.write(`${new Date().toISOString()} ${id}#${index} ${JSON.stringify(event)}\n`);
          options.onRunnerEvent?.(event, index);
        },
      });
      pipeline.slots.push({ index, aws, webhook, runner });
    }
    return pipeline;
  }

  /** Uploads an input directly (its ObjectCreated event goes to the queue); returns its ETag. */
  async upload(key: string, body: string | Buffer): Promise<string> {
    const out = await this.options.clients.s3.send(
      new PutObjectCommand({ Bucket: this.stack.inputBucket, Key: key, Body: Buffer.from(body) }),
    );
    return (out.ETag ?? '').replace(/"/g, '');
  }

  /** Deletes an input directly (the pipeline subscribes to ObjectCreated only: no event). */
  async deleteInput(key: string): Promise<void> {
    await this.options.clients.s3.send(new DeleteObjectCommand({ Bucket: this.stack.inputBucket, Key: key }));
  }

  /**
   * Sends an S3 ObjectCreated event for `key` by hand: a duplicate delivery, or a late one naming an
   * older ETag. Keys are encoded as S3 encodes them (space as `+`).
   */
  async sendEvent(key: string, eTag?: string): Promise<void> {
    const encoded = encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
    const body = {
      Records: [
        {
          eventVersion: '2.1',
          eventSource: 'aws:s3',
          awsRegion: 'us-east-1',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: this.stack.inputBucket }, object: { key: encoded, ...(eTag ? { eTag } : {}) } },
        },
      ],
    };
    await this.sendRaw(JSON.stringify(body));
  }

  /** Sends any message body to the work queue (poison, for instance). */
  async sendRaw(body: string): Promise<void> {
    await this.options.clients.sqs.send(new SendMessageCommand({ QueueUrl: this.stack.queueUrl, MessageBody: body }));
  }

  /** Starts every runner process; `intercept` (per slot) can kill them at chosen requests. */
  startRunners(intercept?: (slot: RunnerSlot) => Interceptor): void {
    for (const slot of this.slots) {
      if (intercept) {
        const interceptor = intercept(slot);
        slot.aws.setInterceptor(interceptor);
        slot.webhook.setInterceptor(interceptor);
      }
      slot.runner.start();
    }
  }

  /**
   * Waits until the work queue has no visible, in-flight or delayed message (several consecutive
   * checks: SQS counts are approximate) and the proxies have been quiet for a moment.
   */
  async waitDrained(timeoutMs = 300_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let empty = 0;
    let last = '';
    while (empty < 4) {
      if (Date.now() > deadline)
        throw new Error(`pipeline ${this.options.id} not drained after ${timeoutMs} ms (${last})`);
      await sleep(250);
      const a =
        (
          await this.options.clients.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: this.stack.queueUrl,
              AttributeNames: [
                'ApproximateNumberOfMessages',
                'ApproximateNumberOfMessagesNotVisible',
                'ApproximateNumberOfMessagesDelayed',
              ],
            }),
          )
        ).Attributes ?? {};
      const total =
        Number(a.ApproximateNumberOfMessages ?? 0) +
        Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
        Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
      last = `visible ${a.ApproximateNumberOfMessages}, in flight ${a.ApproximateNumberOfMessagesNotVisible}`;
      const busy = this.slots.some((s) => s.aws.inFlight > 0 || s.webhook.inFlight > 0);
      empty = total === 0 && !busy ? empty + 1 : 0;
    }
  }

  /** Stops every runner process (SIGTERM) and waits for the proxies to be quiet. */
  async stopRunners(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.runner.stop()));
    for (const slot of this.slots) {
      slot.aws.setInterceptor(undefined);
      slot.webhook.setInterceptor(undefined);
    }
    await Promise.all(this.slots.flatMap((s) => [s.aws.whenQuiet(200), s.webhook.whenQuiet(200)]));
  }

  /** Requests, faults and runner totals over every slot. */
  stats(): { proxies: FaultProxyStats; webhook: FaultProxyStats; runners: RunnerTotals } {
    return {
      proxies: mergeStats(this.slots.map((s) => s.aws.stats())),
      webhook: mergeStats(this.slots.map((s) => s.webhook.stats())),
      runners: mergeTotals(this.slots.map((s) => s.runner.totals)),
    };
  }

  /** Reads the final state directly from the emulator and the sink. */
  async snapshot(): Promise<PipelineSnapshot> {
    const { s3, sqs } = this.options.clients;
    const store = new S3ObjectStore(s3);
    const objects: SnapshotObject[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: this.stack.outputBucket, ContinuationToken: token }),
      );
      for (const item of page.Contents ?? []) {
        if (!item.Key) continue;
        const head = await store.head(this.stack.outputBucket, item.Key);
        if (!head) continue;
        const got = await s3.send(new GetObjectCommand({ Bucket: this.stack.outputBucket, Key: item.Key }));
        const bytes = Buffer.from((await got.Body?.transformToByteArray()) ?? new Uint8Array());
        objects.push({ key: item.Key, head, bytes });
      }
      token = page.NextContinuationToken;
    } while (token);

    const dlq: { messageId: string; body: string }[] = [];
    for (;;) {
      const got = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.stack.dlqUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: 600,
        }),
      );
      const messages = got.Messages ?? [];
      if (messages.length === 0) break;
      for (const m of messages) dlq.push({ messageId: m.MessageId ?? '', body: m.Body ?? '' });
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.stack.dlqUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
        }),
      );
    }
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: this.stack.outputBucket }));
    return {
      inputBucket: this.stack.inputBucket,
      outputBucket: this.stack.outputBucket,
      objects,
      deliveries: this.sink.deliveries(),
      dlq,
      openUploads: uploads.Uploads?.length ?? 0,
    };
  }

  /** Stops the runners, the proxies and the sink. */
  async dispose(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.runner.stop(2000)));
    await Promise.all(this.slots.flatMap((s) => [s.aws.stop(), s.webhook.stop()]));
    await this.sink.stop();
  }
}

function mergeStats(all: FaultProxyStats[]): FaultProxyStats {
  const merged: FaultProxyStats = {
    requests: 0,
    byService: {},
    byOperation: {},
    faults: {},
    faultCodes: {},
    responseBodyBytes: {},
    requestBodyBytes: {},
  };
  const add = (target: Record<string, number>, source: Record<string, number>) => {
    for (const [k, v] of Object.entries(source)) target[k] = (target[k] ?? 0) + v;
  };
  for (const s of all) {
    merged.requests += s.requests;
    add(merged.byService, s.byService);
    add(merged.byOperation, s.byOperation);
    add(merged.faults, s.faults);
    add(merged.faultCodes, s.faultCodes);
    add(merged.responseBodyBytes, s.responseBodyBytes);
    add(merged.requestBodyBytes, s.requestBodyBytes);
  }
  return merged;
}

function mergeTotals(all: RunnerTotals[]): RunnerTotals {
  const merged = emptyRunnerTotals();
  const add = (target: Record<string, number>, source: Record<string, number>) => {
    for (const [k, v] of Object.entries(source)) target[k] = (target[k] ?? 0) + v;
  };
  for (const t of all) {
    merged.retained += t.retained;
    merged.deleteFailures += t.deleteFailures;
    add(merged.invocationErrors, t.invocationErrors);
    merged.starts += t.starts;
    merged.kills += t.kills;
    merged.crashes += t.crashes;
    merged.invocations += t.invocations;
    merged.effectsExecuted += t.effectsExecuted;
    add(merged.outcomes, t.outcomes);
    add(merged.records, t.records);
    add(merged.failureReasons, t.failureReasons);
  }
  return merged;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
