import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readOwnFile } from '../localState/noFollowFiles.js';
import { type PrivateStateDirOptions, privateStateDir } from '../localState/privateStateDir.js';
import type { DevSessionInfo } from './devSessionFile.js';

/** A session file's name: `dev-<app>-<pid>.json` (app/common/devSessionFile.ts). */
const SESSION_FILE = /^dev-(.+)-(\d+)\.json$/;

/** The fields every session file has as strings: a file without one of them is not trusted. */
const STRING_FIELDS = [
  'appName',
  'startedAt',
  'endpoint',
  'region',
  'inputBucket',
  'outputBucket',
  'queueUrl',
  'dlqUrl',
  'summaryQueueUrl',
  'summaryDlqUrl',
  'journal',
] as const;

/** Options of {@link findDevSessions}. */
export interface FindDevSessionsOptions extends PrivateStateDirOptions {
  /**
   * Whether a process of the user is running. @default a signal 0 that succeeds: EPERM means the id now
   * belongs to another user's process, so not this session's
   */
  readonly isAlive?: (pid: number) => boolean;
}

/**
 * The user's running `rerun dev` sessions on this machine, newest first. A session is trusted only
 * when its file lies in the user's private state directory (so another user cannot have planted
 * it), is a regular file the user owns (read without following a link), names its own process in
 * its name and content, its journal beside it, and that process is running. A file left by a
 * session killed with SIGKILL names a process that is gone: ignored. An unsafe directory is refused
 * with a PrivateStateDirUnsafeError; a missing one means no session.
 *
 * @example
 * const [newest] = findDevSessions();
 * if (newest) console.log(newest.endpoint);
 */
export function findDevSessions(options: FindDevSessionsOptions = {}): DevSessionInfo[] {
  const dir = privateStateDir(options);
  if (dir === undefined) return [];
  const uid = 'uid' in options ? options.uid : process.getuid?.();
  const isAlive = options.isAlive ?? isOwnProcessRunning;
  const sessions: DevSessionInfo[] = [];
  for (const name of readdirSync(dir)) {
    const named = SESSION_FILE.exec(name);
    if (!named) continue;
    const path = join(dir, name);
    const session = parseSession(readOwnFile(path, uid));
    if (!session || session.appName !== named[1] || session.pid !== Number(named[2])) continue;
    if (session.journal !== path.replace(/\.json$/, '.outcomes.jsonl')) continue;
    if (isAlive(session.pid)) sessions.push(session);
  }
  return sessions.sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt));
}

/** Which of several running sessions a command uses, and how many it chose among. */
export interface ChosenDevSession {
  readonly session: DevSessionInfo;
  /** The running sessions it was chosen among (of `appName`, when one was named). */
  readonly among: number;
}

/**
 * The session a command uses: of `appName` when one is named (`--app-name`, `RERUN_APP_NAME`), else
 * of any app; the newest of them. Pure.
 *
 * @example
 * const chosen = chooseDevSession(findDevSessions(), 'shop');
 */
export function chooseDevSession(
  sessions: readonly DevSessionInfo[],
  appName: string | undefined,
): ChosenDevSession | undefined {
  const candidates = appName === undefined ? sessions : sessions.filter((s) => s.appName === appName);
  const newest = [...candidates].sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))[0];
  return newest ? { session: newest, among: candidates.length } : undefined;
}

function parseSession(text: string | undefined): DevSessionInfo | undefined {
  if (text === undefined) return undefined;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined; // being replaced, or not one of ours
  }
  if (typeof value !== 'object' || value === null || !Number.isInteger(value.pid)) return undefined;
  if (!STRING_FIELDS.every((field) => typeof value[field] === 'string')) return undefined;
  if (value.emulator !== 'embedded' && value.emulator !== 'external') return undefined;
  if (!/^https?:\/\//.test(value.endpoint as string)) return undefined;
  // A user's pipeline (rerun dev --pipeline): its window stages' queues, each a pair of URLs.
  const stages = value.windowStages;
  if (stages !== undefined) {
    const pairs = typeof stages === 'object' && stages !== null ? Object.values(stages) : [undefined];
    const isPair = (p: unknown) =>
      typeof p === 'object' &&
      p !== null &&
      typeof (p as Record<string, unknown>).queueUrl === 'string' &&
      typeof (p as Record<string, unknown>).dlqUrl === 'string';
    if (!pairs.every(isPair)) return undefined;
  }
  return value as unknown as DevSessionInfo;
}

/**
 * Whether a process of this user runs with that id (a signal 0 that succeeds).
 *
 * @example
 * isOwnProcessRunning(session.pid); // false once that rerun dev has exited
 */
export function isOwnProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: the id was reused by another user's process, which is not this session.
    return false;
  }
}
