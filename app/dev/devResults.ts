import type { DeliveryCounts } from './OutcomeTracker.js';

/** The `READY` line's payload. */
export interface DevReady {
  endpoint: string;
  region: string;
  emulator: 'embedded' | 'external';
  inputBucket: string;
  inputPrefix: string;
  outputBucket: string;
  queueUrl: string;
  dlqUrl: string;
  /** The dedupe ledger table of the webhook side effect. */
  ledgerTable: string;
  /** The local webhook sink the worker notifies; `GET {sinkUrl}/deliveries` lists what it received. */
  sinkUrl: string;
}

/** The `SUMMARY` line's payload. */
export interface DevSummary {
  /**
   * Objects by their state at the end of the session, one each, ranked over their deliveries
   * (app/dev/OutcomeTracker.ts): `processed` when an output was written for it in this session
   * (a later duplicate skipped as done does not undo that), `failed` when its last delivery failed
   * on the queue's last receive, `retrying` when its last delivery seen here failed with receives
   * left (another consumer took the retry), `skipped` otherwise.
   */
  processed: number;
  skipped: number;
  failed: number;
  retrying: number;
  /** Deliveries (record outcomes) by their own status: a duplicate counts here, not as an object. */
  deliveries: DeliveryCounts;
  /**
   * Messages in both DLQs (normalize, summarize) at the end, also those a reader holds invisible
   * (includes earlier sessions' messages).
   */
  deadLettered: number;
  /**
   * Messages still in both source queues at the end, not settled (visible, held invisible, or
   * delayed): each is delivered again, or, when its last receive failed, moved to the DLQ by the
   * queue's redrive policy at that next receive, which SQS makes only after the visibility timeout.
   * A session that ends before then (Ctrl+C, a drain timeout) counts such a message here and in
   * `failed`, not in `deadLettered`. 0 after a drained `--once`.
   */
  inFlight: number;
  /** Webhook notifications sent in this session (replays of already-sent ones are not counted). */
  notified: number;
  /** Distinct Idempotency-Keys the local sink applied in this session, and repeats it discarded. */
  sinkApplied: number;
  sinkRepeats: number;
  invocations: number;
  records: number;
  /**
   * False when records reached the handler but it reported no outcome (a handler not built with
   * createSqsBatchHandler; every copy of rerun-pipeline in the process reports to rerun dev, see
   * src/worker/outcomes.ts): processed, skipped and failed then count nothing, and `invocations`
   * and `records` are what is known.
   */
  outcomesSeen: boolean;
  uploaded: number;
  alreadyUploaded: number;
  /**
   * How the session ended: the queue was drained (`--once`), it was interrupted (Ctrl+C; how a
   * continuous session always ends), or `--once` gave up at its drain timeout.
   */
  ended: 'drained' | 'interrupted' | 'drain-timeout';
  durationMs: number;
}
