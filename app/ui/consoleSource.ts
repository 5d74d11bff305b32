import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { OptionValues } from '../common/command.js';
import type { DevSessionInfo } from '../common/devSessionFile.js';
import { devSessionTarget } from '../common/devSessionTarget.js';
import type { FindDevSessionsOptions } from '../common/findDevSession.js';
import { type PipelineTarget, resolvePipelineTarget, stringOption, workerQueueUrl } from '../common/pipelineTarget.js';
import { StackOutput } from '../stackOutputs.js';
import type { WorkerTopology } from '../topology.js';
import { guardReadOnly, guardReadOnlyClient } from './readOnlyClients.js';

/** The pipeline the console looks at, and how it was found. */
export interface ConsoleSource {
  readonly target: PipelineTarget;
  /** `dev`: a running `rerun dev` found by its session file; `stack`: `--stack`; `aws`: options, variables, names. */
  readonly kind: 'dev' | 'stack' | 'aws';
  /** The running dev session, whose outcome journal feeds the live view. */
  readonly session?: DevSessionInfo;
  /**
   * For a deployed pipeline (not a dev session): the CloudWatch clients its live view reads with, and
   * the stack's log groups. A client whose package is not installed is named in `missing`.
   */
  readonly cloudWatch?: {
    readonly cloudwatch?: CloudWatchClient;
    readonly logs?: CloudWatchLogsClient;
    readonly logGroups: readonly string[];
    readonly missing: readonly string[];
    /** The workers' outcome metrics' namespace (`--metrics-namespace`). */
    readonly namespace?: string;
  };
  /** The work queue and DLQ URL of a worker (resolved once, then remembered). */
  queueUrls(worker: WorkerTopology): Promise<{ readonly queue: string; readonly dlq: string }>;
}

/**
 * Finds what the console shows, as every command finds its target (app/common/devSessionTarget.ts):
 * with nothing explicit (`--stack`, resource options, AWS_ENDPOINT_URL, RERUN_* resources,
 * credentials), the user's running `rerun dev` (by `--app-name`, else the newest) gives the
 * endpoint, buckets, queues and journal, with the embedded emulator's test keys; otherwise the
 * target resolves as for every pipeline command (app/common/pipelineTarget.ts).
 *
 * @example
 * const source = await resolveConsoleSource(values, process.env);
 */
export async function resolveConsoleSource(
  values: OptionValues,
  env: NodeJS.ProcessEnv,
  options: FindDevSessionsOptions = {},
): Promise<ConsoleSource> {
  const { session, ...chosen } = devSessionTarget(values, env, 'ui', options);
  // With the session, as every command (targetOrExit): a rerun dev --pipeline's description comes with it.
  const target = await resolvePipelineTarget(chosen.values, chosen.env, session ? { session } : {});
  // Every request of the console goes through these clients: refuse anything but a read before it leaves.
  guardReadOnly(target.clients);
  const known = new Map<string, { queue: string; dlq: string }>();
  if (session) {
    known.set(target.topology.normalize.name, { queue: session.queueUrl, dlq: session.dlqUrl });
    known.set(target.topology.summarize.name, { queue: session.summaryQueueUrl, dlq: session.summaryDlqUrl });
  }
  return {
    target,
    kind: session ? 'dev' : target.stack ? 'stack' : 'aws',
    ...(session
      ? { session }
      : { cloudWatch: await cloudWatchClients(target, stringOption(values, 'metrics-namespace')) }),
    async queueUrls(worker) {
      const cached = known.get(worker.name);
      if (cached) return cached;
      const urls = {
        queue: await workerQueueUrl(target, worker, 'queue', undefined, env),
        dlq: await workerQueueUrl(target, worker, 'dlq', undefined, env),
      };
      known.set(worker.name, urls);
      return urls;
    },
  };
}

/**
 * The CloudWatch and CloudWatch Logs clients of a deployed pipeline's live view, guarded read-only
 * like the others, in the target's region and endpoint. Both packages are optional peers: a missing
 * one is named, and the live view goes without that part.
 */
async function cloudWatchClients(
  target: PipelineTarget,
  namespace: string | undefined,
): Promise<NonNullable<ConsoleSource['cloudWatch']>> {
  const config = { region: target.region, ...(target.endpoint ? { endpoint: target.endpoint } : {}) };
  const missing: string[] = [];
  const cw = await import('@aws-sdk/client-cloudwatch').catch(() => undefined);
  const cwl = await import('@aws-sdk/client-cloudwatch-logs').catch(() => undefined);
  if (!cw) missing.push('Throughput and queue ages need @aws-sdk/client-cloudwatch (npm install it).');
  if (!cwl) missing.push('Outcomes need @aws-sdk/client-cloudwatch-logs (npm install it).');
  const outputs = target.stack?.outputs ?? {};
  const logGroups = [outputs[StackOutput.LOG_GROUP], outputs[StackOutput.SUMMARIZE_LOG_GROUP]].filter(
    (g): g is string => Boolean(g),
  );
  if (cwl && logGroups.length === 0) {
    // With --stack given, asking for it again misleads: say what the stack lacks instead.
    missing.push(
      target.stack
        ? `Outcomes are read from the stack's log groups, and the stack "${target.stack.stackName}" has no output ` +
            `${StackOutput.LOG_GROUP} or ${StackOutput.SUMMARIZE_LOG_GROUP} naming one (a RerunPipeline stack does not ` +
            "publish its worker's log group): outcomes are not shown."
        : "Outcomes are read from the stack's log groups: pass --stack NAME.",
    );
  }
  return {
    ...(cw ? { cloudwatch: guardReadOnlyClient('cloudwatch', new cw.CloudWatchClient(config)) } : {}),
    ...(cwl && logGroups.length > 0 ? { logs: guardReadOnlyClient('logs', new cwl.CloudWatchLogsClient(config)) } : {}),
    logGroups,
    missing,
    ...(namespace ? { namespace } : {}),
  };
}
