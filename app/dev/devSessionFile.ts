import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';

/**
 * What a running `rerun dev` tells other processes on this machine (`rerun ui`): where its emulator
 * and resources are, and the file where it appends every record outcome as it happens.
 */
export interface DevSessionInfo {
  readonly appName: string;
  /** The process of the session: a file left by a killed session names a process that is gone. */
  readonly pid: number;
  readonly startedAt: string;
  readonly endpoint: string;
  readonly region: string;
  readonly emulator: 'embedded' | 'external';
  readonly inputBucket: string;
  readonly outputBucket: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly summaryQueueUrl: string;
  readonly summaryDlqUrl: string;
  /** JSON lines, one {@link JournalOutcome} each, appended as outcomes happen. */
  readonly journal: string;
}

/** One line of the outcome journal: a record outcome as `rerun dev` heard it, with its time. */
export interface JournalOutcome {
  /** Epoch ms when the outcome was reported. */
  readonly at: number;
  readonly status: RecordOutcome['status'];
  /** `s3://bucket/key`, or `message <id>` for a record without an object. */
  readonly subject: string;
  readonly reason: string;
  readonly outputKey?: string;
  readonly quarantined?: number;
  readonly receiveCount?: number;
  readonly retryable?: boolean;
}

/**
 * A record outcome as a journal line says it (also how the console shows a deployed worker's
 * outcome read from its log). Pure.
 *
 * @example
 * journalOutcome({ messageId: 'm', status: 'skipped', reason: 'already done' }, 0);
 * // { at: 0, status: 'skipped', subject: 'message m', reason: 'already done' }
 */
export function journalOutcome(o: RecordOutcome, at: number): JournalOutcome {
  return {
    at,
    status: o.status,
    subject: o.source ? `s3://${o.source.bucket}/${o.source.key}` : `message ${o.messageId}`,
    reason: o.reason,
    ...(o.outputKey ? { outputKey: o.outputKey } : {}),
    ...(o.quarantined ? { quarantined: o.quarantined } : {}),
    ...(o.receiveCount !== undefined ? { receiveCount: o.receiveCount } : {}),
    ...(o.retryable !== undefined ? { retryable: o.retryable } : {}),
  };
}

/**
 * Where the session file of an app name lives: the machine's temporary directory, so `rerun ui`
 * finds a session started from any directory.
 *
 * @example
 * devSessionPath('rerun'); // '/tmp/rerun-dev-rerun.json'
 */
export function devSessionPath(appName: string, dir: string = tmpdir()): string {
  return join(dir, `rerun-dev-${appName}.json`);
}

/**
 * Announces a running session: writes its session file, starts an empty journal, and appends every
 * record outcome of this process (the process-wide channel of src/worker/outcomes.ts) to it.
 * `close()` stops listening and removes both files.
 *
 * @example
 * const session = publishDevSession({ ...resources, appName: 'rerun' });
 * // ... on exit
 * session.close();
 */
export function publishDevSession(
  info: Omit<DevSessionInfo, 'pid' | 'startedAt' | 'journal'>,
  dir: string = tmpdir(),
): { readonly path: string; close(): void } {
  const path = devSessionPath(info.appName, dir);
  const journal = path.replace(/\.json$/, '.outcomes.jsonl');
  const session: DevSessionInfo = { ...info, pid: process.pid, startedAt: new Date().toISOString(), journal };
  writeFileSync(journal, '');
  writeFileSync(path, `${JSON.stringify(session, null, 2)}\n`);
  const unsubscribe = onRecordOutcome((o) => {
    const line = journalOutcome(o, Date.now());
    // Synchronous and small: a reader tailing the file sees whole lines in outcome order.
    appendFileSync(journal, `${JSON.stringify(line)}\n`);
  });
  return {
    path,
    close() {
      unsubscribe();
      // Another session of the same app name may have started since and taken the files over.
      if (readSessionFile(path)?.pid !== process.pid) return;
      rmSync(path, { force: true });
      rmSync(journal, { force: true });
    },
  };
}

/**
 * The running session of an app name, or undefined when there is none (no file, or its process is
 * gone: a session killed with SIGKILL leaves its file behind).
 *
 * @example
 * const session = readDevSession('rerun');
 * if (session) console.log(session.endpoint);
 */
export function readDevSession(appName: string, dir: string = tmpdir()): DevSessionInfo | undefined {
  const session = readSessionFile(devSessionPath(appName, dir));
  if (!session) return undefined;
  try {
    process.kill(session.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user; it is running.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return session;
}

function readSessionFile(path: string): DevSessionInfo | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as DevSessionInfo;
  } catch {
    return undefined;
  }
}
