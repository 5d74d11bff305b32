import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { BackfillResult } from '../../../app/backfill/backfillResult.js';
import { runBackfill } from '../../../app/backfill/runBackfill.js';
import { type LocalStackResources, provisionLocalStack } from '../../../app/dev/provisionLocalStack.js';
import { SUMMARIZE_CODE_VERSION } from '../../../app/partition/codeVersion.js';
import type { InputRules } from '../../../app/partition/inputCoverage.js';
import { provisionSummaryStage, type SummaryStageResources } from '../../../app/partition/provisionSummaryStage.js';
import { referenceInputRules } from '../../../app/partition/referenceInputRules.js';
import { S3PartitionStore } from '../../../app/partition/S3PartitionStore.js';
import { type SummaryLayout, summaryLayout } from '../../../app/partition/summaryLayout.js';
import type { Topology } from '../../../app/topology.js';
import { type SinkDelivery, startWebhookSink, type WebhookSink } from '../../../local/sink/WebhookSink.js';
import { queueCounts } from '../../../src/aws/queueCounts.js';
import type { OutputHead } from '../../../src/done/judgeOutput.js';
import type { Day } from '../../../src/keys/partition.js';
import { createLedgerTable } from '../../../src/ledger/createLedgerTable.js';
import type { PipelineClients } from '../../../src/ledger/pipelineClients.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import {
  emptyStats,
  FaultKind,
  type FaultPlan,
  FaultProxy,
  type FaultProxyStats,
  type Interceptor,
  type ProxyLogEntry,
} from './FaultProxy.js';
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
  readonly clients: PipelineClients;
  /** A unique prefix for every resource name. */
  readonly id: string;
  readonly topology: Topology;
  readonly runner: ChaosRunnerSettings;
  /** Runner processes polling the normalize queue. @default 1 */
  readonly runners?: number;
  /**
   * Runner processes polling the summarize queue (FIFO; the deployed summarize handler). With 0 the
   * summary stage is not provisioned at all. @default 0
   */
  readonly summaryRunners?: number;
  /** Faults between the runners and AWS. @default none */
  readonly awsFaults?: FaultPlan;
  /** Faults between the runners and the webhook receiver. @default none */
  readonly webhookFaults?: FaultPlan;
  /** Seed of the fault decisions (each proxy derives its own). @default 1 */
  readonly seed?: number;
  /** Called for every event of every runner process. */
  readonly onRunnerEvent?: (event: RunnerEvent, slot: { readonly stage: ChaosStage; readonly index: number }) => void;
}

/** The two workers of the pipeline. */
export const ChaosStage = { NORMALIZE: 'normalize', SUMMARIZE: 'summarize' } as const;
export type ChaosStage = (typeof ChaosStage)[keyof typeof ChaosStage];

/** One runner process with its fault proxies (the summarize worker calls no webhook). */
export interface RunnerSlot {
  readonly stage: ChaosStage;
  /** Index among the slots of its stage. */
  readonly index: number;
  readonly aws: FaultProxy;
  readonly webhook?: FaultProxy;
  readonly runner: RunnerSupervisor;
}

/** An object of the output bucket as a snapshot holds it. */
export interface SnapshotObject {
  readonly key: string;
  readonly head: OutputHead;
  readonly bytes: Buffer;
  /** S3's LastModified (epoch ms) from the listing. */
  readonly lastModified: number;
}

/** A message found in a DLQ. */
export interface DeadLetter {
  readonly messageId: string;
  readonly body: string;
}

/** The final state of a pipeline: outputs, sink deliveries, the DLQ. */
export interface PipelineSnapshot {
  readonly inputBucket: string;
  readonly outputBucket: string;
  readonly objects: readonly SnapshotObject[];
  /** The input bucket's objects at the end, with LastModified (epoch ms), for the summaries' coverage. */
  readonly inputs: readonly { readonly key: string; readonly lastModified: number; readonly etag?: string }[];
  /** The summarize worker's input rules for these buckets (as the deployed handler builds them). */
  readonly inputRules: InputRules;
  readonly deliveries: readonly SinkDelivery[];
  /** The normalize DLQ's messages (SQS keeps a message's id when it moves it to the DLQ). */
  readonly dlq: readonly DeadLetter[];
  /** The summarize DLQ's messages (empty without a summary stage). */
  readonly summaryDlq: readonly DeadLetter[];
  /** Multipart uploads left open (abandoned by a kill; invisible; the stack's lifecycle rule aborts them). */
  readonly openUploads: number;
}

/**
 * A complete local pipeline for one chaos scenario: input and output buckets with the S3 -> SQS
 * notification, the work queue and its DLQ, a ledger table, a webhook sink, and N runner processes
 * (LocalRunner + the real normalize handler), each talking to AWS and to the sink through its own
 * fault proxy. With `summaryRunners`, also the summary stage: its FIFO queue and DLQ, and runner
 * processes of the real summarize handler behind their own fault proxies, fed by backfills
 * ({@link backfill}) and by scheduled messages ({@link sendSummaryTask}). Test code reaches the
 * emulator directly, never through the faults.
 *
 * @example
 * const p = await ChaosPipeline.create({ endpoint, clients, id: 'c1', topology, runner, runners: 4, summaryRunners: 2 });
 * await p.upload('incoming/dt=2026-01-05/a.csv', 'id\n1\n');
 * p.startRunners();
 * await p.waitDrained();
 * await p.backfill({ from: '2026-01-05', to: '2026-01-05' });
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
    /** The summary stage's queues (undefined without summary runners). */
    readonly summaryStage: SummaryStageResources | undefined,
  ) {}

  /** Where the summary stage reads and writes for this pipeline's input bucket. */
  get summaryLayout(): SummaryLayout {
    return summaryLayout(this.stack.inputBucket, this.options.topology);
  }

  /** The summarize worker's input rules for this pipeline's buckets. */
  get inputRules(): InputRules {
    return referenceInputRules({ inputBucket: this.stack.inputBucket, topology: this.options.topology });
  }

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
    const summaryRunners = options.summaryRunners ?? 0;
    const summaryStage =
      summaryRunners > 0
        ? await provisionSummaryStage({
            clients,
            names: { queue: `${id}-sum-q.fifo`, dlq: `${id}-sum-dlq.fifo` },
            topology: options.topology,
          })
        : undefined;
    const pipeline = new ChaosPipeline(options, stack, ledgerTable, sink, summaryStage);
    // The bucket notification's s3:TestEvent is not part of any scenario.
    await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: stack.queueUrl }));
    const seed = options.seed ?? 1;
    const common = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      OUTPUT_BUCKET: stack.outputBucket,
      LOG_LEVEL: 'error',
      RUNNER_FUNCTION_TIMEOUT: String(options.runner.functionTimeoutSeconds),
      RUNNER_MAX_CONCURRENCY: String(options.runner.maxConcurrency),
      // A timed-out invocation makes no more requests, as Lambda resets its environment (lambdaRunner.ts).
      RUNNER_CUT_OFF_TIMEOUTS: '1',
    };
    const supervise = (stage: ChaosStage, index: number, env: Record<string, string>) =>
      new RunnerSupervisor({
        env: { ...common, ...env },
        onEvent: (event: RunnerEvent) => {
          // CHAOS_DEBUG=1 prints every runner event with its time, to replay a failing seed by eye.
          if (process.env.CHAOS_DEBUG)
            process.stderr.write(`${new Date().toISOString()} ${id} ${stage}#${index} ${JSON.stringify(event)}\n`);
          options.onRunnerEvent?.(event, { stage, index });
        },
      });
    // CHAOS_DEBUG=1 also prints every request a runner made, when it arrived at its proxy and how it
    // ended, so a receive that died can be matched with the request it was waiting for.
    const traceRequests = (stage: ChaosStage, index: number, leg: 'aws' | 'webhook') =>
      process.env.CHAOS_DEBUG
        ? {
            onRequestDone: (entry: ProxyLogEntry, timing: { startedAt: number; endedAt: number }) =>
              process.stderr.write(
                `${new Date(timing.endedAt).toISOString()} ${id} ${stage}#${index} ${JSON.stringify({
                  event: 'request',
                  leg,
                  operation: `${entry.service}:${entry.operation}`,
                  path: decodeURIComponent(entry.url.split('?')[0] ?? '').slice(0, 120),
                  startedAt: new Date(timing.startedAt).toISOString(),
                  ms: timing.endedAt - timing.startedAt,
                  ...(entry.fault ? { fault: entry.fault } : {}),
                  ...(entry.status !== undefined ? { status: entry.status } : {}),
                  ...(entry.dropped ? { dropped: true } : {}),
                })}\n`,
              ),
          }
        : {};
    for (let index = 0; index < (options.runners ?? 1); index++) {
      const aws = await FaultProxy.start({
        upstream: options.endpoint,
        seed: seed * 101 + index,
        plan: options.awsFaults ?? {},
        ...traceRequests(ChaosStage.NORMALIZE, index, 'aws'),
      });
      const webhook = await FaultProxy.start({
        upstream: sink.url,
        seed: seed * 103 + index,
        plan: options.webhookFaults ?? {},
        ...traceRequests(ChaosStage.NORMALIZE, index, 'webhook'),
      });
      const runner = supervise(ChaosStage.NORMALIZE, index, {
        AWS_ENDPOINT_URL: aws.url,
        LEDGER_TABLE: ledgerTable,
        NOTIFY_URL: `${webhook.url}/notify`,
        RUNNER_QUEUE_URL: stack.queueUrl,
        RUNNER_BATCH_SIZE: String(options.runner.batchSize),
      });
      pipeline.slots.push({ stage: ChaosStage.NORMALIZE, index, aws, webhook, runner });
    }
    for (let index = 0; index < summaryRunners && summaryStage; index++) {
      const aws = await FaultProxy.start({
        upstream: options.endpoint,
        seed: seed * 107 + index,
        plan: options.awsFaults ?? {},
        ...traceRequests(ChaosStage.SUMMARIZE, index, 'aws'),
      });
      const runner = supervise(ChaosStage.SUMMARIZE, index, {
        AWS_ENDPOINT_URL: aws.url,
        INPUT_BUCKET: stack.inputBucket,
        RUNNER_HANDLER: 'functions/summarize/handler.ts',
        // Its own function's timeout, as deployed (a scenario may give summarize more than normalize).
        RUNNER_FUNCTION_TIMEOUT: String(options.topology.summarize.functionTimeoutSeconds),
        RUNNER_QUEUE_URL: summaryStage.queueUrl,
        // One partition task per invocation, as the stack's event source mapping.
        RUNNER_BATCH_SIZE: String(options.topology.summarize.batchSize),
      });
      pipeline.slots.push({ stage: ChaosStage.SUMMARIZE, index, aws, runner });
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

  /**
   * Sends one message to the summarize queue, as the daily schedule or a hand-made duplicate would.
   * FIFO: it needs a message group and, to be delivered at all, a deduplication id not used in the
   * last 5 minutes.
   */
  async sendSummaryTask(body: string, fifo: { groupId: string; deduplicationId: string }): Promise<void> {
    await this.options.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.requireSummaryStage().queueUrl,
        MessageBody: body,
        MessageGroupId: fifo.groupId,
        MessageDeduplicationId: fifo.deduplicationId,
      }),
    );
  }

  /**
   * Runs `rerun backfill` for a window, as an operator would (directly on the emulator, not through
   * the faults): plan with the bulk done-check, enqueue the partitions `mode` selects. Does not wait.
   */
  async backfill(window: { from: Day; to: Day; mode?: 'missing' | 'stale' | 'all' }): Promise<BackfillResult> {
    const stage = this.requireSummaryStage();
    return runBackfill({
      reader: new S3PartitionStore(this.options.clients.s3),
      sqs: this.options.clients.sqs,
      bucket: this.stack.outputBucket,
      layout: this.summaryLayout,
      codeVersion: SUMMARIZE_CODE_VERSION,
      // As `rerun backfill` does: judge each day by its inputs too (a summary records its coverage).
      inputs: this.inputRules,
      queueUrl: stage.queueUrl,
      from: window.from,
      to: window.to,
      ...(window.mode ? { mode: window.mode } : {}),
    });
  }

  private requireSummaryStage(): SummaryStageResources {
    if (!this.summaryStage) throw new Error(`pipeline ${this.options.id} has no summary stage (summaryRunners: 0)`);
    return this.summaryStage;
  }

  /** Starts every runner process; `intercept` (per slot) can kill them at chosen requests. */
  startRunners(intercept?: (slot: RunnerSlot) => Interceptor | undefined): void {
    for (const slot of this.slots) {
      const killer = intercept?.(slot);
      // With kills, note every message SQS hands the process on the wire, so a message received
      // by a process killed before it read the answer still counts as dying with it.
      // Attributed to the process that sent the receive (a replacement started since holds none of it).
      const receiverOf = new Map<number, number | undefined>();
      const interceptor: Interceptor | undefined = killer
        ? async (entry, phase) => {
            if (entry.operation === 'ReceiveMessage') {
              if (phase === 'before-forward') receiverOf.set(entry.id, slot.runner.pid);
              else {
                const sender = receiverOf.get(entry.id);
                receiverOf.delete(entry.id);
                // An answer the proxy drops (reset-after) never reaches the process: SQS counted
                // the receive, nobody holds the messages, so that receive died with each of them.
                if (entry.responseText && entry.fault === FaultKind.RESET_AFTER) {
                  slot.runner.noteLost(receivedMessageIds(entry.responseText));
                } else if (entry.responseText && sender !== undefined) {
                  slot.runner.noteReceived(receivedMessageIds(entry.responseText), sender);
                }
              }
            }
            return killer(entry, phase);
          }
        : undefined;
      if (interceptor) {
        slot.aws.setInterceptor(interceptor);
        slot.webhook?.setInterceptor(interceptor);
      }
      slot.runner.start();
    }
  }

  /** Every fault proxy of every slot. */
  private proxies(): FaultProxy[] {
    return this.slots.flatMap((s) => (s.webhook ? [s.aws, s.webhook] : [s.aws]));
  }

  /**
   * Waits until the work queues (normalize, and summarize when there is one) have no visible,
   * in-flight or delayed message and no proxy is handling a request other than a poll (several
   * consecutive checks: SQS counts are approximate).
   */
  async waitDrained(timeoutMs = 300_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const queues = [this.stack.queueUrl, ...(this.summaryStage ? [this.summaryStage.queueUrl] : [])];
    let empty = 0;
    let last = '';
    while (empty < 4) {
      if (Date.now() > deadline) {
        const open = this.slots.flatMap((slot) =>
          [slot.aws, ...(slot.webhook ? [slot.webhook] : [])].flatMap((proxy) =>
            proxy.describeInFlight().map((r) => `${slot.stage}#${slot.index} ${r}`),
          ),
        );
        throw new Error(
          `pipeline ${this.options.id} not drained after ${timeoutMs} ms (${last}; requests in flight: ${open.join('; ') || 'none'})`,
        );
      }
      await sleep(250);
      let total = 0;
      const states: string[] = [];
      for (const queueUrl of queues) {
        const counts = await queueCounts(this.options.clients.sqs, queueUrl);
        total += counts.visible + counts.inFlight + counts.delayed;
        const name = queueUrl.slice(queueUrl.lastIndexOf('/') + 1);
        states.push(`${name}: visible ${counts.visible}, in flight ${counts.inFlight}, delayed ${counts.delayed}`);
      }
      last = states.join('; ');
      // Hung polls do not count (with 8 runners polling, one usually hangs under the timeout fault).
      const busy = this.proxies().some((proxy) => proxy.inFlightWork > 0);
      empty = total === 0 && !busy ? empty + 1 : 0;
    }
  }

  /** Stops every runner process (SIGTERM) and waits for the proxies to be quiet. */
  async stopRunners(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.runner.stop()));
    for (const proxy of this.proxies()) proxy.setInterceptor(undefined);
    await Promise.all(this.proxies().map((proxy) => proxy.whenQuiet(200)));
  }

  /**
   * Requests, faults and runner totals over every slot (`proxies`: the AWS legs of both stages), and
   * the runner totals of each stage.
   */
  stats(): {
    proxies: FaultProxyStats;
    webhook: FaultProxyStats;
    runners: RunnerTotals;
    byStage: Record<ChaosStage, RunnerTotals>;
  } {
    const of = (stage: ChaosStage) =>
      mergeTotals(this.slots.filter((s) => s.stage === stage).map((s) => s.runner.totals));
    return {
      proxies: mergeStats(this.slots.map((s) => s.aws.stats())),
      webhook: mergeStats(this.slots.flatMap((s) => (s.webhook ? [s.webhook.stats()] : []))),
      runners: mergeTotals(this.slots.map((s) => s.runner.totals)),
      byStage: { [ChaosStage.NORMALIZE]: of(ChaosStage.NORMALIZE), [ChaosStage.SUMMARIZE]: of(ChaosStage.SUMMARIZE) },
    };
  }

  /** Reads the final state directly from the emulator and the sink. */
  /**
   * What an operator does after a crash storm, with `rerun redrive`: moves the normalize DLQ's
   * messages that are proven crash-storm victims (every receive died with the message in hand,
   * counted per message by the supervisors) back to the work queue, and leaves every other dead
   * letter where it is. Resolves with the moved messages (their old ids).
   */
  async redriveProvenCrashStorms(maxReceiveCount: number): Promise<DeadLetter[]> {
    const { sqs } = this.options.clients;
    const died = this.stats().byStage.normalize.diedWhileHeld;
    const moved: DeadLetter[] = [];
    const kept: string[] = [];
    for (;;) {
      const got = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: this.stack.dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
      );
      const messages = got.Messages ?? [];
      if (messages.length === 0) break;
      for (const m of messages) {
        const id = m.MessageId ?? '';
        if ((died[id] ?? 0) < maxReceiveCount) {
          kept.push(m.ReceiptHandle as string); // hidden while the DLQ is read, released below
          continue;
        }
        // Send first, delete after: an interruption leaves a duplicate, never a loss (as rerun redrive).
        await sqs.send(new SendMessageCommand({ QueueUrl: this.stack.queueUrl, MessageBody: m.Body ?? '' }));
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: this.stack.dlqUrl, ReceiptHandle: m.ReceiptHandle as string }),
        );
        moved.push({ messageId: id, body: m.Body ?? '' });
      }
    }
    for (const receiptHandle of kept) {
      await sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: this.stack.dlqUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    }
    return moved;
  }

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
        objects.push({ key: item.Key, head, bytes, lastModified: item.LastModified?.getTime() ?? 0 });
      }
      token = page.NextContinuationToken;
    } while (token);
    const inputs: { key: string; lastModified: number; etag: string }[] = [];
    for await (const object of new S3PartitionStore(s3).list(this.stack.inputBucket, { prefix: '' })) {
      inputs.push({ key: object.key, lastModified: object.lastModified ?? 0, etag: object.etag });
    }

    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: this.stack.outputBucket }));
    return {
      inputBucket: this.stack.inputBucket,
      outputBucket: this.stack.outputBucket,
      objects,
      inputs,
      inputRules: this.inputRules,
      deliveries: this.sink.deliveries(),
      dlq: await drainQueue(sqs, this.stack.dlqUrl),
      summaryDlq: this.summaryStage ? await drainQueue(sqs, this.summaryStage.dlqUrl) : [],
      openUploads: uploads.Uploads?.length ?? 0,
    };
  }

  /** Stops the runners, the proxies and the sink. */
  async dispose(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.runner.stop(2000)));
    await Promise.all(this.proxies().map((proxy) => proxy.stop()));
    await this.sink.stop();
  }
}

/** Receives and deletes every message of a queue (a DLQ at the end of a run). */
async function drainQueue(sqs: PipelineClients['sqs'], queueUrl: string): Promise<DeadLetter[]> {
  const found: DeadLetter[] = [];
  for (;;) {
    const got = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 600,
      }),
    );
    const messages = got.Messages ?? [];
    if (messages.length === 0) return found;
    for (const m of messages) found.push({ messageId: m.MessageId ?? '', body: m.Body ?? '' });
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
      }),
    );
  }
}

/** Adds every count of `source` into `target`. */
function add(target: Record<string, number>, source: Record<string, number>): void {
  for (const [k, v] of Object.entries(source)) target[k] = (target[k] ?? 0) + v;
}

function mergeStats(all: FaultProxyStats[]): FaultProxyStats {
  const merged = emptyStats();
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
    add(merged.diedWhileHeld, t.diedWhileHeld);
  }
  return merged;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Message ids in a ReceiveMessage answer (SQS's JSON protocol); none when it is not one. */
function receivedMessageIds(responseText: string): string[] {
  try {
    const doc = JSON.parse(responseText) as { Messages?: { MessageId?: string }[] };
    return (doc.Messages ?? []).flatMap((m) => (m.MessageId ? [m.MessageId] : []));
  } catch {
    return [];
  }
}
