import type { S3Client } from '@aws-sdk/client-s3';
import { createAwsClients } from '../../src/aws/clients.js';
import { checkedEndpoint } from './checkedEndpoint.js';
import type { CliIo, CliOption, OptionValues } from './command.js';
import type { DevSessionInfo } from './devSessionFile.js';
import {
  type ChosenDevSession,
  chooseDevSession,
  type FindDevSessionsOptions,
  findDevSessions,
} from './findDevSession.js';

/** Options that name a target: with one of them, no session file is looked at. */
const EXPLICIT_OPTIONS = [
  'stack',
  'input-bucket',
  'output-bucket',
  'queue-url',
  'dlq-url',
  'source-queue-url',
] as const;

/**
 * Variables that name a target or whose credentials to use: with one of them set, no session file is
 * looked at. RERUN_APP_NAME is not among them: it chooses among the sessions, as `--app-name` does.
 */
const EXPLICIT_VARIABLES = [
  'AWS_ENDPOINT_URL',
  'RERUN_INPUT_BUCKET',
  'RERUN_OUTPUT_BUCKET',
  'RERUN_QUEUE_URL',
  'RERUN_DLQ_URL',
  'RERUN_SUMMARY_QUEUE_URL',
  'RERUN_SUMMARY_DLQ_URL',
  // Credentials of the operator's own: they are meant for where the environment points, and are never
  // sent to a session's endpoint (a planted session once received an operator's key id and token).
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
] as const;

/** The keys an embedded moto server takes (any keys do; these are the ones `rerun dev` sets). */
const EMULATOR_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' } as const;

/** Where a command goes: its own options and environment, or those of a running `rerun dev`. */
export interface DevSessionTarget {
  /** The options, with the session's app name and buckets when a session is used. */
  readonly values: OptionValues;
  /** The environment, with the session's endpoint, region and (embedded emulator) test keys when one is used. */
  readonly env: NodeJS.ProcessEnv;
  /** The session used, if any. */
  readonly session?: DevSessionInfo;
  /** The one line a command prints on stderr when it uses a session: which one, and its endpoint. */
  readonly note?: string;
}

/**
 * What names the target explicitly, if anything: an option (`--stack`, a bucket or queue) or a
 * variable (AWS_ENDPOINT_URL, a RERUN_* resource, credentials). Pure.
 *
 * @example
 * explicitTarget({ stack: 'shop' }, {}); // '--stack'
 * explicitTarget({}, { AWS_PROFILE: 'prod' }); // 'AWS_PROFILE'
 */
export function explicitTarget(values: OptionValues, env: NodeJS.ProcessEnv): string | undefined {
  const option = EXPLICIT_OPTIONS.find((name) => typeof values[name] === 'string' && values[name] !== '');
  if (option) return `--${option}`;
  return EXPLICIT_VARIABLES.find((name) => (env[name] ?? '') !== '');
}

/**
 * The target of a command that talks to AWS: when nothing explicit names one ({@link explicitTarget}),
 * the running `rerun dev` of the user (app/common/findDevSession.ts), chosen by `--app-name` or
 * RERUN_APP_NAME when given, else the newest: its endpoint, region, app name and buckets, and the
 * embedded emulator's test keys. Anything explicit wins and is returned as it is; so is everything
 * when no session runs (the command then goes to AWS, as always). An AWS_ENDPOINT_URL that is a
 * running session's endpoint (as its READY line shows it) takes that session's app name and buckets,
 * and keeps the endpoint and keys as given.
 *
 * @example
 * const { values: v, env, note } = devSessionTarget(values, io.env, 'status');
 * if (note) io.stderr(note);
 */
export function devSessionTarget(
  values: OptionValues,
  env: NodeJS.ProcessEnv,
  command: string,
  options: FindDevSessionsOptions = {},
): DevSessionTarget {
  const explicit = explicitTarget(values, env);
  const named = typeof values['app-name'] === 'string' && values['app-name'] !== '' ? values['app-name'] : undefined;
  const appName = named ?? (env.RERUN_APP_NAME || undefined);
  if (explicit === 'AWS_ENDPOINT_URL') {
    // The endpoint of a running session, named by hand (as its READY line shows it): that session, its
    // resources and journal, with the endpoint and keys as given.
    if (explicitTarget(values, { ...env, ...UNSET_ENDPOINT_AND_CREDENTIALS }) !== undefined) return { values, env };
    const same = sessionsOrNone({ env, ...options }).filter((s) => s.endpoint === env.AWS_ENDPOINT_URL);
    const chosen = chooseDevSession(same, appName);
    return chosen ? used(chosen, values, env, appName, command) : { values, env };
  }
  if (explicit !== undefined) return { values, env };
  const chosen = chooseDevSession(findDevSessions({ env, ...options }), appName);
  if (!chosen) return { values, env };
  const { session } = chosen;
  return used(
    chosen,
    values,
    {
      ...env,
      AWS_ENDPOINT_URL: session.endpoint,
      AWS_REGION: session.region,
      // An external emulator's session runs with the keys of its own environment, which are not here.
      ...(session.emulator === 'embedded' ? EMULATOR_CREDENTIALS : {}),
    },
    appName,
    command,
  );
}

const UNSET_ENDPOINT_AND_CREDENTIALS = {
  AWS_ENDPOINT_URL: undefined,
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_SESSION_TOKEN: undefined,
  AWS_PROFILE: undefined,
};

/** Sessions for an explicit endpoint to match: an unsafe directory only means none match (the endpoint stands). */
function sessionsOrNone(options: FindDevSessionsOptions): DevSessionInfo[] {
  try {
    return findDevSessions(options);
  } catch {
    return [];
  }
}

function used(
  { session, among }: ChosenDevSession,
  values: OptionValues,
  env: NodeJS.ProcessEnv,
  appName: string | undefined,
  command: string,
): DevSessionTarget {
  const choice = among > 1 ? ` (the newest of ${among}${appName ? '' : '; --app-name NAME chooses another'})` : '';
  return {
    values: {
      ...values,
      'app-name': session.appName,
      'input-bucket': session.inputBucket,
      'output-bucket': session.outputBucket,
    },
    env,
    session,
    note:
      `note: rerun ${command} uses the running rerun dev of app ${session.appName} (pid ${session.pid}, ` +
      `started ${session.startedAt}) at ${session.endpoint}${choice}\n`,
  };
}

/**
 * The credentials the environment names (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with
 * AWS_SESSION_TOKEN), for clients built from an environment that is not the process's own (a dev
 * session's); undefined leaves the SDK's default chain, which reads the same variables from
 * process.env first.
 *
 * @example
 * createAwsClients({ endpoint, region, credentials: envCredentials(env) });
 */
export function envCredentials(
  env: NodeJS.ProcessEnv,
): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return undefined;
  return { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) };
}

/** `--app-name` of `rerun ls` and `rerun cat`: which running `rerun dev` to read, when several run. */
export const sessionChoiceOption: Record<string, CliOption> = {
  'app-name': {
    type: 'string',
    valueName: 'NAME',
    description:
      "With several rerun dev sessions running and no AWS_ENDPOINT_URL: read that app's (default: the newest)",
  },
};

/**
 * The S3 client of `rerun ls` and `rerun cat`: at AWS_ENDPOINT_URL when set, else at the running
 * `rerun dev` ({@link devSessionTarget}, which says so on stderr), else at AWS; the endpoint checked
 * first (app/common/checkedEndpoint.ts). `where` names it for messages.
 *
 * @example
 * const { s3, where } = await s3OfTarget(values, io, 'ls');
 */
export async function s3OfTarget(
  values: OptionValues,
  io: CliIo,
  command: string,
): Promise<{ readonly s3: S3Client; readonly where: string; readonly session?: DevSessionInfo }> {
  const chosen = devSessionTarget(values, io.env, command);
  if (chosen.note) io.stderr(chosen.note);
  const endpoint = await checkedEndpoint(chosen.env);
  const region = chosen.env.AWS_REGION || 'us-east-1';
  const { s3 } = createAwsClients({ endpoint, region, credentials: envCredentials(chosen.env) });
  return { s3, where: endpoint ?? `AWS (${region})`, ...(chosen.session ? { session: chosen.session } : {}) };
}
