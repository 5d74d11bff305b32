import { closeSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { PipelineDescription } from '../../src/pipeline/pipelineDescription.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { createNewFile, replaceFile } from '../localState/noFollowFiles.js';
import { type PrivateStateDirOptions, privateStateDir } from '../localState/privateStateDir.js';

/**
 * What a running `rerun dev` tells the user's other processes on this machine (`rerun ui`, `status`,
 * `ls`...): where its emulator and resources are, and the file where it appends every record outcome
 * as it happens. Found by app/common/findDevSession.ts.
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
  /**
   * The user's pipeline (`rerun dev --pipeline`), which the tools then read as they read a stack's
   * PipelineDescription output.
   * @default none: rerun's reference pipeline
   */
  readonly pipeline?: PipelineDescription;
  /** The queues of each window stage of `pipeline`, by stage name. @default none */
  readonly windowStages?: Readonly<Record<string, { readonly queueUrl: string; readonly dlqUrl: string }>>;
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

/** Where a session's files go, and which process it is: {@link publishDevSession}. */
export interface DevSessionFileOptions extends PrivateStateDirOptions {
  /** The session's process, which names its files. @default process.pid */
  readonly pid?: number;
  /** @default () => new Date() */
  readonly now?: () => Date;
}

/**
 * Where the session file of one `rerun dev` process lives: `dev-<app>-<pid>.json` in the user's
 * private state directory (app/localState/privateStateDir.ts), one file per process, so two
 * sessions of one app name never share (or delete) each other's file, and no other user can plant one.
 *
 * @example
 * devSessionPath('/run/user/1000/rerun', 'shop', 4242); // '/run/user/1000/rerun/dev-shop-4242.json'
 */
export function devSessionPath(stateDir: string, appName: string, pid: number): string {
  return join(stateDir, `dev-${appName}-${pid}.json`);
}

/**
 * Announces a running session: writes its session file, starts an empty journal beside it, and
 * appends every record outcome of this process (the process-wide channel of src/worker/outcomes.ts)
 * to it. Both are created new in the private state directory, never through a link (a link planted
 * at the journal's name made the old code truncate what it pointed to). `close()` stops listening
 * and removes this process's two files, and only those.
 *
 * @example
 * const session = publishDevSession({ ...resources, appName: 'rerun' });
 * // ... on exit
 * session.close();
 */
export function publishDevSession(
  info: Omit<DevSessionInfo, 'pid' | 'startedAt' | 'journal'>,
  options: DevSessionFileOptions = {},
): { readonly path: string; close(): void } {
  const stateDir = privateStateDir({ ...options, create: true }) as string;
  const pid = options.pid ?? process.pid;
  const path = devSessionPath(stateDir, info.appName, pid);
  const journal = path.replace(/\.json$/, '.outcomes.jsonl');
  const startedAt = (options.now?.() ?? new Date()).toISOString();
  const session: DevSessionInfo = { ...info, pid, startedAt, journal };
  const fd = createNewFile(journal);
  replaceFile(path, `${JSON.stringify(session, null, 2)}\n`);
  const unsubscribe = onRecordOutcome((o) => {
    const line = journalOutcome(o, Date.now());
    // Synchronous and small: a reader tailing the file sees whole lines in outcome order.
    writeSync(fd, `${JSON.stringify(line)}\n`);
  });
  let closed = false;
  return {
    path,
    close() {
      if (closed) return;
      closed = true;
      unsubscribe();
      closeSync(fd);
      // Named by this process's id: no other live session has these names.
      rmSync(path, { force: true });
      rmSync(journal, { force: true });
    },
  };
}
