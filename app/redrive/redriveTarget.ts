import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { type CliIo, CliUsageError } from '../common/command.js';
import { explainAwsError, requireQueueUrl } from '../common/pipelineResources.js';
import { type PipelineTarget, reportCommandError, requireOutputBucket } from '../common/pipelineTarget.js';
import { failureReaders } from './failureFromLogs.js';
import { referenceRecheck } from './recheckDeadLetter.js';
import { type RedriveResult, redriveDeadLetters } from './redriveDeadLetters.js';
import type { RedriveEvents } from './redriveEvents.js';
import { chooseWorkers, describedQueues, type RedriveQueue, resolveQueues } from './redriveQueues.js';

/** What `rerun redrive` was asked, from its options. */
export interface RedriveRequest {
  /** `--queue`: a worker, a stage, or a DLQ's name or URL; every DLQ without it. */
  readonly queue?: string | undefined;
  /** `--source-queue-url`: where a DLQ given by name or URL sends back to. */
  readonly sourceQueueUrl?: string | undefined;
  readonly max?: number | undefined;
  readonly rate?: number | undefined;
  readonly dryRun: boolean;
  readonly includeDoomed: boolean;
  readonly json: boolean;
}

/**
 * `rerun redrive` on a target: each DLQ it picks is inspected (its messages shown with the reason each
 * last failed) and moved back to its source queue by app/redrive/redriveDeadLetters.ts. It writes
 * nothing itself: it tells its events (redriveEvents.ts) to `emit`, which renders them
 * (redriveConsole.ts), and ends with an `end` event. An error is reported on `io`. Exit 0 done, 1
 * when a message could not be moved.
 *
 * @example
 * const request = { dryRun: true, includeDoomed: false, json: false };
 * return redriveTarget(target, request, io, redriveConsole({ io, json: false, liveLine }));
 */
export async function redriveTarget(
  target: PipelineTarget,
  request: RedriveRequest,
  io: CliIo,
  emit: RedriveEvents,
): Promise<number> {
  const { queue, max, rate, dryRun, json } = request;
  const workers = [target.topology.normalize, target.topology.summarize];
  // The window stages of a running rerun dev of the user's pipeline (rerun dev --pipeline), by stage name.
  const windowStages = Object.entries(target.stack ? {} : (target.devPipeline?.windowStages ?? {}));
  const windowChosen = queue ? windowStages.filter(([name]) => name === queue) : windowStages;
  const { chosen, labels } = chooseWorkers(target, workers, queue);

  const sourceOverride = request.sourceQueueUrl;
  let described: Awaited<ReturnType<typeof describedQueues>>;
  try {
    // A user's stack: every stage's DLQ, found and named from the description it publishes.
    described = await describedQueues(target, queue, sourceOverride);
  } catch (error) {
    if (error instanceof CliUsageError) throw error;
    return reportCommandError(error, io, 'redrive', json);
  }
  try {
    await requireOutputBucket(target);
    const recorder = new S3FailureRecorder({
      store: new S3ObjectStore(target.clients.s3),
      sqs: target.clients.sqs,
      bucket: target.outputBucket,
      prefix: target.topology.failurePrefix,
    });
    for (const note of described?.notes ?? []) emit({ kind: 'note', text: `note: ${note}\n` });
    const queues: RedriveQueue[] = described?.queues ?? [
      ...(queue && windowChosen.length > 0
        ? []
        : await resolveQueues(target, chosen, queue, sourceOverride, io.env, labels)),
      ...(await Promise.all(
        windowChosen.map(async ([name, urls]) => ({
          label: `${name} DLQ`,
          dlqUrl: await requireQueueUrl(target.clients.sqs, {
            role: `window stage "${name}" dead-letter queue`,
            name: urls.dlqUrl,
            where: target.where,
            hint: 'Is the rerun dev session still running?',
          }),
          sourceQueueUrl: sourceOverride ?? urls.queueUrl,
        })),
      )),
    ];
    // With --stack: where a message has no failure record, the cause the worker logged instead.
    const failuresOf = await failureReaders(target, recorder);
    const results: RedriveResult[] = [];
    for (const q of queues) {
      emit({ kind: 'queue', label: q.label, dlqUrl: q.dlqUrl });
      const result = await redriveDeadLetters({
        sqs: target.clients.sqs,
        dlqUrl: q.dlqUrl,
        ...(q.sourceQueueUrl ? { sourceQueueUrl: q.sourceQueueUrl } : {}),
        failures: failuresOf(q.stage),
        ...(q.recheck ? { recheck: q.recheck } : q.stage ? { recheck: referenceRecheck(q.stage) } : {}),
        ...(max !== undefined ? { max } : {}),
        ...(rate !== undefined ? { ratePerSecond: rate } : {}),
        dryRun,
        includeDoomed: request.includeDoomed,
        signal: io.signal,
        onInspected: (letters, depth, inFlight) => emit({ kind: 'inspected', letters, depth, inFlight }),
        onProgress: (moved, total) => emit({ kind: 'moved', moved, total }),
      }).catch((error: unknown) => {
        throw explainAwsError(error, {
          role: q.label,
          name: q.dlqUrl,
          where: target.where,
          hint: 'Check the queue.',
        });
      });
      emit({ kind: 'phaseEnd' });
      for (const note of result.notes) emit({ kind: 'note', text: `note: ${note}\n` });
      emit({ kind: 'queueEnd', result });
      results.push(result);
    }
    const code = results.some((r) => r.failed.length > 0) ? 1 : 0;
    emit({ kind: 'end', code, dryRun, results });
    return code;
  } catch (error) {
    return reportCommandError(error, io, 'redrive', json);
  }
}
