import type { RecordOutcome, RecordStatus } from '../../src/worker/outcomes.js';

/**
 * Where an object stands at the end of a `rerun dev` session, from every delivery of it the
 * session saw (see {@link OutcomeTracker} for the ranking).
 */
export const ObjectState = {
  /** An output was written for it in this session (a later duplicate skipped as done changes nothing). */
  PROCESSED: 'processed',
  /** Every delivery was skipped: already done before the session, unsupported, a test event... */
  SKIPPED: 'skipped',
  /** Its last delivery failed for good: its last receive (SQS moves it to the DLQ next). */
  FAILED: 'failed',
  /**
   * Its last delivery seen here failed with receives left: the message went back to the queue, and
   * this session did not see it again (another consumer took it, or it returns after the visibility
   * timeout), or the deadline came near and its records were requeued as a new message. Not a
   * failure of the object: its final state is that consumer's, or the DLQ's.
   */
  RETRYING: 'retrying',
} as const;
export type ObjectState = (typeof ObjectState)[keyof typeof ObjectState];

/** What happened to one object (or one message that named no object) over a `rerun dev` session. */
export interface ObjectOutcomeRow {
  /** `s3://bucket/key`, or `message <id>` for a record without an object (e.g. an s3:TestEvent). */
  readonly subject: string;
  /** The object's state, ranked over its deliveries (see {@link OutcomeTracker}). */
  readonly status: ObjectState;
  /** The reason of the delivery that decided the state. */
  readonly reason: string;
  readonly outputKey?: string;
  /** How many record outcomes were seen for it (deliveries that reached the handler's record loop). */
  readonly attempts: number;
}

/** Objects by state, one each. */
export interface OutcomeCounts {
  readonly processed: number;
  readonly skipped: number;
  readonly failed: number;
  readonly retrying: number;
}

/** Deliveries by their own status: a duplicate's skip and a retried failure each count once. */
export type DeliveryCounts = Readonly<Record<RecordStatus, number>>;

/** Options of {@link OutcomeTracker}. */
export interface OutcomeTrackerOptions {
  /**
   * The maxReceiveCount of the queue a message came from, once known (the local runner tells each
   * message id as it receives it): a failure on that receive is final. Unknown: every failure is
   * taken as final, which can only over-report failures.
   * @default unknown for every message
   */
  readonly maxReceiveCountOf?: (messageId: string) => number | undefined;
}

/** What the tracker keeps of one object's deliveries. */
interface ObjectHistory {
  readonly subject: string;
  attempts: number;
  last: RecordOutcome;
  /** The latest delivery that wrote an output. */
  processed?: RecordOutcome;
}

/**
 * Folds the record outcomes a handler emits (src/worker/outcomes.ts) into one row per object, in
 * order of first appearance, ranking its deliveries so that the row tells the object's state:
 *
 * - the last delivery failed on its final receive: `failed` (even after an earlier output: the
 *   object's current content did not make it);
 * - else, any delivery in the session wrote an output: `processed` (a duplicate delivery skipped as
 *   done, or a retry that went to another consumer, never hides an output written here);
 * - else the last delivery failed with receives left, or was requeued: `retrying`;
 * - else `skipped`.
 *
 * Deliveries are counted apart ({@link deliveries}): two outputs written and a duplicate skipped are
 * `processed: 2` objects and `{ processed: 2, skipped: 1 }` deliveries.
 *
 * @example
 * const tracker = new OutcomeTracker();
 * const unsubscribe = onRecordOutcome((o) => tracker.add(o));
 * // ... run ...
 * tracker.counts(); // { processed: 5, skipped: 2, failed: 1, retrying: 0 }
 */
export class OutcomeTracker {
  private readonly bySubject = new Map<string, ObjectHistory>();
  /** The object each message named, once an outcome of it said: later outcomes of the message without one join that row. */
  private readonly subjectOfMessage = new Map<string, string>();
  private readonly byStatus: Record<RecordStatus, number> = {
    processed: 0,
    skipped: 0,
    failed: 0,
    requeued: 0,
  };
  private readonly maxReceiveCountOf: (messageId: string) => number | undefined;
  private executed = 0;

  constructor(options: OutcomeTrackerOptions = {}) {
    this.maxReceiveCountOf = options.maxReceiveCountOf ?? (() => undefined);
  }

  /** Side effects (webhook notifications) that ran, summed over every record outcome. */
  get effectsExecuted(): number {
    return this.executed;
  }

  add(outcome: RecordOutcome): void {
    this.executed += outcome.effectsExecuted ?? 0;
    this.byStatus[outcome.status]++;
    const byMessage = `message ${outcome.messageId}`;
    const subject = outcome.source
      ? `s3://${outcome.source.bucket}/${outcome.source.key}`
      : (this.subjectOfMessage.get(outcome.messageId) ?? byMessage);
    let history = this.bySubject.get(subject);
    // An earlier outcome of the same message that did not name its object (a record that never
    // started): it is this object's attempt, so its row joins this one and is not counted twice.
    const anonymous = subject !== byMessage ? this.bySubject.get(byMessage) : undefined;
    if (anonymous) {
      this.bySubject.delete(byMessage);
      history = history ? { ...history, attempts: history.attempts + anonymous.attempts } : { ...anonymous, subject };
      if (!history.processed && anonymous.processed) history.processed = anonymous.processed;
    }
    if (outcome.source) this.subjectOfMessage.set(outcome.messageId, subject);
    if (!history) history = { subject, attempts: 0, last: outcome };
    history.attempts++;
    history.last = outcome;
    if (outcome.status === 'processed') history.processed = outcome;
    this.bySubject.set(subject, history);
  }

  rows(): ObjectOutcomeRow[] {
    return [...this.bySubject.values()].map((h) => this.row(h));
  }

  counts(): OutcomeCounts {
    const counts = { processed: 0, skipped: 0, failed: 0, retrying: 0 };
    for (const row of this.rows()) counts[row.status]++;
    return counts;
  }

  /**
   * One delivery's outcome in the table's words, for the live view: `retrying` for a failure with
   * receives left, else its own status.
   *
   * @example
   * tracker.deliveryState({ messageId, status: 'failed', reason, receiveCount: 1 }); // 'retrying' (of 5)
   */
  deliveryState(outcome: RecordOutcome): ObjectState {
    if (outcome.status === 'requeued') return ObjectState.RETRYING;
    return outcome.status === 'failed' && !this.isFinal(outcome) ? ObjectState.RETRYING : outcome.status;
  }

  /** Every delivery by its own status. */
  deliveries(): DeliveryCounts {
    return { ...this.byStatus };
  }

  private row(h: ObjectHistory): ObjectOutcomeRow {
    const decided = (status: ObjectState, by: RecordOutcome): ObjectOutcomeRow => ({
      subject: h.subject,
      status,
      reason: by.reason,
      attempts: h.attempts,
      ...(by.outputKey !== undefined ? { outputKey: by.outputKey } : {}),
    });
    if (h.last.status === 'failed' && this.isFinal(h.last)) return decided(ObjectState.FAILED, h.last);
    if (h.processed) return decided(ObjectState.PROCESSED, h.processed);
    if (h.last.status === 'failed' || h.last.status === 'requeued') return decided(ObjectState.RETRYING, h.last);
    return decided(h.last.status === 'processed' ? ObjectState.PROCESSED : ObjectState.SKIPPED, h.last);
  }

  /** A failure on the queue's last receive: SQS moves the message to the DLQ, nothing retries it. */
  private isFinal(failure: RecordOutcome): boolean {
    const max = this.maxReceiveCountOf(failure.messageId);
    if (max === undefined || failure.receiveCount === undefined) return true;
    return failure.receiveCount >= max;
  }
}
