import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import { type FailureRecord, failureRecordKey } from '../../src/failures/failureRecord.js';
import type { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import type { WorkerTopology } from '../topology.js';
import type { ConsoleSource } from './consoleSource.js';
import { queueNameOfUrl, readQueueDepth } from './queueDepth.js';
import type { WindowStageQueue } from './windowStageQueues.js';

/** The most failure records one Dead letters view reads. */
export const MAX_DEAD_LETTERS = 100;

/** A dead letter as the console shows it: what its worker's failure record says. */
export interface RecordedDeadLetter {
  readonly messageId: string;
  /** What it was about (`s3://bucket/key`), or the message id when the record names no object. */
  readonly subject: string;
  /** Why the worker gave up on it. */
  readonly reason: string;
  /** Receives of the failed delivery the record was written on, and the queue's limit. */
  readonly receiveCount: number;
  readonly maxReceiveCount?: number;
  /** `non-retryable`: no retry fixes it as the worker stands; `last-receive`: its receives ran out. */
  readonly givenUp: FailureRecord['givenUp'];
  readonly retryable: boolean;
  readonly failedAt: string;
}

/**
 * A DLQ as the console shows it, without receiving from it: the DLQ's counts from GetQueueAttributes,
 * and its messages from the failure records the worker wrote (`failures/<queue>/<message id>.json`).
 * A receive would raise each message's receive count, and hide it from a redrive for a while.
 */
export interface DeadLetterView {
  /** The worker's name, or the window stage's. */
  readonly worker: string;
  /** The user's window stage whose DLQ this is (absent for a worker's). */
  readonly stage?: string;
  /** The user's object stage whose worker's DLQ this is: the view is headed by it (absent on rerun's own pipeline). */
  readonly objectStage?: string;
  readonly dlqUrl: string;
  /** Messages the DLQ holds (ApproximateNumberOfMessages). */
  readonly depth: number;
  /** Messages held invisible by a reader, e.g. a running redrive (ApproximateNumberOfMessagesNotVisible). */
  readonly inFlight: number;
  /** The failure records of the worker's queue, newest first (at most {@link MAX_DEAD_LETTERS}). */
  readonly letters: readonly RecordedDeadLetter[];
  /** Records under the prefix beyond those shown. */
  readonly more: boolean;
  /** Where the records were listed: `s3://<output bucket>/<failure prefix><queue>/`. */
  readonly recordsAt: string;
  /** Age of the oldest record shown (from its failedAt), seconds. */
  readonly oldestFailureAgeSeconds?: number;
  /** The exact command that moves them back (the console moves nothing). */
  readonly command: string;
  readonly notes: readonly string[];
}

/** What the Dead letters view reads with: the console's source, the failure records, the clock. */
export interface DeadLetterReader {
  readonly source: ConsoleSource;
  readonly recorder: S3FailureRecorder;
  readonly now: () => number;
}

/**
 * A worker's DLQ (or a user's window stage's) as the console shows it, never received from: its
 * counts (GetQueueAttributes) and the failure records its worker wrote, one listing and one GET per
 * record (at most `max`). A
 * record's message is in the DLQ or on its way there (a non-retryable failure is received until
 * maxReceiveCount); a message the worker could not record (a timeout, a crash) is counted, not
 * listed, and the notes say so when the counts differ.
 */
export async function readDeadLetters(
  reader: DeadLetterReader,
  worker: WorkerTopology | WindowStageQueue,
  max = MAX_DEAD_LETTERS,
): Promise<DeadLetterView> {
  const { target } = reader.source;
  const name = 'stage' in worker ? worker.stage : worker.name;
  const urls = 'stage' in worker ? worker : await reader.source.queueUrls(worker);
  const queueName = queueNameOfUrl(urls.queue);
  const prefix = failureRecordKey(target.topology.failurePrefix, queueName, '').replace(/\.json$/, '');
  const [counts, listed] = await Promise.all([
    readQueueDepth(target.clients.sqs, `${name} DLQ`, urls.dlq),
    target.clients.s3.send(new ListObjectsV2Command({ Bucket: target.outputBucket, Prefix: prefix, MaxKeys: max })),
  ]);
  const ids = (listed.Contents ?? []).flatMap((o) => {
    const id = o.Key?.slice(prefix.length).replace(/\.json$/, '');
    return id && !id.includes('/') && o.Key?.endsWith('.json') ? [id] : [];
  });
  const records = await mapWithConcurrency(ids, 8, (id) => reader.recorder.read(queueName, id));
  const letters = records
    .flatMap((r) => (r ? [recordedLetter(r)] : []))
    .sort((a, b) => b.failedAt.localeCompare(a.failedAt));
  const failed = letters.flatMap((l) => {
    const at = Date.parse(l.failedAt);
    return Number.isFinite(at) ? [at] : [];
  });
  const where = target.stack
    ? ` --stack ${target.stack.stackName}`
    : target.appName !== 'rerun'
      ? ` --app-name ${target.appName}`
      : '';
  const notes: string[] = [];
  const held = counts.visible + counts.inFlight;
  const more = listed.IsTruncated === true;
  if (more) notes.push(`The newest ${letters.length} failure records are read; more are stored under ${prefix}.`);
  if (!more && held > letters.length) {
    notes.push(
      `The DLQ holds ${held} message(s) and ${letters.length} have a failure record: the others ended without one ` +
        '(a function timeout or crash; see the function logs). rerun redrive --dry-run receives and shows each.',
    );
  } else if (held < letters.length) {
    notes.push(
      `${letters.length - held} failure record(s) more than the DLQ holds: their messages are still being received ` +
        'by the worker (a non-retryable failure reaches the DLQ at its last receive), or were moved back since.',
    );
  }
  return {
    worker: name,
    ...('stage' in worker ? { stage: worker.stage } : {}),
    dlqUrl: urls.dlq,
    depth: counts.visible,
    inFlight: counts.inFlight,
    letters,
    more,
    recordsAt: `s3://${target.outputBucket}/${prefix}`,
    ...(failed.length > 0 ? { oldestFailureAgeSeconds: Math.round((reader.now() - Math.min(...failed)) / 1000) } : {}),
    command: `rerun redrive --queue ${name}${where}`,
    notes,
  };
}

/** A failure record as the Dead letters view lists it. */
function recordedLetter(record: FailureRecord): RecordedDeadLetter {
  return {
    messageId: record.messageId,
    subject: record.subject ?? `message ${record.messageId}`,
    reason: record.reason,
    receiveCount: record.receiveCount,
    ...(record.maxReceiveCount !== undefined ? { maxReceiveCount: record.maxReceiveCount } : {}),
    givenUp: record.givenUp,
    retryable: record.retryable,
    failedAt: record.failedAt,
  };
}
