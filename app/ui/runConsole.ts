import { checkedEndpoint } from '../cli/checkedEndpoint.js';
import type { CliIo, OptionValues } from '../cli/command.js';
import { referenceInputRules } from '../cli/inputRules.js';
import { resolvePlanningStage, stageInputRules } from '../cli/pipelineStage.js';
import { reportCommandError, requireOutputBucket, requireWindow } from '../cli/pipelineTarget.js';
import { ConsoleApi } from './consoleApi.js';
import { startConsoleServer } from './consoleServer.js';
import { resolveConsoleSource } from './consoleSource.js';

/**
 * `rerun ui` once its options are read: finds the pipeline, starts the console, prints its URL
 * (`URL ...` on stdout, a sentence on stderr), and serves until the signal aborts (Ctrl+C).
 *
 * @example
 * const code = await runConsole({ values, io, port: 0, host: '127.0.0.1', exposed: false });
 */
export async function runConsole(input: {
  readonly values: OptionValues;
  readonly io: CliIo;
  readonly port: number;
  readonly host: string;
  /** The host is reachable from other machines (the operator gave --insecure-plain-http): warn. */
  readonly exposed: boolean;
}): Promise<number> {
  const { values, io } = input;
  const window = values.from !== undefined ? requireWindow(values) : undefined;
  let api: ConsoleApi;
  try {
    await checkedEndpoint(io.env);
    const source = await resolveConsoleSource(values, io.env);
    await requireOutputBucket(source.target);
    // The inputs are judged by the stage's own key rules (the reference normalizer's only for its stage).
    const stage = await resolvePlanningStage(source.target, values);
    const rules = stageInputRules(stage, source.target, referenceInputRules(source.target));
    api = new ConsoleApi(source, { rules, ...(window ? { window } : {}) });
  } catch (error) {
    return reportCommandError(error, io, 'ui', false);
  }
  const server = await startConsoleServer({ api, host: input.host, port: input.port });
  const { kind, session, target } = api.source;
  const what =
    kind === 'dev'
      ? `the running rerun dev of app ${session?.appName} (pid ${session?.pid}, started ${session?.startedAt}) at ${target.where}`
      : kind === 'stack'
        ? `the stack ${target.stack?.stackName} at ${target.where}`
        : `${target.outputBucket} at ${target.where}`;
  io.stderr(`rerun ui: the console of ${what}, read-only.\n`);
  if (kind !== 'dev') io.stderr('  (no running rerun dev found: live outcomes are not shown; queue depths are)\n');
  if (input.exposed) {
    io.stderr(
      `rerun ui: WARNING: listening on ${input.host} over plain HTTP (--insecure-plain-http): the token and all the data the console shows travel unencrypted; anyone on the network path can read them.\n`,
    );
  }
  io.stderr(`  Open ${server.url}\n  Press Ctrl+C to stop.\n`);
  io.stdout(`URL ${server.url}`);
  await new Promise<void>((resolve) => {
    if (io.signal.aborted) return resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  return 0;
}
