import {
  GetQueueAttributesCommand,
  ListDeadLetterSourceQueuesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type FailureRecord, queueNameOfArn } from '../../src/failures/failureRecord.js';
import { describeMessage } from './describeMessage.js';
import { tryMoveTask } from './moveTask.js';
import { RedriveError } from './RedriveError.js';
import type { DeadLetterRecheck } from './recheckDeadLetter.js';
import { releaseMessages } from './releaseMessages.js';
import { resend } from './resendDeadLetters.js';

/** How messages were (or would be) moved back. */
export const RedriveMethod = {
  /** Dry run, or nothing to move. */
  NONE: 'none',
  /** SQS `StartMessageMoveTask` (server-side, at most one task per DLQ). */
  MOVE_TASK: 'move-task',
  /** Receive -> send to the source queue -> delete from the DLQ, one message at a time. */
  RESEND: 'resend',
} as const;
export type RedriveMethod = (typeof RedriveMethod)[keyof typeof RedriveMethod];

/** A dead-lettered message as `rerun redrive` shows it. */
export interface DeadLetter {
  readonly messageId: string;
  /** What it was about (`s3://bucket/key`, a partition, or an excerpt). */
  readonly subject: string;
  /** Why the worker gave up on it, from its failure record. */
  readonly reason?: string;
  /** Receives of the failed delivery the record was written on. */
  readonly receiveCount?: number;
  readonly failedAt?: string;
  /** When it was first sent (SentTimestamp). */
  readonly sentAt?: string;
  /**
   * Set when a redrive cannot help: the message would fail again for the same deterministic
   * reason (see {@link RedriveOptions.recheck}).
   */
  readonly wouldFailAgain?: string;
}

/** Options of {@link redriveDeadLetters}. */
export interface RedriveOptions {
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly dlqUrl: string;
  /**
   * The queue messages go back to in the fallback (a move task returns each message to the queue it
   * came from by itself).
   * @default the DLQ's single source queue (ListDeadLetterSourceQueues)
   */
  readonly sourceQueueUrl?: string;
  /**
   * Marks dead letters that would fail again for the same deterministic reason (e.g. a body that is
   * not an S3 event, with a non-retryable record): see app/redrive/recheckDeadLetter.ts.
   * @default none marked
   */
  readonly recheck?: DeadLetterRecheck;
  /** Reads failure records (see S3FailureRecorder.read). @default reasons are not shown */
  readonly failures?: { read(queueName: string, messageId: string): Promise<FailureRecord | undefined> };
  /**
   * At most this many messages are inspected and, when fewer than the DLQ holds, moved (by the
   * fallback, which moves exactly the inspected ones).
   * @default 1000
   */
  readonly max?: number;
  /**
   * Messages per second. For a move task this is `MaxNumberOfMessagesPerSecond` (SQS accepts up to 500).
   * @default move task: chosen by SQS; fallback: 50
   */
  readonly ratePerSecond?: number;
  /**
   * Inspect and show only: every inspected message is made visible again and nothing is moved.
   * (Inspecting is a ReceiveMessage, so the DLQ's own ApproximateReceiveCount of a message grows.)
   * @default false
   */
  readonly dryRun?: boolean;
  /**
   * Move the messages `recheck` marked as failing again for the same reason too. Without it they
   * stay in the DLQ (made visible again): moving one back only spends its receives until it is
   * dead-lettered again. A move task moves a whole DLQ, so with such a message held back the others
   * are moved one by one.
   * @default false
   */
  readonly includeDoomed?: boolean;
  /** Long-poll wait of each inspecting receive (0-20 s). @default 1 */
  readonly receiveWaitSeconds?: number;
  /** Interval between move-task progress checks. @default 1000 */
  readonly pollIntervalMs?: number;
  /** Stops moving (a move task is cancelled: moved messages stay moved). */
  readonly signal?: AbortSignal;
  /**
   * Called once the messages are inspected, before anything moves, with the DLQ's counts at the
   * start: visible messages (`depth`) and messages held invisible by a reader (`inFlight`).
   */
  readonly onInspected?: (messages: readonly DeadLetter[], depth: number, inFlight: number) => void;
  /** Called as messages move. */
  readonly onProgress?: (moved: number, total: number) => void;
}

/** What a redrive did. */
export interface RedriveResult {
  readonly dlqUrl: string;
  readonly sourceQueueUrl?: string;
  /** Messages in the DLQ before (ApproximateNumberOfMessages). */
  readonly depth: number;
  /**
   * Messages of the DLQ held invisible by a reader at the start (ApproximateNumberOfMessagesNotVisible):
   * another redrive, a console poll, a consumer. They cannot be inspected or moved until they return.
   */
  readonly inFlight: number;
  readonly inspected: readonly DeadLetter[];
  readonly dryRun: boolean;
  readonly method: RedriveMethod;
  readonly moved: number;
  /** Messages left in the DLQ because they would fail again (see `includeDoomed`). */
  readonly keptBack: readonly string[];
  /** Messages that could not be moved (they stay in the DLQ), or were sent but not deleted. */
  readonly failed: readonly { readonly messageId: string; readonly error: string }[];
  /** Why the fallback was used, or what to know about the result. */
  readonly notes: readonly string[];
}

const RESEND_DEFAULT_RATE = 50;

/**
 * Moves a DLQ's messages back to their source queue, after showing each one with the reason its
 * worker last failed (from the failure records the batch handlers write).
 *
 * Capability is detected by trying, never by endpoint name: ListMessageMoveTasks (also to find a
 * task already running: SQS allows one per queue), then StartMessageMoveTask. Where they are not
 * supported (moto answers 500), or when `max` is smaller than the DLQ (a move task moves every
 * message), the fallback receives, sends to the source queue and deletes from the DLQ only after the
 * send succeeded, rate-limited. An interruption between a send and its delete leaves the message in
 * both queues: the worker's idempotency absorbs the duplicate, and on a FIFO queue the deduplication
 * id `redrive-<messageId>` drops a re-send within 5 minutes.
 *
 * @example
 * const result = await redriveDeadLetters({ sqs, dlqUrl, failures: recorder, onInspected: (m) => show(m) });
 */
export async function redriveDeadLetters(options: RedriveOptions): Promise<RedriveResult> {
  const { sqs, dlqUrl } = options;
  const max = options.max ?? 1000;
  const notes: string[] = [];
  const dlq = await queueInfo(sqs, dlqUrl);
  const sourceQueueUrl = options.sourceQueueUrl ?? (await soleSourceQueue(sqs, dlqUrl));
  const rate = options.ratePerSecond;
  const resendRate = rate ?? RESEND_DEFAULT_RATE;
  // Hold inspected messages long enough to resend them all at the rate (SQS maximum: 12 hours).
  const holdSeconds = options.dryRun ? 30 : Math.min(43_200, Math.ceil(max / resendRate) + 60);

  const messages = await inspect(sqs, dlqUrl, max, dlq.depth, holdSeconds, options.receiveWaitSeconds ?? 1);
  const sourceName = sourceQueueUrl ? queueNameOfUrl(sourceQueueUrl) : undefined;
  const letters = await Promise.all(
    messages.map((m) => describeLetter(m, sourceName, options.failures, options.recheck)),
  );
  options.onInspected?.(letters, dlq.depth, dlq.inFlight);
  const base = {
    dlqUrl,
    ...(sourceQueueUrl ? { sourceQueueUrl } : {}),
    depth: dlq.depth,
    inFlight: dlq.inFlight,
    inspected: letters,
  };

  // Messages that would fail again for the same reason stay where they are, unless asked (a dry run
  // says the same: what it would keep back is what a real run keeps back).
  const doomed = new Set(
    options.includeDoomed ? [] : letters.filter((l) => l.wouldFailAgain !== undefined).map((l) => l.messageId),
  );
  const keptBack = [...doomed];
  if (options.dryRun || messages.length === 0) {
    await releaseMessages(sqs, dlqUrl, messages);
    return {
      ...base,
      dryRun: options.dryRun === true,
      method: RedriveMethod.NONE,
      moved: 0,
      keptBack,
      failed: [],
      notes,
    };
  }

  if (doomed.size > 0) {
    await releaseMessages(
      sqs,
      dlqUrl,
      messages.filter((m) => doomed.has(m.MessageId as string)),
    );
    notes.push(
      `${doomed.size} message(s) marked [WOULD FAIL AGAIN] stay in the DLQ (--include-doomed moves them too): ` +
        'fix or delete them. The others are moved one by one (a move task would move the whole DLQ)',
    );
  }
  const movable = messages.filter((m) => !doomed.has(m.MessageId as string));
  if (movable.length === 0) {
    return { ...base, dryRun: false, method: RedriveMethod.NONE, moved: 0, keptBack, failed: [], notes };
  }

  if (dlq.depth <= max && doomed.size === 0) {
    const task = await tryMoveTask(sqs, dlq.arn, messages, options, notes);
    if (task) return { ...base, dryRun: false, method: RedriveMethod.MOVE_TASK, ...task, keptBack, notes };
  } else if (dlq.depth > max) {
    notes.push(
      `--max ${max} is below the DLQ's ${dlq.depth} messages: moving exactly the ${messages.length} shown, one by one`,
    );
  }

  if (!sourceQueueUrl && movable.some((m) => !m.Attributes?.DeadLetterQueueSourceArn)) {
    await releaseMessages(sqs, dlqUrl, movable);
    throw new RedriveError(
      `Cannot tell which queue the messages of ${dlqUrl} came from (ListDeadLetterSourceQueues names none or ` +
        'several): pass the source queue explicitly (--source-queue-url).',
    );
  }
  const resent = await resend(sqs, dlqUrl, movable, sourceQueueUrl, resendRate, options);
  return { ...base, dryRun: false, method: RedriveMethod.RESEND, ...resent, keptBack, notes };
}

async function queueInfo(
  sqs: Pick<SQSClient, 'send'>,
  url: string,
): Promise<{ arn: string; depth: number; inFlight: number }> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['QueueArn', 'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const arn = out.Attributes?.QueueArn;
  if (!arn) throw new RedriveError(`The queue ${url} did not report its QueueArn.`);
  return {
    arn,
    depth: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

async function soleSourceQueue(sqs: Pick<SQSClient, 'send'>, dlqUrl: string): Promise<string | undefined> {
  const out = await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlqUrl }));
  const urls = out.queueUrls ?? [];
  return urls.length === 1 ? urls[0] : undefined;
}

/**
 * Receives up to `max` distinct messages, holding each invisible for `holdSeconds`. It stops once it
 * holds as many as the DLQ reported at the start (later arrivals wait for the next redrive), or after
 * two receives in a row bring nothing new (SQS counts are approximate; FIFO groups may be blocked).
 */
async function inspect(
  sqs: Pick<SQSClient, 'send'>,
  dlqUrl: string,
  max: number,
  depth: number,
  holdSeconds: number,
  waitSeconds: number,
): Promise<Message[]> {
  const seen = new Map<string, Message>();
  let emptyReceives = 0;
  // An empty DLQ (by its count) gets one look, not two.
  const emptyLimit = depth === 0 ? 1 : 2;
  while (seen.size < max && (depth === 0 || seen.size < depth) && emptyReceives < emptyLimit) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: Math.min(10, max - seen.size),
        VisibilityTimeout: holdSeconds,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const fresh = (out.Messages ?? []).filter((m) => m.MessageId && !seen.has(m.MessageId));
    for (const m of fresh) seen.set(m.MessageId as string, m);
    emptyReceives = fresh.length === 0 ? emptyReceives + 1 : 0;
  }
  return [...seen.values()];
}

async function describeLetter(
  message: Message,
  sourceName: string | undefined,
  failures: RedriveOptions['failures'],
  recheck?: DeadLetterRecheck,
): Promise<DeadLetter> {
  const sourceArn = message.Attributes?.DeadLetterQueueSourceArn;
  const queueName = sourceArn ? queueNameOfArn(sourceArn) : sourceName;
  const record = queueName && failures ? await failures.read(queueName, message.MessageId as string) : undefined;
  const sent = Number(message.Attributes?.SentTimestamp);
  const letter: DeadLetter = {
    messageId: message.MessageId as string,
    subject: record?.subject ?? describeMessage(message.Body ?? ''),
    ...(Number.isFinite(sent) ? { sentAt: new Date(sent).toISOString() } : {}),
  };
  if (record) {
    const again = recheck?.(message.Body ?? '', record);
    return {
      ...letter,
      reason: record.reason,
      receiveCount: record.receiveCount,
      failedAt: record.failedAt,
      ...(again ? { wouldFailAgain: again } : {}),
    };
  }
  if (!failures) return letter;
  return {
    ...letter,
    reason: 'no failure record: the worker did not write one (function timeout, crash, or no recorder): see its logs',
  };
}

function queueNameOfUrl(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}
