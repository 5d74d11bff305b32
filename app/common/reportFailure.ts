import { RerunError } from '../../src/errors.js';
import type { CliIo } from './command.js';

/** What a failed command says: the error's name (for `--json`) and the sentence for people. */
export interface CliFailure {
  readonly name: string;
  readonly message: string;
}

/**
 * How every `rerun` command ends on an error: `rerun <command>: <message>` on stderr, a JSON
 * `{"error":{"name","message"}}` document on stdout with `--json` (so stdout stays one JSON
 * document), exit code 1. The message says what happened, what was looked at, and what to do:
 * rerun's own errors (a RerunError) already do; an AWS or network error that reached here is
 * described by {@link describeCliFailure}.
 *
 * @example
 * } catch (error) { return reportFailure(error, io, 'status', json); }
 */
export function reportFailure(error: unknown, io: CliIo, command: string, json: boolean): 1 {
  const failure = describeCliFailure(error, endpointOf(io.env));
  if (json) io.stdout(JSON.stringify({ error: failure }));
  io.stderr(`rerun ${command}: ${failure.message}\n`);
  if (io.env.RERUN_DEBUG && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
  return 1;
}

/**
 * The name and sentence of a failure: a RerunError as it is; the SDK and network errors an operator
 * can fix (no credentials, expired credentials, nothing listening, a silent endpoint, access denied)
 * with what to do; any other AWS error with its code and status; anything else as a bug of rerun.
 *
 * @example
 * describeCliFailure(new TypeError('Invalid URL'), 'AWS (us-east-1)').message; // 'unexpected TypeError: Invalid URL ...'
 */
export function describeCliFailure(error: unknown, where: string): CliFailure {
  if (RerunError.isRerunError(error)) return { name: error.name, message: error.message };
  const e = (error ?? {}) as {
    name?: string;
    Code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const name = e.Code ?? e.name ?? 'Error';
  const detail = e.message && e.message !== name ? ` (${e.message})` : '';
  const status = e.$metadata?.httpStatusCode;
  if (name === 'CredentialsProviderError') {
    return {
      name,
      message:
        `No AWS credentials to talk to ${where}: the default credential chain (environment, AWS_PROFILE, SSO, ` +
        'instance role) found none. Log in (aws sso login, or export a profile), or for an emulator, where any will ' +
        'do: export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test.',
    };
  }
  if (/^(ExpiredToken|ExpiredTokenException|RequestExpired|TokenRefreshRequired)$/.test(name)) {
    return { name, message: `The AWS credentials have expired${detail}: renew them (aws sso login, or new keys).` };
  }
  const code = systemCode(error);
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return {
      name,
      message: `Nothing answers at ${where} (${code}). Start the emulator (rerun dev prints its endpoint in its READY line), or unset AWS_ENDPOINT_URL to use AWS.`,
    };
  }
  if (name === 'TimeoutError' || code === 'ETIMEDOUT' || code === 'ECONNRESET') {
    return {
      name,
      message: `${where} stopped answering${detail}. Check the network, or that AWS_ENDPOINT_URL names a running emulator; then run the command again.`,
    };
  }
  if (status === 403 || /AccessDenied|Forbidden|UnauthorizedOperation/.test(name)) {
    return {
      name,
      message: `Access denied at ${where}${detail}. Use credentials allowed to do this (the deploying profile), or ask for the permission named.`,
    };
  }
  if (status !== undefined) {
    return {
      name,
      message: `${where} answered ${name} (HTTP ${status})${detail}. Check the names and options given; RERUN_DEBUG=1 prints the stack.`,
    };
  }
  return {
    name,
    message:
      `unexpected ${name}${e.message ? `: ${e.message}` : ''}. This is a bug of rerun, not of your setup: run the ` +
      'command again with RERUN_DEBUG=1 for its stack, and report it with that output.',
  };
}

/** Where AWS calls go, for the messages: the endpoint, or `AWS (<region>)`. */
function endpointOf(env: NodeJS.ProcessEnv): string {
  return env.AWS_ENDPOINT_URL || `AWS (${env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1'})`;
}

/** The system error code (ECONNREFUSED, ...) somewhere in the cause chain. */
function systemCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
