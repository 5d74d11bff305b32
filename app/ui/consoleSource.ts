import type { OptionValues } from '../cli/command.js';
import { type PipelineTarget, resolvePipelineTarget, stringOption, workerQueueUrl } from '../cli/pipelineTarget.js';
import { type DevSessionInfo, readDevSession } from '../dev/devSessionFile.js';
import type { WorkerTopology } from '../topology.js';
import { guardReadOnly } from './readOnlyClients.js';

/** The pipeline the console looks at, and how it was found. */
export interface ConsoleSource {
  readonly target: PipelineTarget;
  /** `dev`: a running `rerun dev` found by its session file; `stack`: `--stack`; `aws`: options, variables, names. */
  readonly kind: 'dev' | 'stack' | 'aws';
  /** The running dev session, whose outcome journal feeds the live view. */
  readonly session?: DevSessionInfo;
  /** The work queue and DLQ URL of a worker (resolved once, then remembered). */
  queueUrls(worker: WorkerTopology): Promise<{ readonly queue: string; readonly dlq: string }>;
}

/**
 * Finds what the console shows. Without `--stack`, resource options or an endpoint of another
 * emulator, a running `rerun dev` of the app name (its session file, app/dev/devSessionFile.ts)
 * gives the endpoint, buckets and queues; otherwise the target resolves as for every pipeline command
 * (app/cli/pipelineTarget.ts). Sets test credentials only for the embedded emulator of a dev session,
 * as `rerun dev` does.
 *
 * @example
 * const source = await resolveConsoleSource(values, process.env);
 */
export async function resolveConsoleSource(
  values: OptionValues,
  env: NodeJS.ProcessEnv,
  options: { readonly sessionDir?: string } = {},
): Promise<ConsoleSource> {
  const appName = stringOption(values, 'app-name') ?? (env.RERUN_APP_NAME || 'rerun');
  const explicit =
    stringOption(values, 'stack') ?? stringOption(values, 'input-bucket') ?? stringOption(values, 'output-bucket');
  const found = explicit ? undefined : readDevSession(appName, options.sessionDir);
  const session = found && (!env.AWS_ENDPOINT_URL || env.AWS_ENDPOINT_URL === found.endpoint) ? found : undefined;
  if (session?.emulator === 'embedded') {
    env.AWS_ACCESS_KEY_ID ||= 'test';
    env.AWS_SECRET_ACCESS_KEY ||= 'test';
  }
  const target = session
    ? await resolvePipelineTarget(
        { ...values, 'app-name': appName, 'input-bucket': session.inputBucket, 'output-bucket': session.outputBucket },
        { ...env, AWS_ENDPOINT_URL: session.endpoint, AWS_REGION: session.region },
      )
    : await resolvePipelineTarget(values, env);
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
    ...(session ? { session } : {}),
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
