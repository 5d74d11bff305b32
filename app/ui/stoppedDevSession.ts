import type { DevSessionInfo } from '../common/devSessionFile.js';

/** What the console says of a `rerun dev` it was reading that no longer answers (the page shows it). */
export interface StoppedDevSession {
  readonly appName: string;
  readonly pid: number;
  readonly endpoint: string;
  /** Whether the `rerun dev` process still runs (its emulator stopped answering) or has exited. */
  readonly processRunning: boolean;
  /** What happened, in a sentence or two: which session, and that it no longer answers. */
  readonly what: string;
  /** What to do, leading to {@link restart}: `Start it again with`. */
  readonly todo: string;
  /** The command that starts it again. */
  readonly restart: string;
  /** What the console does meanwhile. */
  readonly meanwhile: string;
  /** The whole of it for people: `${what} ${todo}: ${restart}. ${meanwhile}` */
  readonly message: string;
}

/**
 * Describes a `rerun dev` session the console was reading whose endpoint no longer answers. It names
 * the session (app, pid, endpoint) and how to start it again; it never names AWS_ENDPOINT_URL, which the
 * user did not set when the endpoint came from the session's file. Pure.
 *
 * @example
 * stoppedDevSession(session, false).message;
 * // 'The rerun dev of app acme (pid 4242) at http://127.0.0.1:40123 has stopped: nothing answers there. ...'
 */
export function stoppedDevSession(
  session: Pick<DevSessionInfo, 'appName' | 'pid' | 'endpoint' | 'emulator'>,
  processRunning: boolean,
): StoppedDevSession {
  const restart = `rerun dev --app-name ${session.appName}`;
  const which = `The rerun dev of app ${session.appName} (pid ${session.pid}) at ${session.endpoint}`;
  const [what, todo] = processRunning
    ? session.emulator === 'external'
      ? [
          `${which} no longer answers: the emulator it uses stopped, though rerun dev still runs.`,
          'Start that emulator again, or stop rerun dev (Ctrl+C) and start it again with',
        ]
      : [`${which} no longer answers, though its process still runs.`, 'Stop it (Ctrl+C) and start it again with']
    : [`${which} has stopped: nothing answers there.`, 'Start it again with'];
  const meanwhile = `This page keeps what it last showed, and reads again as soon as a rerun dev of ${session.appName} answers.`;
  return {
    appName: session.appName,
    pid: session.pid,
    endpoint: session.endpoint,
    processRunning,
    what,
    todo,
    restart,
    meanwhile,
    message: `${what} ${todo}: ${restart}. ${meanwhile}`,
  };
}
