import { checkedEndpoint } from '../common/checkedEndpoint.js';
import type { CliIo, OptionValues } from '../common/command.js';
import { findDevSessions } from '../common/findDevSession.js';
import { referenceInputRules } from '../common/inputRules.js';
import { resolvePlanningStage, stageInputRules } from '../common/pipelineStage.js';
import { reportCommandError, requireOutputBucket, requireWindow } from '../common/pipelineTarget.js';
import { ConsoleApi } from './consoleApi.js';
import { resolveConsoleDaysJudge } from './consoleDaysJudge.js';
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
    api = await openConsoleApi(values, io.env, window);
  } catch (error) {
    return reportCommandError(error, io, 'ui', false);
  }
  const first = api.source.session;
  // A rerun dev that stops is replaced by the next one of the same app (a new emulator, a new endpoint).
  const reopen = first
    ? async (current: ConsoleApi) => {
        const was = current.source.session;
        // Only another running session of the app: never AWS, which a console of rerun dev did not read.
        const others = findDevSessions({ env: io.env }).filter(
          (s) => s.appName === first.appName && s.pid !== was?.pid,
        );
        if (others.length === 0) return undefined;
        const next = await openConsoleApi({ ...values, 'app-name': first.appName }, io.env, window);
        const now = next.source.session;
        if (!now || now.pid === was?.pid) return undefined;
        io.stderr(
          `rerun ui: the rerun dev of app ${now.appName} was restarted: now reading pid ${now.pid} at ${next.source.target.where}.\n`,
        );
        return next;
      }
    : undefined;
  const server = await startConsoleServer({ api, host: input.host, port: input.port, ...(reopen ? { reopen } : {}) });
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

/** Finds the pipeline and opens the console's API over it, judging inputs by the stage's own key rules. */
async function openConsoleApi(
  values: OptionValues,
  env: NodeJS.ProcessEnv,
  window: { readonly from: string; readonly to: string } | undefined,
): Promise<ConsoleApi> {
  const source = await resolveConsoleSource(values, env);
  await requireOutputBucket(source.target);
  // The inputs are judged by the stage's own key rules (the reference normalizer's only for its stage),
  // and the days by the pipeline's own window stage (rerun's summary only on its reference pipeline).
  const { stage, judge } = await resolveConsoleDaysJudge(source.target, values, (chosen) =>
    resolvePlanningStage(source.target, chosen),
  );
  const rules = stageInputRules(stage, source.target, referenceInputRules(source.target));
  const objectStage = stage.reference ? {} : { objectStage: stage.name };
  return new ConsoleApi(source, { rules, ...objectStage, ...(judge ? { judge } : {}), ...(window ? { window } : {}) });
}
