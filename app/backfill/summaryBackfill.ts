import type { CliIo } from '../common/command.js';
import { referenceInputRules } from '../common/inputRules.js';
import { explainAwsError } from '../common/pipelineResources.js';
import {
  emptyWindowHint,
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  workerQueueUrl,
} from '../common/pipelineTarget.js';
import { WaitEnd } from '../common/waitEnd.js';
import { SUMMARIZE_CODE_VERSION } from '../partition/codeVersion.js';
import { S3PartitionStore } from '../partition/S3PartitionStore.js';
import { summaryLayout } from '../partition/summaryLayout.js';
import { type PublishedRun, withPublishedRun } from '../runs/runProgressFile.js';
import type { BackfillEvents } from './backfillEvents.js';
import type { BackfillMode } from './planBackfill.js';
import { runBackfill } from './runBackfill.js';

/** What `rerun backfill` of rerun's daily summaries was asked, from its options. */
export interface SummaryBackfillRequest {
  readonly from: string;
  readonly to: string;
  readonly mode: BackfillMode;
  readonly dryRun: boolean;
  readonly rate?: number | undefined;
  readonly wait: boolean;
  readonly timeoutSeconds?: number | undefined;
  readonly pollIntervalMs?: number | undefined;
  /** `--queue-url`: the summarize queue (default: the target's). */
  readonly queueUrl?: string | undefined;
  /** `--dlq-url`: its DLQ, watched with --wait (default: the target's). */
  readonly dlqUrl?: string | undefined;
  readonly json: boolean;
}

/**
 * `rerun backfill` of rerun's daily summaries on a target: app/backfill/runBackfill.ts, published as a
 * run (rerun ui follows it). Its plan, progress, notes and end go as events (backfillEvents.ts) to the
 * sink `events` makes once the run is published (backfillConsole.ts renders them). Exit 0 done (or
 * planned, without --wait), 1 when --wait ends with days not published or times out, 130 interrupted.
 *
 * @example
 * return summaryBackfill(target, request, io, (run) => backfillConsole({ io, json, run, liveLine }));
 */
export async function summaryBackfill(
  target: PipelineTarget,
  request: SummaryBackfillRequest,
  io: CliIo,
  events: (run: PublishedRun) => BackfillEvents,
): Promise<number> {
  const { from, to, mode, dryRun, rate, timeoutSeconds, pollIntervalMs, json } = request;
  try {
    await requireOutputBucket(target);
    const queueUrl = await workerQueueUrl(target, target.topology.summarize, 'queue', request.queueUrl, io.env);
    const dlqUrl = request.wait
      ? await workerQueueUrl(target, target.topology.summarize, 'dlq', request.dlqUrl, io.env)
      : undefined;
    const label = `backfill ${from}..${to} (mode ${mode}${dryRun ? ', dry run' : ''})`;
    return await withPublishedRun({ command: 'backfill', label, target }, async (run) => {
      const emit = events(run);
      const result = await runBackfill({
        reader: new S3PartitionStore(target.clients.s3),
        sqs: target.clients.sqs,
        bucket: target.outputBucket,
        layout: summaryLayout(target.inputBucket, target.topology),
        inputs: referenceInputRules(target),
        codeVersion: SUMMARIZE_CODE_VERSION,
        queueUrl,
        ...(dlqUrl ? { dlqUrl } : {}),
        from,
        to,
        mode,
        dryRun,
        ...(rate !== undefined ? { ratePerSecond: rate } : {}),
        wait: request.wait,
        ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
        ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
        signal: io.signal,
        events: (event) => {
          emit(event);
          if (event.kind === 'plan') emit({ kind: 'note', text: emptyWindowHint(target, event.plan.partitions) ?? '' });
        },
      }).catch((error: unknown) => {
        throw explainAwsError(error, {
          role: 'output bucket or summarize queue',
          name: `${target.outputBucket} / ${queueUrl}`,
          where: target.where,
          hint: 'Check the names and your permissions.',
        });
      });
      emit({ kind: 'phaseEnd' });

      const ended = result.wait?.ended;
      emit({ kind: 'end', result });
      if (!dryRun && result.enqueued > 0 && queueUrl.endsWith('.fifo')) {
        emit({
          kind: 'note',
          text: '(FIFO queue: SQS drops a task it already received in the last 5 minutes, e.g. from an interrupted run.)\n',
        });
      }
      const code =
        result.interrupted || ended === WaitEnd.INTERRUPTED
          ? 130
          : ended === WaitEnd.INCOMPLETE || ended === WaitEnd.TIMEOUT
            ? 1
            : 0;
      emit({ kind: 'summary', result, code });
      return code;
    });
  } catch (error) {
    return reportCommandError(error, io, 'backfill', json);
  }
}
