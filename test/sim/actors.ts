import { DeleteMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { deterministicKeyMapping } from '../../app/reprocess/outputKeyMapping.js';
import { runReprocess } from '../../app/reprocess/runReprocess.js';
import { S3ListingReader } from '../../app/reprocess/S3ListingReader.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { DynamoDBLedger } from '../../src/ledger/DynamoDBLedger.js';
import { outputNotificationKey } from '../../src/notify/outputNotification.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { FirstRunPath, type FirstRunPolicy } from '../../src/worker/adaptiveFirstRun.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';
import type { Actor, Scheduler } from './Scheduler.js';
import { FUNCTION_TIMEOUT_SECONDS, INPUT_BUCKET, LEDGER_TABLE, OUTPUT_BUCKET, type SimWorld } from './SimWorld.js';
import { INPUT_PREFIX, outputKeyOf, quarantineKeyOf } from './simWorker.js';

/**
 * The webhook receiver of the side effect: it sees each call begin and end as two requests, so the
 * checks can tell whether two calls with one idempotency key ever ran at the same time (the
 * ledger's lease must prevent it), and which keys it applied.
 */
export class Receiver {
  /** Calls begun and not ended, by key: the actors that made them. */
  private readonly inFlight = new Map<string, Set<Actor>>();
  /** Keys whose call ended (the receiver applied them; a repeat is deduplicated by the key). */
  readonly applied = new Map<string, number>();
  /** Two live calls with one key at once: what the lease exists to prevent. */
  readonly overlaps: string[] = [];

  constructor(private readonly scheduler: Scheduler) {}

  digest(): string {
    const flying = [...this.inFlight].map(
      ([k, actors]) =>
        `${k}:${[...actors]
          .map((a) => a.id)
          .sort()
          .join('+')}`,
    );
    return `${flying.sort().join(',')}|${[...this.applied].sort().join(',')}|${this.overlaps.length}`;
  }

  async call(actor: Actor, dedupeKey: string): Promise<void> {
    const footprint = { reads: [`webhook:${dedupeKey}`], writes: [`webhook:${dedupeKey}`] };
    await this.scheduler.request(actor, {
      label: `webhook POST ${dedupeKey.slice(0, 28)}`,
      footprint,
      apply: () => {
        const holders = this.inFlight.get(dedupeKey) ?? new Set<Actor>();
        const live = [...holders].filter((a) => a.status === 'live');
        if (live.length > 0)
          this.overlaps.push(`${dedupeKey}: ${actor.id} began while ${live.map((a) => a.id).join(', ')} ran`);
        holders.add(actor);
        this.inFlight.set(dedupeKey, holders);
      },
    });
    await this.scheduler.request(actor, {
      label: `webhook 200 ${dedupeKey.slice(0, 28)}`,
      footprint,
      apply: () => {
        this.inFlight.get(dedupeKey)?.delete(actor);
        this.applied.set(dedupeKey, (this.applied.get(dedupeKey) ?? 0) + 1);
      },
    });
  }
}

/** What a poller's handler is built with. */
export interface WorkerSetup {
  readonly worker: WorkerDefinition;
  readonly minPartBytes: number;
  /** Run the side effect (ledger + webhook) after each output. */
  readonly notify: boolean;
  readonly receiver: Receiver;
  /** Records per batch (the mapping's BatchSize). */
  readonly batchSize: number;
  /** Every record's outcome, as the handler reported it (its `onOutcome` hook). */
  readonly outcomes: RecordOutcome[];
  /**
   * The first run of each of S3's fresh deliveries as the sandbox's own decision, explored both ways
   * (`first` is the alternative a depth-first search tries first; each answer is told to `told`),
   * instead of the handler's AdaptiveFirstRun.
   * @default the handler's AdaptiveFirstRun, one per sandbox
   */
  readonly exploreFirstRun?: ExploredFirstRun;
}

/** How the sandboxes' first-run decisions are explored (WorkerSetup.exploreFirstRun). */
export interface ExploredFirstRun {
  readonly first: FirstRunPath;
  readonly told: (path: FirstRunPath) => void;
}

/**
 * A first-run policy whose every choice is the explorer's: 'create' and 'check' are two steps of
 * the sandbox, and whichever the explorer picks is the path taken, so both are checked everywhere.
 */
function exploredFirstRun(scheduler: Scheduler, self: Actor, explored: ExploredFirstRun): FirstRunPolicy {
  const other = explored.first === FirstRunPath.CREATE ? FirstRunPath.CHECK : FirstRunPath.CREATE;
  return {
    async choose() {
      const path = await scheduler.decide(self, 'first run', [explored.first, other]);
      explored.told(path);
      return path;
    },
    observe() {},
    settle() {},
  };
}

/**
 * One Lambda sandbox behind the work queue's event source mapping: receives a batch (when a message
 * is visible), invokes the real batch handler built for it (a cold start: its own clients, store
 * and ledger), and deletes the records the handler did not report as failures, as the mapping does
 * with ReportBatchItemFailures. A crash leaves its batch in flight until the visibility timeout; the
 * other sandboxes of the mapping receive it then, or a new one when none is left.
 */
export function spawnPoller(world: SimWorld, setup: WorkerSetup, id: string): Actor {
  const { scheduler } = world;
  const actor = scheduler.spawn(
    id,
    async (self) => {
      const clients = world.clientsFor(self);
      const store = new S3ObjectStore(clients.s3, {
        minPartBytes: setup.minPartBytes,
        conflictRetry: { random: () => 0.5, sleep: (ms) => scheduler.sleep(self, ms) },
      });
      let claims = 0;
      const ledger = new DynamoDBLedger({
        client: clients.dynamodb,
        tableName: LEDGER_TABLE,
        now: () => scheduler.now,
        owner: () => `${self.id}-claim-${++claims}`,
      });
      const handler = createSqsBatchHandler({
        worker: setup.worker,
        store,
        sqs: clients.sqs,
        memoryBudget: false,
        ...(setup.exploreFirstRun ? { firstRunPolicy: exploredFirstRun(scheduler, self, setup.exploreFirstRun) } : {}),
        onOutcome: (outcome) => {
          setup.outcomes.push(outcome);
        },
        now: () => scheduler.now,
        sleep: (ms) => scheduler.sleep(self, ms),
        ...(setup.notify
          ? {
              afterOutput: async (output, context) => {
                const identity = {
                  bucket: output.bucket,
                  key: output.key,
                  sha256: output.sha256,
                  codeVersion: setup.worker.codeVersion,
                  source: { ...context.source, etag: output.sourceEtag },
                };
                const result = await ledger.once(
                  outputNotificationKey(identity),
                  {
                    bucket: output.bucket,
                    key: output.key,
                    sha256: output.sha256,
                    codeVersion: setup.worker.codeVersion,
                  },
                  async ({ dedupeKey }) => {
                    await setup.receiver.call(self, dedupeKey);
                    return { delivered: true };
                  },
                  { remainingTimeMs: context.remainingTimeMs },
                );
                return {
                  executed: result.status === 'executed',
                  note: result.status === 'executed' ? 'notified' : 'notification already sent',
                };
              },
            }
          : {}),
      });
      for (;;) {
        const received = await scheduler.request(self, {
          label: 'SQS ReceiveMessage (event source mapping)',
          footprint: world.sqs.footprint('ReceiveMessage', { QueueUrl: world.queueUrl }),
          enabled: () => world.sqs.hasVisible(world.queueUrl, scheduler.now),
          apply: () =>
            world.sqs.handle(
              'ReceiveMessage',
              { QueueUrl: world.queueUrl, MaxNumberOfMessages: setup.batchSize },
              scheduler.now,
            ),
        });
        const messages = (received.Messages ?? []) as {
          MessageId: string;
          ReceiptHandle: string;
          Body: string;
          Attributes: Record<string, string>;
        }[];
        if (messages.length === 0) continue;
        const event: SQSEvent = { Records: messages.map((m) => sqsRecord(world, m)) };
        const deadline = scheduler.now + FUNCTION_TIMEOUT_SECONDS * 1000;
        self.deadline = deadline;
        const response = await handler(
          event,
          lambdaContext(self, () => deadline - scheduler.now),
        );
        const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
        const done = messages.filter((m) => !failed.has(m.MessageId));
        if (done.length > 0) {
          await clients.sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: world.queueUrl,
              Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
            }),
          );
        }
        self.deadline = undefined;
      }
    },
    { crashable: true },
  );
  // The mapping carries on with a new sandbox when none of its sandboxes is left (with others
  // alive, they take the crashed batch when its visibility timeout ends).
  actor.onCrash = () => {
    const pollers = world.scheduler.live().filter((a) => a.crashable && a !== actor);
    if (pollers.length === 0) spawnPoller(world, setup, `${id}'`);
  };
  return actor;
}

/**
 * An operator's `rerun reprocess --prune` over the input prefix, run once during the race: it plans
 * by listings, enqueues the missing and stale inputs on the work queue and removes orphan outputs
 * with conditional deletes (the real runReprocess, on the simulated services).
 */
export function spawnPruner(world: SimWorld, worker: WorkerDefinition, id = 'reprocess-prune'): Actor {
  return world.scheduler.spawn(id, async (self) => {
    const clients = world.clientsFor(self);
    const mapping = (outputPrefix: string) =>
      deterministicKeyMapping({ inputBucket: INPUT_BUCKET, inputPrefix: INPUT_PREFIX, outputPrefix, suffix: '.txt' });
    await runReprocess({
      reader: new S3ListingReader(clients.s3),
      store: new S3ObjectStore(clients.s3, { minPartBytes: world.s3.minPartBytes }),
      sqs: clients.sqs,
      inputBucket: INPUT_BUCKET,
      worker,
      mapping: mapping('out/'),
      sideMappings: [mapping('quarantine/')],
      prefix: INPUT_PREFIX,
      prune: true,
      queueUrl: world.queueUrl,
      now: () => world.scheduler.now,
    });
  });
}

/** A change made behind the pipeline's back, to one of its outputs. */
export type Tamper = { readonly remove: 'main' | 'quarantine' } | { readonly corrupt: 'main' | 'quarantine' };

/**
 * Changes the outputs behind the pipeline (an operator's `aws s3 rm`, a buggy job), as `actor`'s
 * requests. The outputs are protected by the stack's policy, so even this writes conditionally:
 * it deletes on the ETag it sees, and replaces on it.
 */
export async function tamper(world: SimWorld, actor: Actor, key: string, changes: readonly Tamper[]): Promise<void> {
  for (const change of changes) {
    const which = 'remove' in change ? change.remove : change.corrupt;
    const source = { bucket: INPUT_BUCKET, key };
    const target = which === 'main' ? outputKeyOf(source) : quarantineKeyOf(source);
    const seen = await world.request(actor, 'S3', 'HeadObject', { Bucket: OUTPUT_BUCKET, Key: target });
    const input = { Bucket: OUTPUT_BUCKET, Key: target, IfMatch: String(seen.ETag) };
    if ('remove' in change) await world.request(actor, 'S3', 'DeleteObject', input);
    else await world.request(actor, 'S3', 'PutObject', { ...input, Body: 'CORRUPTED\n', Metadata: seen.Metadata });
  }
}

/**
 * One operation of the uploader, on the input key. `together`: two writes made at the same time to
 * a non-versioned key, which S3 may announce with a single event (S3 User Guide, "Amazon S3 Event
 * Notifications": "If two writes are made to a single non-versioned object at the same time, it is
 * possible that only a single event notification will be sent"); that event names the first
 * write's ETag (the one that is no longer current) and is sent once both writes are done. Sent
 * between them, it would leave the second write announced by no event: nothing that acts on events
 * can see that write (tried: the configuration then ends with the first write's output), which is
 * why AWS's advice there is to version the bucket, as RerunPipeline does.
 */
export type Upload =
  | { readonly put: string }
  | { readonly delete: true }
  | { readonly together: readonly [string, string] };

/** Someone writing the input: each operation one request, in order. */
export function spawnUploader(world: SimWorld, key: string, operations: readonly Upload[], id = 'uploader'): Actor {
  return world.scheduler.spawn(id, async (self) => {
    const put = (body: string) =>
      world.request(self, 'S3', 'PutObject', { Bucket: INPUT_BUCKET, Key: key, Body: body });
    for (const op of operations) {
      if ('put' in op) await put(op.put);
      else if ('together' in op) {
        // Only the uploader writes the input bucket, so no other write's event is held back here.
        world.notifications = false;
        await put(op.together[0]);
        const first = world.events.length;
        await put(op.together[1]);
        world.notifications = true;
        world.notify(first);
      } else await world.request(self, 'S3', 'DeleteObject', { Bucket: INPUT_BUCKET, Key: key });
    }
  });
}

/**
 * An operator's DLQ redrive (SQS StartMessageMoveTask from the work queue's DLQ back to it): each
 * dead letter comes back as a new message, its first receive a receive count of 1, its S3 event as
 * old as it is.
 */
export function spawnRedrive(world: SimWorld, id = 'redrive'): Actor {
  return world.scheduler.spawn(id, async (self) => {
    await world.request(self, 'SQS', 'StartMessageMoveTask', {
      SourceArn: world.sqs.arnOf(world.dlqUrl),
      DestinationArn: world.sqs.arnOf(world.queueUrl),
    });
  });
}

function sqsRecord(
  world: SimWorld,
  m: { MessageId: string; ReceiptHandle: string; Body: string; Attributes: Record<string, string> },
): SQSRecord {
  return {
    messageId: m.MessageId,
    receiptHandle: m.ReceiptHandle,
    body: m.Body,
    attributes: {
      ApproximateReceiveCount: m.Attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: m.Attributes.SentTimestamp ?? '0',
      SenderId: 'sim',
      ApproximateFirstReceiveTimestamp: m.Attributes.ApproximateFirstReceiveTimestamp ?? '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: world.sqs.arnOf(world.queueUrl),
    awsRegion: 'us-east-1',
  };
}

function lambdaContext(actor: Actor, remaining: () => number): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'sim-worker',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:sim-worker',
    memoryLimitInMB: '512',
    awsRequestId: `${actor.id}-${actor.nextSeq}`,
    logGroupName: '/aws/lambda/sim-worker',
    logStreamName: actor.id,
    getRemainingTimeInMillis: remaining,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}
