import { S3FailureRecorder } from '../../../src/failures/S3FailureRecorder.js';
import { partitionScheme } from '../../../src/partitions/partitionScheme.js';
import type { PartitionSpec } from '../../../src/partitions/partitionSpec.js';
import { parsePipelineDescription } from '../../../src/pipeline/parsePipelineDescription.js';
import type { DescribedStage } from '../../../src/pipeline/pipelineDescription.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import { windowStageOutputKeys } from '../../../src/window/windowStageOutputKeys.js';
import { parseWindowTaskMessage } from '../../../src/window/windowTaskMessage.js';
import { alignColumns } from '../../alignColumns.js';
import { type FailureReader, failuresWithLogFallback } from '../../redrive/failureFromLogs.js';
import { type DeadLetterRecheck, referenceRecheck } from '../../redrive/recheckDeadLetter.js';
import { type DeadLetter, type RedriveResult, redriveDeadLetters } from '../../redrive/redriveDeadLetters.js';
import { type CliCommand, CliUsageError, integerOption, writeResult } from '../../shared/command.js';
import { explainAwsError, requireQueueUrl } from '../../shared/pipelineResources.js';
import { readDescription } from '../../shared/pipelineStage.js';
import {
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  stringOption,
  targetOptions,
  targetOrExit,
  workerQueueUrl,
} from '../../shared/pipelineTarget.js';
import { isProgressStep, renderProgressBar } from '../../shared/progressBar.js';
import { StackOutput } from '../../stackOutputs.js';
import type { WorkerTopology } from '../../topology.js';
import { liveLine } from '../liveLine.js';

/** `rerun redrive`: show why dead-lettered messages failed, then move them back to their queue. */
export const command: CliCommand = {
  name: 'redrive',
  summary: 'Show the DLQ messages with the reason each last failed, then move them back to their source queue.',
  usage: 'rerun redrive [--queue normalize|summarize|NAME|URL] [--max N] [--rate N] [--dry-run] [--json] [options]',
  options: {
    queue: {
      type: 'string',
      valueName: 'NAME',
      description:
        "A worker (normalize, summarize), a stage of the stack's pipeline or of the running rerun dev's, or a DLQ name or URL (default: every DLQ)",
    },
    max: {
      type: 'string',
      valueName: 'N',
      description: 'Inspect at most N messages; below the DLQ size, move exactly those',
    },
    rate: { type: 'string', valueName: 'N', description: 'Move at most N messages per second (move task: up to 500)' },
    'dry-run': { type: 'boolean', description: 'Show the messages and reasons only; move nothing' },
    'include-doomed': {
      type: 'boolean',
      description: 'Move the messages marked [WOULD FAIL AGAIN] too (default: they stay in the DLQ)',
    },
    'source-queue-url': {
      type: 'string',
      valueName: 'URL',
      description: 'Where a DLQ given by name or URL sends back to (default: its only source queue)',
    },
    ...targetOptions,
  },
  details: `Each message is shown with the reason its worker gave up on it, read from the failure record the
worker wrote at failures/<queue>/<messageId>.json in the output bucket (a message without a record failed
by timeout or crash: see the function's logs). Fix the cause first, then run without --dry-run.

A message marked [WOULD FAIL AGAIN] (its failure is deterministic, e.g. a body that is not an S3 event)
stays in the DLQ unless --include-doomed is given: moved back, it would only spend its receives and return.

Moving uses SQS StartMessageMoveTask where the endpoint supports it (detected by trying), else receives,
sends to the source queue and deletes from the DLQ only after the send succeeded, rate-limited. With
--max below the DLQ's size, exactly the inspected messages are moved, one by one. Inspecting receives
the messages, so the DLQ's own receive count of each grows, even with --dry-run; nothing else changes.

On a stack of your own (--stack, with the pipeline description RerunPipeline and RerunWindowStage publish
with outputs: true), every stage's DLQ is found from the stack's outputs (DeadLetterQueueUrl for the object
stage its worker runs, <Stage>WindowDeadLetterQueueUrl for each window stage) and named by its stage;
--queue NAME takes a stage's name. A stage whose DLQ has no output is named in a note.

Exit: 0 done; 1 when a message could not be moved.

Examples:
  rerun redrive --dry-run
  rerun redrive --queue summarize --rate 10
  rerun redrive --stack rerun --queue normalize --dry-run
  rerun redrive --stack Uploads --queue daily`,
  async run({ values }, io) {
    const max = integerOption(values, 'max', { min: 1, max: 100_000 });
    const rate = integerOption(values, 'rate', { min: 1, max: 500 });
    const json = values.json === true;
    // Progress and notes go to stderr; the messages and what became of them are the result (stdout).
    const human = (text: string) => {
      if (!json) io.stderr(text);
    };
    const table = (text: string) => {
      if (!json) writeResult(io, text);
    };
    const target = await targetOrExit(values, io, 'redrive');
    if (typeof target === 'number') return target;
    const queue = stringOption(values, 'queue');
    const workers = [target.topology.normalize, target.topology.summarize];
    // The window stages of a running rerun dev of the user's pipeline (rerun dev --pipeline), by stage name.
    const windowStages = Object.entries(target.stack ? {} : (target.devPipeline?.windowStages ?? {}));
    const windowChosen = queue ? windowStages.filter(([name]) => name === queue) : windowStages;
    const { chosen, labels } = chooseWorkers(target, workers, queue);
    const dryRun = values['dry-run'] === true;

    const sourceOverride = stringOption(values, 'source-queue-url');
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
      for (const note of described?.notes ?? []) human(`note: ${note}\n`);
      const queues: Awaited<ReturnType<typeof resolveQueues>> = described?.queues ?? [
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
      let progressOpen = false;
      for (const q of queues) {
        table(`\n${q.label}: ${q.dlqUrl}`);
        const result = await redriveDeadLetters({
          sqs: target.clients.sqs,
          dlqUrl: q.dlqUrl,
          ...(q.sourceQueueUrl ? { sourceQueueUrl: q.sourceQueueUrl } : {}),
          failures: failuresOf(q.stage),
          ...(q.recheck ? { recheck: q.recheck } : q.stage ? { recheck: referenceRecheck(q.stage) } : {}),
          ...(max !== undefined ? { max } : {}),
          ...(rate !== undefined ? { ratePerSecond: rate } : {}),
          dryRun,
          includeDoomed: values['include-doomed'] === true,
          signal: io.signal,
          onInspected: (letters, depth, inFlight) => table(formatLetters(letters, depth, inFlight)),
          onProgress: (moved, total) => {
            if (!io.isTTY) {
              if (isProgressStep(moved, total)) human(`moved ${moved}/${total}\n`);
              return;
            }
            human(liveLine(`moved ${renderProgressBar(moved, total)}`, io.stderrColumns));
            progressOpen = true;
          },
        }).catch((error: unknown) => {
          throw explainAwsError(error, {
            role: q.label,
            name: q.dlqUrl,
            where: target.where,
            hint: 'Check the queue.',
          });
        });
        if (progressOpen) human('\n');
        progressOpen = false;
        for (const note of result.notes) human(`note: ${note}\n`);
        table(describeResult(result));
        results.push(result);
      }
      const moved = results.reduce((n, r) => n + r.moved, 0);
      const failed = results.reduce((n, r) => n + r.failed.length, 0);
      const inspected = results.reduce((n, r) => n + r.inspected.length, 0);
      const keptBack = results.reduce((n, r) => n + r.keptBack.length, 0);
      const inFlight = results.reduce((n, r) => n + r.inFlight, 0);
      if (json) io.stdout(JSON.stringify({ dryRun, inspected, moved, keptBack, failed, inFlight, queues: results }));
      else {
        const summary = { dryRun, inspected, moved, keptBack, failed, inFlight, queues: results.length };
        io.stdout(`SUMMARY ${JSON.stringify(summary)}`);
      }
      return failed > 0 ? 1 : 0;
    } catch (error) {
      return reportCommandError(error, io, 'redrive', json);
    }
  },
};

/**
 * Whether the `--stack` target has the worker's DLQ among its outputs (a RerunPipeline stack has no
 * summary stage); without `--stack` every worker is looked for.
 */
function stackHas(target: PipelineTarget, worker: WorkerTopology): boolean {
  if (!target.stack) return true;
  const output = worker.name === target.topology.summarize.name ? StackOutput.SUMMARY_DLQ_URL : StackOutput.DLQ_URL;
  return Boolean(target.stack.outputs[output]);
}

/**
 * The workers `--queue` picks (all the target has without it), and their DLQs' labels. The object stage
 * of a running rerun dev's pipeline is the worker the session runs with --handler (its queues are the
 * session's normalize pair): `--queue` takes the stage's name, and its DLQ is named by it.
 */
function chooseWorkers(
  target: PipelineTarget,
  workers: readonly WorkerTopology[],
  queue: string | undefined,
): { chosen: WorkerTopology[]; labels: Readonly<Record<string, string>> } {
  const devObject = target.stack ? undefined : devObjectStage(target.devPipeline?.pipeline);
  const workerOf = (name: string) => (name === devObject ? target.topology.normalize.name : name);
  return {
    chosen: queue ? workers.filter((w) => w.name === workerOf(queue)) : workers.filter((w) => stackHas(target, w)),
    labels: devObject ? { [target.topology.normalize.name]: `${devObject} DLQ (object stage)` } : {},
  };
}

/**
 * The object stage a running `rerun dev --pipeline` runs with `--handler`: the pipeline's only object
 * stage over an input prefix (rerun dev refuses one over another prefix). Undefined without a
 * session pipeline, or when it has none or several such stages (then the worker keeps its own name).
 */
function devObjectStage(pipeline: unknown): string | undefined {
  if (pipeline === undefined) return undefined;
  let description: ReturnType<typeof parsePipelineDescription>;
  try {
    description = parsePipelineDescription(pipeline);
  } catch {
    return undefined; // the tools that judge the pipeline report why it does not parse
  }
  const names = Object.entries(description.stages)
    .filter(([, stage]) => stage.kind === 'object' && 'prefix' in stage.input)
    .map(([name]) => name);
  return names.length === 1 ? names[0] : undefined;
}

/** A DLQ to redrive, with what tells its messages' fate. */
interface RedriveQueue {
  readonly label: string;
  readonly dlqUrl: string;
  readonly sourceQueueUrl?: string;
  /** rerun's own worker whose recheck and log group apply. */
  readonly stage?: 'normalize' | 'summarize';
  /** A user's window stage's recheck. */
  readonly recheck?: DeadLetterRecheck;
}

/**
 * The DLQs of a user's stack, from the pipeline description it publishes (RerunPipeline and
 * RerunWindowStage with `outputs: true`): the object stage its worker runs (PipelineStage) by
 * QueueUrl and DeadLetterQueueUrl, each window stage by `<Stage>WindowQueueUrl` and
 * `<Stage>WindowDeadLetterQueueUrl`, each named by its stage. A stage without those outputs is
 * named in a note. `--queue NAME` picks a stage by name. Undefined when the target is not such a
 * stack (no --stack, rerun's own stack, no description) or `--queue` is a DLQ's name or URL.
 */
async function describedQueues(
  target: PipelineTarget,
  queue: string | undefined,
  sourceOverride: string | undefined,
): Promise<{ queues: RedriveQueue[]; notes: string[] } | undefined> {
  const outputs = target.stack?.outputs;
  if (!outputs || outputs[StackOutput.PIPELINE_DESCRIPTION] === undefined) return undefined;
  // rerun's own stack: its normalize and summarize workers, as before descriptions.
  if (outputs[StackOutput.FUNCTION_NAME] || outputs[StackOutput.SUMMARY_QUEUE_URL]) return undefined;
  const { description, from } = await readDescription(target, {});
  const names = Object.keys(description.stages);
  if (queue !== undefined && !names.includes(queue)) {
    if (/^https?:\/\//.test(queue) || /dlq|dead/i.test(queue)) return undefined;
    throw new CliUsageError(
      `--queue "${queue}" is neither a stage of ${from} (${names.join(', ')}) nor a DLQ name or URL (expected a name with "dlq").`,
    );
  }
  const queues: RedriveQueue[] = [];
  const notes: string[] = [];
  for (const name of queue === undefined ? names : [queue]) {
    const stage = description.stages[name] as DescribedStage;
    let urls: { queue?: string | undefined; dlq?: string | undefined; outputs: string };
    if (stage.kind === 'window') {
      const keys = windowStageOutputKeys(name);
      urls = { queue: outputs[keys.queueUrl], dlq: outputs[keys.dlqUrl], outputs: `${keys.dlqUrl}` };
    } else if (outputs[StackOutput.PIPELINE_STAGE] === name) {
      urls = { queue: outputs[StackOutput.QUEUE_URL], dlq: outputs[StackOutput.DLQ_URL], outputs: StackOutput.DLQ_URL };
    } else {
      urls = { outputs: `a RerunPipeline's ${StackOutput.DLQ_URL} with ${StackOutput.PIPELINE_STAGE} ${name}` };
    }
    if (urls.dlq === undefined) {
      const why = `${from} has no output for the DLQ of stage ${name} (${urls.outputs})`;
      if (queue !== undefined)
        throw new CliUsageError(`--queue ${name}: ${why}. Pass the DLQ's URL with --queue instead.`);
      notes.push(`${why}: not looked at.`);
      continue;
    }
    const source = sourceOverride ?? urls.queue;
    queues.push({
      label: `${name} DLQ (${stage.kind} stage)`,
      dlqUrl: urls.dlq,
      ...(source ? { sourceQueueUrl: source } : {}),
      // An object stage's worker reads S3 events, as rerun's normalizer does.
      ...(stage.kind === 'window' ? { recheck: windowRecheck(name, stage.partitions) } : { stage: 'normalize' }),
    });
  }
  return { queues, notes };
}

/**
 * A window stage's dead letter fails again when its failure was not retryable and its body is still
 * no window task message of the stage (createWindowTaskHandler refuses it the same way).
 */
function windowRecheck(stage: string, partitions: PartitionSpec): DeadLetterRecheck {
  const scheme = partitionScheme(partitions);
  return (body, record) => {
    if (!record || record.retryable) return undefined;
    // Any sent time: a "closed" message always names a window; only whether the body is one matters.
    const parsed = parseWindowTaskMessage(body, { stage, scheme, sentTimestampMs: 0 });
    return parsed.kind === 'invalid' ? `would fail again: ${parsed.reason}` : undefined;
  };
}

/** The DLQs to redrive: by worker (with its work queue as the source) or one given by name/URL. */
async function resolveQueues(
  target: PipelineTarget,
  workers: readonly WorkerTopology[],
  queue: string | undefined,
  sourceOverride: string | undefined,
  env: NodeJS.ProcessEnv,
  labels: Readonly<Record<string, string>> = {},
): Promise<RedriveQueue[]> {
  if (queue && workers.length === 0) {
    if (!/^https?:\/\//.test(queue) && !/dlq|dead/i.test(queue)) {
      throw new CliUsageError(
        `--queue "${queue}" is neither a worker (normalize, summarize) nor a DLQ name or URL (expected a name with "dlq").`,
      );
    }
    const dlqUrl = await requireQueueUrl(target.clients.sqs, {
      role: 'dead-letter queue',
      name: queue,
      where: target.where,
      hint: 'Check the name, or pass a worker name (normalize, summarize).',
    });
    return [{ label: 'dead-letter queue', dlqUrl, ...(sourceOverride ? { sourceQueueUrl: sourceOverride } : {}) }];
  }
  const queues: RedriveQueue[] = [];
  for (const worker of workers) {
    const stage: 'normalize' | 'summarize' | undefined =
      worker.name === 'normalize' || worker.name === 'summarize' ? worker.name : undefined;
    queues.push({
      ...(stage ? { stage } : {}),
      label: labels[worker.name] ?? `${worker.name} DLQ`,
      dlqUrl: await workerQueueUrl(target, worker, 'dlq', undefined, env),
      sourceQueueUrl: sourceOverride ?? (await workerQueueUrl(target, worker, 'queue', undefined, env)),
    });
  }
  return queues;
}

function formatLetters(letters: readonly DeadLetter[], depth: number, inFlight: number): string {
  if (letters.length === 0 && inFlight > 0) {
    // Received by someone else and not yet returned: the DLQ is not empty, only unreadable now.
    return (
      `No visible message in the DLQ: about ${inFlight} are held invisible by another reader (another rerun ` +
      "redrive, a console poll, a consumer of the DLQ). They return when that reader's visibility timeout ends: " +
      'run this again then.\n'
    );
  }
  if (letters.length === 0) return 'No message in the DLQ.\n';
  const header = ['MESSAGE', 'RECEIVES', 'SUBJECT', 'REASON'];
  const rows = letters.map((l) => [
    l.messageId,
    l.receiveCount === undefined ? '-' : String(l.receiveCount),
    l.subject,
    // A dead letter that would fail again for the same reason is marked: fix it, or drop it.
    l.wouldFailAgain ? `[WOULD FAIL AGAIN] ${l.reason ?? '-'}` : (l.reason ?? '-'),
  ]);
  const shown = depth > letters.length ? ` (${letters.length} of about ${depth} shown)` : '';
  const held =
    inFlight > 0 ? ` About ${inFlight} more are held invisible by another reader: not shown, not moved.` : '';
  return `${alignColumns([header, ...rows])}\n${letters.length} message(s)${shown}.${held}\n`;
}

function describeResult(result: RedriveResult): string {
  if (result.dryRun) {
    const kept = result.keptBack.length;
    const stay = kept > 0 ? `; ${kept} marked [WOULD FAIL AGAIN] would stay (--include-doomed moves them too)` : '';
    return `Dry run: ${result.inspected.length - kept} message(s) would be moved back${stay}; nothing was moved.\n`;
  }
  if (result.inspected.length === 0) {
    return result.inFlight > 0
      ? 'Nothing moved: the messages held elsewhere are not readable now.\n'
      : 'Nothing to move.\n';
  }
  const failed = result.failed.map((f) => `  ${f.messageId}: ${f.error}\n`).join('');
  const kept = result.keptBack.length > 0 ? `Kept in the DLQ (would fail again): ${result.keptBack.join(', ')}\n` : '';
  return (
    `Moved ${result.moved} message(s) back to ${result.sourceQueueUrl ?? 'their source queue'} (${result.method}).\n` +
    kept +
    (failed ? `Not moved:\n${failed}` : '')
  );
}

/**
 * The failure records of a stage's messages; with `--stack` (its log groups in the outputs) and
 * @aws-sdk/client-cloudwatch-logs installed, a message without one is looked up in the stage's log
 * group, where the worker left the recorder's error when it could not write the record.
 */
async function failureReaders(
  target: {
    readonly region: string;
    readonly endpoint?: string | undefined;
    readonly stack?: { readonly outputs: Readonly<Record<string, string>> } | undefined;
  },
  recorder: FailureReader,
): Promise<(stage: 'normalize' | 'summarize' | undefined) => FailureReader> {
  const outputs = target.stack?.outputs ?? {};
  const groups = { normalize: outputs[StackOutput.LOG_GROUP], summarize: outputs[StackOutput.SUMMARIZE_LOG_GROUP] };
  const cwl =
    groups.normalize || groups.summarize
      ? await import('@aws-sdk/client-cloudwatch-logs').catch(() => undefined)
      : undefined;
  if (!cwl) return () => recorder;
  const logs = new cwl.CloudWatchLogsClient({
    region: target.region,
    ...(target.endpoint ? { endpoint: target.endpoint } : {}),
  });
  return (stage) => {
    const logGroup = stage ? groups[stage] : undefined;
    return logGroup ? failuresWithLogFallback(recorder, { logs, logGroup }) : recorder;
  };
}
