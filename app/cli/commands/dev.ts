import { type CliCommand, CliUsageError, integerOption } from '../../common/command.js';
import { parseStageHandlers } from '../../dev/devWindowStages.js';
import { DevRuntime, type DevSummary, runDev } from '../../dev/runDev.js';
import { locateStackWorkers } from '../locateStackWorkers.js';

/** `rerun dev`: the whole pipeline on this machine (emulator, resources, the worker under the local runner). */
export const command: CliCommand = {
  name: 'dev',
  summary: 'Run the pipeline locally: emulator, buckets and queues, and the worker under a Lambda-faithful SQS runner.',
  usage: 'rerun dev [--demo | --no-demo] [--once] [options]',
  options: {
    demo: {
      type: 'boolean',
      description:
        "Upload every file of rerun's examples/ (or --examples DIR) under the input prefix first (npm start does)",
    },
    'no-demo': { type: 'boolean', description: 'Upload nothing (the default)' },
    once: { type: 'boolean', description: 'Process until the queue is drained, print SUMMARY, exit' },
    'app-name': {
      type: 'string',
      valueName: 'NAME',
      description: 'Prefix of the local resource names (default: rerun)',
    },
    'visibility-timeout': {
      type: 'string',
      valueName: 'SECONDS',
      description: "Work queue visibility timeout (default: the topology's, 360)",
    },
    'max-receive-count': {
      type: 'string',
      valueName: 'N',
      description: "Receives before a message moves to the DLQ (default: the topology's, 5)",
    },
    'function-timeout': {
      type: 'string',
      valueName: 'SECONDS',
      description: "Function timeout, at most the visibility timeout (default: the topology's, 60)",
    },
    'drain-timeout': {
      type: 'string',
      valueName: 'SECONDS',
      description: 'With --once, give up after this long (default: enough for failures to reach the DLQ)',
    },
    handler: {
      type: 'string',
      valueName: 'PATH',
      description:
        "Handler module (.js/.mjs; .ts under tsx) to run instead of rerun's normalize worker (your own worker)",
    },
    'handler-export': {
      type: 'string',
      valueName: 'NAME',
      description: 'Exported function of the handler module (default: handler)',
    },
    pipeline: {
      type: 'string',
      valueName: 'FILE',
      description:
        'Your pipeline: a module exporting definePipeline(...) as pipeline (or its description as .json); its window stages run too',
    },
    'stage-handler': {
      type: 'string',
      multiple: true,
      valueName: 'STAGE=PATH',
      description:
        'Handler module of a window stage of --pipeline (createWindowTaskHandler); PATH#EXPORT names the export',
    },
    examples: {
      type: 'string',
      valueName: 'DIR',
      description: "Directory uploaded by --demo (default: rerun's own samples, examples/)",
    },
    runtime: {
      type: 'string',
      valueName: 'in-process|lambda',
      description:
        "Where the workers run: in this process (default), or lambda: the stack's synthesized bundles under aws-lambda-rie on Node 24 (a checkout of the repository only; install: bash scripts/install-lambda-runtime.sh)",
    },
  },
  details: `Without AWS_ENDPOINT_URL an embedded moto server is started (and stopped at exit); with it, that
endpoint's existing resources are reused. Credentials "test" are set only for the embedded emulator.

stdout carries exactly two lines for scripts: READY {json} once resources exist and the handler is
loaded, and SUMMARY {json} at the end (after --once, or on Ctrl+C). Everything else goes to stderr,
including the handler's own logs (LOG_LEVEL defaults to warn here; LOG_LEVEL=info shows them all).

Failing messages return after the visibility timeout and reach the DLQ after maxReceiveCount
receives; for a quick --once run with failures, shorten both, e.g.
  rerun dev --once --visibility-timeout 5 --function-timeout 5 --max-receive-count 2

Exit codes with --once: 0 drained and nothing failed; 3 drained, but an object failed or a DLQ
holds messages (of this session or an earlier one: rerun redrive --dry-run lists them); 1 the
drain timed out, or an error; 2 a usage error; 130 interrupted (Ctrl+C).

With --pipeline, each window stage of your pipeline gets its FIFO queue and DLQ (as RerunWindowStage
deploys them; the three timing flags above apply to them too) and runs the module --stage-handler
names. At start the worker drains what is there, then each window stage builds its last closed
window; while watching, each one's schedule fires at the end of every window. rerun status --stage,
backfill --stage and redrive (--queue STAGE) find them from the session.

With --runtime lambda every invocation runs the bundle \`cdk deploy\` would upload, in a warm child
process of the AWS Lambda Runtime Interface Emulator with AWS's Node runtime interface client on the
runtime's Node version: the handler loads as Lambda loads it, and a timeout kills the invocation.

Examples:
  npm start                                   # = rerun dev --demo
  rerun dev --once --demo --runtime lambda    # the same, on the deployed artifact
  rerun dev --once --demo                     # process the samples, print the table, exit
  rerun dev --handler ./my-worker.ts --once   # run your own SQS handler module
  rerun dev --handler worker.mjs --pipeline pipeline.mjs \\
    --stage-handler daily=daily.mjs           # your pipeline, window stages too`,
  async run({ values }, io) {
    if (values.demo && values['no-demo']) throw new CliUsageError('--demo and --no-demo contradict each other.');
    const endpoint = io.env.AWS_ENDPOINT_URL || undefined;
    const drainSeconds = integerOption(values, 'drain-timeout', { min: 1, max: 86_400 });
    const visibilityTimeoutSeconds = integerOption(values, 'visibility-timeout', { min: 1, max: 43_200 });
    const maxReceiveCount = integerOption(values, 'max-receive-count', { min: 1, max: 1000 });
    const functionTimeoutSeconds = integerOption(values, 'function-timeout', { min: 1, max: 900 });
    const runtime = values.runtime ?? DevRuntime.IN_PROCESS;
    if (runtime !== DevRuntime.IN_PROCESS && runtime !== DevRuntime.LAMBDA) {
      throw new CliUsageError(`--runtime must be in-process or lambda (got ${String(runtime)}).`);
    }
    if (runtime === DevRuntime.LAMBDA && (values.handler !== undefined || values['handler-export'] !== undefined)) {
      throw new CliUsageError(
        '--runtime lambda runs the bundles the stack synthesizes; --handler and --handler-export apply to --runtime in-process only.',
      );
    }
    const summary = await runDev({
      ...(endpoint ? { endpoint } : {}),
      region: io.env.AWS_REGION || io.env.AWS_DEFAULT_REGION || 'us-east-1',
      ...(typeof values['app-name'] === 'string' ? { appName: values['app-name'] } : {}),
      demo: values.demo === true,
      ...(typeof values.examples === 'string' ? { examplesDir: values.examples } : {}),
      once: values.once === true,
      runtime,
      // The stack's bundles, which only this mode runs (undefined outside a checkout: runDev says so).
      ...(runtime === DevRuntime.LAMBDA ? { synthesizeStackWorkers: locateStackWorkers() } : {}),
      ...(typeof values.handler === 'string' ? { handlerPath: values.handler } : {}),
      ...(typeof values['handler-export'] === 'string' ? { handlerExport: values['handler-export'] } : {}),
      ...(typeof values.pipeline === 'string' ? { pipelinePath: values.pipeline } : {}),
      ...(Array.isArray(values['stage-handler'])
        ? { stageHandlers: parseStageHandlers(values['stage-handler'].map(String)) }
        : {}),
      ...(visibilityTimeoutSeconds !== undefined ? { visibilityTimeoutSeconds } : {}),
      ...(maxReceiveCount !== undefined ? { maxReceiveCount } : {}),
      ...(functionTimeoutSeconds !== undefined ? { functionTimeoutSeconds } : {}),
      ...(drainSeconds !== undefined ? { drainTimeoutMs: drainSeconds * 1000 } : {}),
      signal: io.signal,
      env: io.env,
      writeResult: io.stdout,
      writeHuman: io.stderr,
      tty: io.isTTY,
      ...(process.stderr.columns ? { columns: process.stderr.columns } : {}),
    });
    if (!values.once) return 0;
    return onceExitCode(summary);
  },
};

/**
 * The exit code of a `--once` session (documented in the help): a run whose objects failed or were
 * dead-lettered must not look like success to a script.
 *
 * @example
 * onceExitCode({ ended: 'drained', failed: 0, deadLettered: 1 }); // 3
 */
export function onceExitCode(summary: Pick<DevSummary, 'ended' | 'failed' | 'deadLettered'>): number {
  if (summary.ended === 'interrupted') return 130;
  if (summary.ended === 'drain-timeout') return 1;
  return summary.failed > 0 || summary.deadLettered > 0 ? 3 : 0;
}
