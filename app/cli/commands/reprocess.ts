import type { CliCommand } from '../../common/command.js';
import { type PlanningStage, resolvePlanningStage, stageOptions } from '../../common/pipelineStage.js';
import { reportCommandError, targetOptions, targetOrExit } from '../../common/pipelineTarget.js';
import { reprocessConsole } from '../../reprocess/reprocessConsole.js';
import { reprocessWithEngine } from '../../reprocess/reprocessWithEngine.js';
import { liveLine } from '../liveLine.js';
import { reprocessRequest } from '../reprocessOptions.js';

/** `rerun reprocess`: rerun the main stage over a prefix of the input bucket. */
export const command: CliCommand = {
  name: 'reprocess',
  summary: 'Rerun the main stage over a prefix: enqueue what is missing or stale',
  usage: 'rerun reprocess [--prefix P] [--mode MODE] [--engine E] [options]',
  options: {
    prefix: {
      type: 'string',
      valueName: 'P',
      description: 'Input key prefix (default: incoming/)',
    },
    mode: {
      type: 'string',
      valueName: 'MODE',
      description: 'missing | stale (default: also outdated) | all',
    },
    verify: {
      type: 'boolean',
      description: 'HEAD each current-looking output: corrupt, old code',
    },
    prune: { type: 'boolean', description: 'Remove outputs of gone inputs (If-Match deletes)' },
    'dry-run': { type: 'boolean', description: 'Print the plan, send and delete nothing' },
    rate: { type: 'string', valueName: 'N', description: 'At most N messages (and deletes) per second' },
    wait: { type: 'boolean', description: 'Follow the planned inputs to their outcomes' },
    timeout: { type: 'string', valueName: 'SECONDS', description: 'With --wait, give up after this long' },
    // Hidden (no description): tuning for tests and slow links.
    'poll-interval': { type: 'string', valueName: 'MS' },
    'verify-concurrency': { type: 'string', valueName: 'N' },
    shards: {
      type: 'string',
      valueName: 'N',
      description: 'List N key ranges at once while planning (default: 1)',
    },
    'code-overlap': {
      type: 'string',
      valueName: 'SECONDS',
      description: 'Code rollout window (default: fn timeout + 60)',
    },
    engine: {
      type: 'string',
      valueName: 'E',
      description: 'sqs (default) | batch-operations | auto',
    },
    job: {
      type: 'string',
      valueName: 'ID',
      description: 'Attach to the Batch Operations job ID',
    },
    'role-arn': {
      type: 'string',
      valueName: 'ARN',
      description: "A job's role (default: a --stack output)",
    },
    'function-arn': {
      type: 'string',
      valueName: 'ARN',
      description: 'Function a job invokes (default: a --stack output)',
    },
    manifest: {
      type: 'string',
      valueName: 'S3URL',
      description: 'Inputs from an S3 Inventory manifest.json (CSV)',
    },
    'generate-manifest': {
      type: 'boolean',
      description: 'Let the job list the prefix itself (no planning)',
    },
    'created-after': {
      type: 'string',
      valueName: 'TIME',
      description: 'With --generate-manifest: objects created after',
    },
    'created-before': {
      type: 'string',
      valueName: 'TIME',
      description: 'With --generate-manifest: objects created before',
    },
    'output-manifest': {
      type: 'string',
      valueName: 'S3URL',
      description: "Outputs from the output bucket's inventory",
    },
    'queue-url': {
      type: 'string',
      valueName: 'URL',
      description: 'Work queue (default: $RERUN_QUEUE_URL or by name)',
    },
    'dlq-url': {
      type: 'string',
      valueName: 'URL',
      description: 'DLQ watched by --wait (default: $RERUN_DLQ_URL)',
    },
    ...targetOptions,
    ...stageOptions,
  },
  details: `Planning lists the inputs under the prefix and their outputs together, page
by page (a merge-join: memory does not grow with the object count), and
judges each input from the listings: missing (no output) or current, and each
output whose input is gone (orphan). An output older than its input is only a
candidate: one HEAD reads the input ETag it was built from, and it is stale
only when that is not the input's ETag (identical bytes uploaded again, as by
s5cmd sync or a copy onto itself, leave it current, as the worker finds).
--verify adds the worker's exact done-check for each output that looks current
(one HEAD: stored checksum, code version, the input ETag it was built from).
After a codeVersion bump the deployed worker's marker makes older outputs
old-code from the listing alone.

Each selected input becomes one S3-event-shaped message on the work queue (10
per batch); the worker's done-check absorbs repeats. An interrupted reprocess,
run again, plans only what is still to do; once it completed, the same
reprocess plans nothing (except --mode all).

--engine batch-operations runs the plan as one S3 Batch Operations job instead:
rerun writes the planned inputs as a CSV manifest to the output bucket
(batch-operations/manifests/<sha256>.csv), then calls CreateJob (LambdaInvoke
on the stack's Batch Operations function, schema 2.0, a report of failed tasks
only under batch-operations/reports/). The request token is a hash of the
request, so the same plan twice is one job. With --manifest S3URL the job runs
over that manifest as it is (an S3 Inventory manifest.json, or a bucket,key
CSV): nothing is planned. With --generate-manifest the job's own manifest
generator lists the input bucket under --prefix (--created-after and
--created-before filter by creation time, ISO 8601): nothing is listed on
this machine, and every matching input is a task (the worker's done-check
skips what is current). --wait follows the job (DescribeJob) and prints the
SQS engine's summary, read from the completion report; --job ID attaches to a
job. --engine auto plans first, then uses batch-operations from 1,000,000
planned inputs, sqs below. Against an emulator (AWS_ENDPOINT_URL, as under
rerun dev) a local stand-in runs the job in this process: no emulator has S3
Control. The job's function and role come from --function-arn and --role-arn,
or the outputs of --stack.

The stage's input prefix and output key rule come from the pipeline's
description: the PipelineDescription output of --stack (RerunPipeline with a
pipeline or outputKey prop and outputs: true), or --pipeline FILE; --stage
chooses among several. Without --stack, the reference pipeline. A stack that
publishes no description (and is not rerun's own), or a custom key rule, is
refused: the tool never plans with a key rule it does not know.

Exit: 0 done (or planned, without --wait); 1 when --wait ends with inputs not
done (see rerun redrive) or times out; 130 when interrupted.

Examples:
  rerun reprocess --prefix incoming/dt=2026-11- --dry-run
  rerun reprocess --mode stale --verify --rate 50 --wait
  rerun reprocess --prune --dry-run
  rerun reprocess --stack rerun --engine batch-operations --wait
  rerun reprocess --engine batch-operations --job 0b7c... --wait`,
  async run({ values }, io) {
    const target = await targetOrExit(values, io, 'reprocess');
    if (typeof target === 'number') return target;
    let stage: PlanningStage;
    try {
      stage = await resolvePlanningStage(target, values);
    } catch (error) {
      return reportCommandError(error, io, 'reprocess', values.json === true);
    }
    const request = reprocessRequest(values);
    try {
      return await reprocessWithEngine(target, request, stage, io, (run) =>
        reprocessConsole({ io, json: request.json, run, liveLine }),
      );
    } catch (error) {
      return reportCommandError(error, io, 'reprocess', request.json);
    }
  },
};
