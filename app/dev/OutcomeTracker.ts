import type { RecordOutcome, RecordStatus } from '../../src/worker/outcomes.js';

/** What happened to one object (or one message that named no object) over a `rerun dev` session. */
export interface ObjectOutcomeRow {
  /** `s3://bucket/key`, or `message <id>` for a record without an object (e.g. an s3:TestEvent). */
  readonly subject: string;
  /** The latest status: a failure followed by a successful retry reads `processed`. */
  readonly status: RecordStatus;
  readonly reason: string;
  readonly outputKey?: string;
  /** How many record outcomes were seen for it (deliveries that reached the handler's record loop). */
  readonly attempts: number;
}

/** Counts by latest status, one per object. */
export interface OutcomeCounts {
  readonly processed: number;
  readonly skipped: number;
  readonly failed: number;
}

/**
 * Folds the record outcomes a handler emits (see src/worker/outcomes.ts) into one row per object,
 * in order of first appearance. Retries of the same object update its row.
 *
 * @example
 * const tracker = new OutcomeTracker();
 * const unsubscribe = onRecordOutcome((o) => tracker.add(o));
 * // ... run ...
 * tracker.counts(); // { processed: 5, skipped: 2, failed: 1 }
 */
export class OutcomeTracker {
  private readonly bySubject = new Map<string, ObjectOutcomeRow>();
  /** The object each message named, once an outcome of it said: later outcomes of the message without one join that row. */
  private readonly subjectOfMessage = new Map<string, string>();
  private executed = 0;

  /** Side effects (webhook notifications) that ran, summed over every record outcome. */
  get effectsExecuted(): number {
    return this.executed;
  }

  add(outcome: RecordOutcome): void {
    this.executed += outcome.effectsExecuted ?? 0;
    const byMessage = `message ${outcome.messageId}`;
    const subject = outcome.source
      ? `s3://${outcome.source.bucket}/${outcome.source.key}`
      : (this.subjectOfMessage.get(outcome.messageId) ?? byMessage);
    let previous = this.bySubject.get(subject);
    // An earlier outcome of the same message that did not name its object (a record that never
    // started): it is this object's attempt, so its row joins this one and is not counted twice.
    const anonymous = subject !== byMessage ? this.bySubject.get(byMessage) : undefined;
    if (anonymous) {
      this.bySubject.delete(byMessage);
      previous = { ...anonymous, attempts: anonymous.attempts + (previous?.attempts ?? 0) };
    }
    if (outcome.source) this.subjectOfMessage.set(outcome.messageId, subject);
    const row: ObjectOutcomeRow = {
      subject,
      status: outcome.status,
      reason: outcome.reason,
      attempts: (previous?.attempts ?? 0) + 1,
      ...(outcome.outputKey !== undefined ? { outputKey: outcome.outputKey } : {}),
    };
    this.bySubject.set(subject, row);
  }

  rows(): ObjectOutcomeRow[] {
    return [...this.bySubject.values()];
  }

  counts(): OutcomeCounts {
    const counts = { processed: 0, skipped: 0, failed: 0 };
    for (const row of this.bySubject.values()) counts[row.status]++;
    return counts;
  }
}
