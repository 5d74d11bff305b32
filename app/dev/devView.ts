import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { InvocationReport } from '../../local/runner/invocationReport.js';
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
  async close(session: DevSession, windowStages: readonly SettledStage[] = []): Promise<ViewedSummary> {
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
    const { deadLettered, inFlight } = await this.settlement(session, windowStages);
    const deliveries = session.sink.deliveries();
    return {
      ...tracker.counts(),
      deliveries: tracker.deliveries(),
      deadLettered,
      inFlight,
      notified: tracker.effectsExecuted,
      sinkApplied: deliveries.filter((d) => d.applied).length,
      sinkRepeats: deliveries.reduce((sum, d) => sum + d.repeats, 0),
      invocations: progress.totals.invocations,
      records: progress.totals.records,
      outcomesSeen,
    };
  }

  /**
   * Where the messages stand at the end, per stage (normalize, summarize): in the DLQ, or still in
   * the source queue, not settled. Counted apart because SQS moves a message whose last receive
   * failed to the DLQ only at its next receive after the visibility timeout (the queue's redrive
   * policy): a session that ends before then leaves it in the source queue, held invisible, and a
   * count of the DLQ alone would say nothing was dead-lettered. Each non-empty queue is said with
   * what to do.
   */
  private async settlement(
    session: DevSession,
    windowStages: readonly SettledStage[],
  ): Promise<{ deadLettered: number; inFlight: number }> {
    let deadLettered = 0;
    let inFlight = 0;
    for (const stage of [
      { queueUrl: session.stack.queueUrl, dlqUrl: session.stack.dlqUrl, names: session.names },
      { queueUrl: session.summaryStage.queueUrl, dlqUrl: session.summaryStage.dlqUrl, names: session.summaryNames },
      ...windowStages,
    ]) {
      // Every message of the DLQ, also one a reader holds (the console's Dead letters view, a redrive).
      const dlq = await messagesIn(session.clients.sqs, stage.dlqUrl);
      deadLettered += dlq;
      if (dlq > 0) {
        this.human(
          `${dlq} message(s) in the DLQ ${stage.names.dlq}: rerun redrive --dry-run shows why; fix the cause, then redrive.\n`,
        );
      }
      const unsettled = await messagesIn(session.clients.sqs, stage.queueUrl);
      inFlight += unsettled;
      if (unsettled > 0) {
        this.human(
          `${unsettled} message(s) still in the queue ${stage.names.queue}, not settled: each is delivered again after ` +
            'its visibility timeout, or, when its last receive failed, moved to the DLQ at that next receive ' +
            '(the next rerun dev, or another consumer); rerun dev --once waits until they settle.\n',
        );
      }
    }
    return { deadLettered, inFlight };
  }
}

/** A stage whose queues the closing summary counts: a window stage of the user's pipeline. */
export interface SettledStage {
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly names: { readonly queue: string; readonly dlq: string };
}

/** Every message of a queue: visible, held invisible by a reader, and delayed (all approximate, as SQS counts). */
async function messagesIn(sqs: SQSClient, queueUrl: string): Promise<number> {
  const response = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = response.Attributes ?? {};
  return (
    Number(a.ApproximateNumberOfMessages ?? 0) +
    Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

/** What {@link whileRunningHints} and {@link lookAtOutputs} name: the session's output bucket and prefixes. */
export interface OutputsToLookAt {
  readonly outputBucket: string;
  readonly topology: Pick<Topology, 'appName' | 'outputPrefix' | 'quarantinePrefix'>;
  /** A worker of the user's writes under prefixes of its own: the whole bucket is listed. @default false */
  readonly ownHandler?: boolean;
  /** The window stages of the user's pipeline (`rerun dev --pipeline`), by name. @default none */
  readonly windowStages?: readonly string[];
}

/** The default app name: commands then need no `--app-name` to choose this session among others. */
const DEFAULT_APP = 'rerun';

/**
 * The lines `rerun dev` prints once it is ready: the commands that work against it while it runs,
 * from another terminal, with no variable set (each finds the running session by itself,
 * app/common/devSessionTarget.ts). A session of another app name than `rerun` adds `--app-name`, which
 * chooses it when several run.
 *
 * @example
 * whileRunningHints({ outputBucket: 'rerun-output', topology });
 */
export function whileRunningHints({
  outputBucket,
  topology: t,
  ownHandler = false,
  windowStages = [],
}: OutputsToLookAt): string {
  const app = t.appName === DEFAULT_APP ? '' : ` --app-name ${t.appName}`;
  const lines = ['While this runs, in another terminal (no variable needed):'];
  if (ownHandler) lines.push(`Outputs:    npx rerun ls s3://${outputBucket}/${app}`);
  else {
    lines.push(
      `Outputs:    npx rerun ls s3://${outputBucket}/${t.outputPrefix}${app}`,
      `Quarantine: npx rerun ls s3://${outputBucket}/${t.quarantinePrefix}${app}`,
    );
  }
  lines.push(`One object: npx rerun cat s3://${outputBucket}/<key from ls>${app}`);
  if (!ownHandler) lines.push(`Days:       npx rerun status --from YYYY-MM-DD --to YYYY-MM-DD${app}`);
  // A window stage of the user's pipeline: its windows, and a backfill of older ones (W in its grain).
  for (const stage of windowStages) {
    lines.push(
      `Windows:    npx rerun status --stage ${stage} --from W --to W${app}`,
      `Backfill:   npx rerun backfill --stage ${stage} --from W --to W${app}`,
    );
  }
  lines.push(`Console:    npx rerun ui${app}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The closing lines, printed at exit while the emulator is still up: for an emulator of the user's
 * (AWS_ENDPOINT_URL), which outlives the session, how to look at the outputs and the quarantine
 * with `rerun ls` / `rerun cat` at its endpoint; for the embedded one, which stops with `rerun dev`,
 * only that it stopped (the commands were printed when the session was ready, for while it runs).
 *
 * @example
 * lookAtOutputs({ outputBucket: 'rerun-output', topology }, 'http://127.0.0.1:4566', false);
 */
export function lookAtOutputs(outputs: OutputsToLookAt, endpoint: string, embedded: boolean): string {
  const { outputBucket, topology: t, ownHandler = false } = outputs;
  if (embedded) {
    return (
      'The embedded emulator stopped with rerun dev, and its outputs with it:\n' +
      'run without --once to look at them while it runs (the commands above).\n'
    );
  }
  const env = `AWS_ENDPOINT_URL=${endpoint}`;
  const lines = ownHandler
    ? [`Outputs:    ${env} npx rerun ls s3://${outputBucket}/`]
    : [
        `Outputs:    ${env} npx rerun ls s3://${outputBucket}/${t.outputPrefix}`,
        `Quarantine: ${env} npx rerun ls s3://${outputBucket}/${t.quarantinePrefix}`,
      ];
  lines.push(`One object: ${env} npx rerun cat s3://${outputBucket}/<key from ls>`);
  return `${lines.join('\n')}\n`;
}
