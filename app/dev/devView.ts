import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { InvocationReport } from '../../local/runner/LocalRunner.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';
import type { Topology } from '../topology.js';
import type { DevSummary } from './devResults.js';
import type { DevSession } from './devSession.js';
import { formatOutcomeLine, formatOutcomeTable } from './formatOutcomeTable.js';
import { ObjectState, OutcomeTracker } from './OutcomeTracker.js';
import { ProgressReporter } from './ProgressReporter.js';

/** Options of {@link DevView}. */
export interface DevViewOptions {
  /** Receives everything meant for a person. */
  human: (text: string) => void;
  /** @default false */
  tty?: boolean | undefined;
  /** The terminal's width: the live lines and the table fit in it. @default unlimited */
  columns?: number | undefined;
}

/** The counts of the `SUMMARY` line that the view saw (the session adds uploads, end and duration). */
export type ViewedSummary = Omit<DevSummary, 'uploaded' | 'alreadyUploaded' | 'ended' | 'durationMs'>;

/**
 * What a person sees of a `rerun dev` session: each object's outcome on its own line as it happens,
 * the runners' progress, and at the end the per-object table, the DLQ notes and the counts.
 *
 * @example
 * const view = new DevView({ human: (t) => process.stderr.write(t) });
 * const unsubscribe = onRecordOutcome((o) => view.outcome(o));
 */
export class DevView {
  /**
   * Which queue's maxReceiveCount applies to a message, noted by its runner as it receives it: a
   * failure on the last receive is final, one with receives left is retried.
   */
  private readonly receivesOf = new Map<string, number>();
  private readonly tracker = new OutcomeTracker({ maxReceiveCountOf: (id) => this.receivesOf.get(id) });
  private readonly progress: ProgressReporter;
  private readonly human: (text: string) => void;
  private readonly columns: number | undefined;

  constructor(options: DevViewOptions) {
    this.human = options.human;
    this.columns = options.columns;
    this.progress = new ProgressReporter({ write: options.human, tty: options.tty ?? false });
  }

  /** The listener of a runner's receives, for a stage whose queue has this maxReceiveCount. */
  onReceive(maxReceiveCount: number): (messageIds: readonly string[]) => void {
    return (messageIds) => {
      for (const id of messageIds) this.receivesOf.set(id, maxReceiveCount);
    };
  }

  /** One record's outcome, as it happens: its own line, named by its object. */
  outcome(o: RecordOutcome): void {
    this.tracker.add(o);
    const subject = o.source ? `s3://${o.source.bucket}/${o.source.key}` : `message ${o.messageId}`;
    // Named as the table names it: a failure with receives left is retried, not failed.
    this.progress.note(
      formatOutcomeLine({ status: this.tracker.deliveryState(o), subject, reason: o.reason }, this.columns),
    );
  }

  invocation(report: InvocationReport): void {
    this.progress.invocation(report);
  }

  /** A line saying what the session does now. */
  note(text: string): void {
    this.progress.note(text);
  }

  /**
   * Ends the live view, then shows the per-object table, what `retrying` means when a row has it,
   * and each DLQ that holds messages; returns the counts of the `SUMMARY` line.
   */
  async close(session: DevSession): Promise<ViewedSummary> {
    this.progress.finish();
    const { tracker, progress, human } = this;
    const rows = tracker.rows();
    const outcomesSeen = rows.length > 0 || progress.totals.records === 0;
    human(
      `\n${formatOutcomeTable(rows, {
        recordsDelivered: progress.totals.records,
        ...(this.columns ? { width: this.columns } : {}),
      })}`,
    );
    if (rows.some((r) => r.status === ObjectState.RETRYING)) {
      human(
        'retrying: its last delivery here failed with receives left, so the message went back to the queue and ' +
          'this session did not see it again (another consumer took it, or it returns after the visibility timeout); ' +
          "or the function's time ran short and its remaining S3 records were requeued as a new message.\n",
      );
    }
    const deadLettered = await this.deadLettered(session);
    const deliveries = session.sink.deliveries();
    return {
      ...tracker.counts(),
      deliveries: tracker.deliveries(),
      deadLettered,
      notified: tracker.effectsExecuted,
      sinkApplied: deliveries.filter((d) => d.applied).length,
      sinkRepeats: deliveries.reduce((sum, d) => sum + d.repeats, 0),
      invocations: progress.totals.invocations,
      records: progress.totals.records,
      outcomesSeen,
    };
  }

  /** Messages in both DLQs (normalize, summarize), each non-empty one said with what to do. */
  private async deadLettered(session: DevSession): Promise<number> {
    let deadLettered = 0;
    for (const [dlqUrl, dlqName] of [
      [session.stack.dlqUrl, session.names.dlq],
      [session.summaryStage.dlqUrl, session.summaryNames.dlq],
    ] as const) {
      const count = await approximateMessages(session.clients.sqs, dlqUrl);
      deadLettered += count;
      if (count > 0) {
        this.human(
          `${count} message(s) in the DLQ ${dlqName}: rerun redrive --dry-run shows why; fix the cause, then redrive.\n`,
        );
      }
    }
    return deadLettered;
  }
}

async function approximateMessages(sqs: SQSClient, queueUrl: string): Promise<number> {
  const response = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(response.Attributes?.ApproximateNumberOfMessages ?? 0);
}

/**
 * The closing lines: how to look at the outputs and the quarantine, with `rerun ls` / `rerun cat`
 * for the endpoint in use. They are printed while the emulator is still up; an embedded one stops
 * when rerun dev exits, which the text says (keep rerun dev running, or use AWS_ENDPOINT_URL).
 * A worker of the user's (`ownHandler`) writes under prefixes of its own: the whole bucket is listed.
 *
 * @example
 * lookAtOutputs('rerun-output', topology, 'http://127.0.0.1:4000', true);
 */
export function lookAtOutputs(
  outputBucket: string,
  t: Pick<Topology, 'outputPrefix' | 'quarantinePrefix'>,
  endpoint: string,
  embedded: boolean,
  ownHandler = false,
): string {
  const env = `AWS_ENDPOINT_URL=${endpoint}`;
  const lines = ownHandler
    ? [`Outputs:    ${env} npx rerun ls s3://${outputBucket}/`]
    : [
        `Outputs:    ${env} npx rerun ls s3://${outputBucket}/${t.outputPrefix}`,
        `Quarantine: ${env} npx rerun ls s3://${outputBucket}/${t.quarantinePrefix}`,
      ];
  lines.push(`One object: ${env} npx rerun cat s3://${outputBucket}/<key from ls>`);
  if (embedded) {
    lines.push('(the embedded emulator stops when rerun dev exits: run these while it runs, without --once)');
  }
  return `${lines.join('\n')}\n`;
}
