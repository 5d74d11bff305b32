import type { JobOutcome, JobRunner, SubmittedJob } from './batchOperationsEngine.js';
import type { CodeVersionCutoff } from './codeVersionCutoff.js';
import type { ReprocessVerdict } from './planReprocess.js';
import type { ReprocessSummaryParts } from './reprocessEvents.js';
import { type ReprocessResult, ReprocessWaitEnd } from './reprocessResult.js';

/**
 * The SUMMARY line's object: the plan's figures, the engine, the job and how waiting ended, each
 * when the run has it.
 */
export function reprocessSummary(parts: ReprocessSummaryParts) {
  const { plan, job, jobWait, wait } = parts;
  return {
    ...(plan ? planSummary(plan.result, plan.prefix, plan.mode, plan.dryRun, plan.cutoff) : {}),
    ...(parts.engine ? { engine: parts.engine } : {}),
    ...(parts.runner ? { runner: parts.runner } : {}),
    ...(job ? { job: jobSummary(job.id, job.submitted, job.outcome, job.outputBucket) } : {}),
    ...(jobWait ? waitSummary(jobWait) : {}),
    ...(wait
      ? {
          waited: wait.ended,
          done: wait.done,
          remaining: wait.remaining,
          gone: wait.gone,
          deadLettered: wait.deadLettered,
          seconds: Math.round(wait.elapsedMs / 1000),
        }
      : {}),
  };
}

/** `--json`: the SUMMARY line's object, with the plan's counts and its sample when something was planned. */
export function reprocessJson(parts: ReprocessSummaryParts) {
  const summary = reprocessSummary(parts);
  return parts.plan
    ? { ...summary, plan: parts.plan.result.plan, sample: parts.plan.result.sample.map(brief) }
    : summary;
}

/** The note that a job was created (or found again), as stderr says it. */
export function jobLine(job: SubmittedJob, runner: JobRunner['kind']): string {
  if (runner === 'aws') {
    return `Job ${job.jobId} (CreateJob, token ${job.request.ClientRequestToken.slice(0, 12)}...; the same plan is the same job).`;
  }
  return job.ranBefore
    ? `Job ${job.jobId} (local stand-in) ran before for this very plan: its report is read, nothing runs again.`
    : `Job ${job.jobId} (local stand-in) ran ${job.totalTasks ?? 0} task(s).`;
}

function jobSummary(
  jobId: string,
  job: SubmittedJob | undefined,
  outcome: JobOutcome | undefined,
  outputBucket: string,
) {
  return {
    id: jobId,
    ...(job
      ? {
          token: job.request.ClientRequestToken,
          manifest: manifestOfJob(job.request),
          ...(job.ranBefore ? { ranBefore: true } : {}),
        }
      : {}),
    ...(outcome
      ? {
          status: outcome.status,
          tasks: outcome.total,
          succeeded: outcome.succeeded,
          failed: outcome.failed,
          ...(outcome.reportKey ? { report: `s3://${outputBucket}/${outcome.reportKey}` } : {}),
          failures: outcome.failures.map((f) => ({ key: f.key, resultCode: f.resultCode, reason: f.resultString })),
          ...(outcome.reasons.length > 0 ? { reasons: outcome.reasons } : {}),
        }
      : {}),
  };
}

/** The SQS engine's wait fields, from a job: done = succeeded tasks, remaining = the rest. */
function waitSummary(outcome: JobOutcome) {
  return {
    waited: outcome.ended,
    done: outcome.succeeded,
    remaining: Math.max(0, outcome.total - outcome.succeeded),
    gone: 0,
    deadLettered: 0,
    seconds: Math.round(outcome.elapsedMs / 1000),
  };
}

function planSummary(
  result: ReprocessResult,
  prefix: string,
  mode: string,
  dryRun: boolean,
  cutoff: CodeVersionCutoff,
) {
  return {
    prefix,
    mode,
    verify: result.verify,
    dryRun,
    planned: result.planned,
    enqueued: result.enqueued,
    pruned: result.pruned,
    alreadyGone: result.alreadyGone,
    kept: result.kept,
    sideOrphans: result.sideOrphans,
    interrupted: result.interrupted,
    counts: result.counts,
    requests: result.requests,
    // Outputs older than their input by the listings, each judged by one HEAD of its recorded source.
    sourceChecks: result.plan.sourceChecks,
    codeVersion:
      cutoff.state === 'known'
        ? { version: cutoff.codeVersion, firstRan: new Date(cutoff.since).toISOString() }
        : { version: cutoff.codeVersion, unknown: cutoff.reason },
  };
}

/** How a job ended, or how to follow it: the closing lines of a Batch Operations run. */
export function describeJob(
  jobId: string,
  outcome: JobOutcome | undefined,
  runner: JobRunner['kind'],
  waited: boolean,
): string {
  if (!outcome) {
    return `Job ${jobId} created. Follow it: rerun reprocess --engine batch-operations --job ${jobId} --wait\n`;
  }
  const s = Math.round(outcome.elapsedMs / 1000);
  const lines: string[] = [];
  if (outcome.ended === ReprocessWaitEnd.COMPLETE) {
    lines.push(`All ${outcome.succeeded} task(s) of job ${jobId} succeeded${runner === 'aws' ? ` in ${s} s` : ''}.`);
  } else if (outcome.ended === ReprocessWaitEnd.INCOMPLETE) {
    lines.push(
      `Job ${jobId} ended ${outcome.status}: ${outcome.succeeded} succeeded, ${outcome.failed} failed ` +
        '(its completion report lists them; a permanent failure also has a record under failures/s3-batch-job-<id>/).',
    );
    for (const f of outcome.failures.slice(0, 10))
      lines.push(`  ${f.resultCode.padEnd(16)} ${f.key}: ${f.resultString}`);
    if (outcome.failed > 10) lines.push('  ... (--json lists the first 20)');
    for (const r of outcome.reasons) lines.push(`  job: ${r}`);
  } else if (outcome.ended === ReprocessWaitEnd.TIMEOUT) {
    lines.push(`Timed out with job ${jobId} ${outcome.status}; it keeps running (attach again with --job ${jobId}).`);
  } else lines.push(`Stopped following job ${jobId} (${outcome.status}); it keeps running.`);
  if (!waited && runner === 'local') lines.push('(the local stand-in runs a job to its end at once.)');
  return `${lines.join('\n')}\n`;
}

function brief(v: ReprocessVerdict) {
  return { state: v.state, inputKey: v.inputKey, outputKey: v.outputKey, reason: v.reason };
}

/** The plan's closing table: the counts, a sample of the verdicts, what was sent, pruned and waited for. */
export function describeResult(result: ReprocessResult, inputBucket: string, sent = 'enqueue'): string {
  const c = result.counts;
  const lines = [
    `Prefix ${result.prefix} of ${inputBucket}: ${result.plan.inputs} input(s), ${result.plan.outputs} output(s).`,
    `  requests: ${result.requests.list} listing pages, ${result.requests.lookup} key lookups` +
      `${result.verify || result.requests.head > 0 ? `, ${result.requests.head} HEADs` : ''}` +
      `${result.plan.sourceChecks > 0 ? ` (${result.plan.sourceChecks} of outputs older than their input: their recorded source decides)` : ''}`,
    `  current ${c.current}, missing ${c.missing}, stale ${c.stale}` +
      `${result.verify ? `, invalid ${c.invalid}, old-code ${c['old-code']}` : ''}, orphan ${c.orphan}, skipped ${c.skipped}.`,
  ];
  const shown = result.sample.slice(0, 10);
  for (const v of shown) lines.push(`  ${v.state.padEnd(8)} ${v.inputKey ?? v.outputKey}: ${v.reason}`);
  if (result.planned + c.orphan > shown.length) lines.push('  ... (--json lists the first 20)');
  const planned = `Mode ${result.mode}: ${result.planned} input(s) to ${sent}`;
  if (result.dryRun) {
    lines.push(`${planned} (dry run: nothing is sent${c.orphan > 0 ? ', nothing is pruned' : ''}).`);
    return `${lines.join('\n')}\n`;
  }
  if (result.interrupted) {
    lines.push(`Interrupted after enqueueing ${result.enqueued}: run the same reprocess again to resume.`);
    return `${lines.join('\n')}\n`;
  }
  if (result.planned === 0) lines.push('Nothing to do: every input under the prefix is up to date for this mode.');
  else if (sent === 'enqueue') lines.push(`${planned}: enqueued ${result.enqueued}.`);
  else lines.push(`${planned}: ${result.enqueued} in it.`);
  if (result.sideOrphans > 0) lines.push(`  ${result.sideOrphans} side object(s) of gone inputs had no main output.`);
  if (result.pruned > 0) lines.push(`Pruned ${result.pruned} orphan output(s) (conditional deletes).`);
  if (result.alreadyGone > 0)
    lines.push(
      `${result.alreadyGone} orphan(s) were already gone when pruned (their input's delete event removed them).`,
    );
  if (!result.prune && c.orphan > 0) lines.push(`${c.orphan} orphan output(s) kept: remove them with --prune.`);
  if (result.kept.count > 0) {
    lines.push(`Kept ${result.kept.count} orphan(s) --prune does not remove, each for its reason:`);
    for (const k of result.kept.first.slice(0, 10)) lines.push(`  ${k.inputKey}: ${k.reason}`);
    if (result.kept.count > 10) lines.push('  ... (--json lists the first 20)');
  }
  const w = result.wait;
  if (w) {
    const s = Math.round(w.elapsedMs / 1000);
    if (w.ended === ReprocessWaitEnd.COMPLETE) lines.push(`All ${w.done} planned input(s) done in ${s} s.`);
    else if (w.ended === ReprocessWaitEnd.INCOMPLETE) {
      lines.push(
        `The queue is drained but ${w.remaining} planned input(s) are not done` +
          (w.deadLettered > 0
            ? `: ${w.deadLettered} message(s) reached the DLQ (rerun redrive --dry-run shows why).`
            : ': their inputs changed again, or the worker failed; run the same reprocess again.'),
      );
    } else if (w.ended === ReprocessWaitEnd.TIMEOUT) {
      lines.push(`Timed out with ${w.done}/${result.planned} done; the messages keep being processed.`);
    } else lines.push(`Stopped waiting (${w.done}/${result.planned} done); the messages keep being processed.`);
    if (w.gone > 0) lines.push(`${w.gone} planned input(s) were deleted meanwhile.`);
  }
  return `${lines.join('\n')}\n`;
}

/** Where a job's tasks come from, as the summary names it. */
function manifestOfJob(request: SubmittedJob['request']): string {
  if (request.Manifest) return request.Manifest.Location.ObjectArn.replace(/^arn:aws:s3:::/, 's3://');
  const generator = request.ManifestGenerator?.S3JobManifestGenerator;
  const prefix = generator?.Filter.KeyNameConstraint?.MatchAnyPrefix[0] ?? '';
  return `generated from ${generator?.SourceBucket.replace(/^arn:aws:s3:::/, 's3://')}/${prefix}`;
}
