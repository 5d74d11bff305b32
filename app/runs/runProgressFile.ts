import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ownModifiedMs, readOwnFile, replaceFile } from '../localState/noFollowFiles.js';
import {
  type PrivateStateDirOptions,
  PrivateStateDirUnsafeError,
  privateStateDirPath,
  privateStateSubdir,
} from '../localState/privateStateDir.js';

/** The commands whose runs other processes on this machine can follow (`rerun ui`). */
export type RunCommand = 'reprocess' | 'backfill';

/** Which pipeline a run works on: the console shows the runs of the pipeline it looks at. */
export interface RunTarget {
  /** The endpoint, or `AWS (<region>)`: the same words as every command's messages. */
  readonly where: string;
  readonly inputBucket: string;
  readonly outputBucket: string;
}

/** Where a run stands: a phase, and a count against a total where one is known. */
export interface RunProgress {
  /** `planning`, `enqueueing`, `waiting`, `job`... in the command's own words. */
  readonly phase: string;
  /** Units done in this phase (inputs enqueued, days published, tasks finished). */
  readonly done: number;
  /** Units of the phase, once known (a streaming plan learns its total when its listings end). */
  readonly total?: number;
  /** What a unit is, e.g. `inputs` or `days`. */
  readonly unit: string;
  /** Other figures of the phase, e.g. `{ queued: 3, inFlight: 1, deadLettered: 0 }`. */
  readonly figures?: Readonly<Record<string, number>>;
}

/** A run's file: what it is, where it works, and where it stands. */
export interface RunInfo {
  readonly command: RunCommand;
  /** What the run does, e.g. `backfill 2026-03-01..2026-03-03 (mode stale)`. */
  readonly label: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly updatedAt: number;
  readonly target: RunTarget;
  readonly progress?: RunProgress;
  /** Set when the run ended: its exit code (0 done, 1 not all done, 130 interrupted). */
  readonly ended?: { readonly at: number; readonly code: number };
}

/** A run as another process sees it. */
export interface RunView extends RunInfo {
  /** `running`; `ended` (with its code); `gone`: its process died without ending it (killed). */
  readonly state: 'running' | 'ended' | 'gone';
}

/** A run being published: {@link publishRun}. */
export interface PublishedRun {
  readonly path: string;
  progress(p: RunProgress): void;
  end(code: number): void;
}

/** How long an ended (or dead) run's file is still shown; older files are removed by the next run. */
export const ENDED_RUN_SHOWN_MS = 60 * 60 * 1000;
const STALE_FILE_MS = 24 * 60 * 60 * 1000;
/** At most one write per this interval while a phase runs (a phase change or the end writes at once). */
const WRITE_INTERVAL_MS = 500;
let runsStarted = 0;

/** Where the run files are, and the clock: {@link publishRun}, {@link readRuns}. */
export interface RunFileOptions extends PrivateStateDirOptions {
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * The folder of the run files: `runs/` in the user's private state directory
 * (app/localState/privateStateDir.ts), so a console started from any directory finds them and no
 * other user can plant, fake or prune them.
 *
 * @example
 * runProgressDir(); // '/run/user/1000/rerun/runs'
 */
export function runProgressDir(options: PrivateStateDirOptions = {}): string {
  return join(privateStateDirPath(options), 'runs');
}

/**
 * Announces a running `rerun reprocess` or `rerun backfill`: writes its run file now, rewrites it
 * as its progress changes (at most twice a second, whole files renamed into place, so a reader never
 * sees half of one), and marks it ended with its exit code. Removes run files older than a day. A
 * file that cannot be written is left out: the run does not depend on it. A private state directory
 * that cannot be trusted is refused: {@link PrivateStateDirUnsafeError}, before the run starts.
 *
 * @example
 * const run = publishRun({ command: 'backfill', label: 'backfill 2026-03-01..2026-03-03', target });
 * run.progress({ phase: 'waiting', done: 1, total: 3, unit: 'days' });
 * run.end(0);
 */
export function publishRun(
  info: Pick<RunInfo, 'command' | 'label' | 'target'>,
  options: RunFileOptions = {},
): PublishedRun {
  const now = options.now ?? Date.now;
  let dir: string | undefined;
  try {
    dir = privateStateSubdir('runs', { ...options, create: true });
    if (dir) removeStaleFiles(dir, now());
  } catch (error) {
    // Another user's hand in the directory stops the command, with what to do (never followed).
    if (error instanceof PrivateStateDirUnsafeError) throw error;
    // An unwritable temporary directory costs the console its view of this run, never the run.
  }
  const startedAt = now();
  // The count tells apart two runs one process starts within a millisecond.
  const path = join(
    dir ?? runProgressDir(options),
    `${info.command}-${process.pid}-${startedAt}-${++runsStarted}.json`,
  );
  // Only the three names: a pipeline target passed as it is must not put its clients in the file.
  const { where, inputBucket, outputBucket } = info.target;
  let state: RunInfo = {
    command: info.command,
    label: info.label,
    pid: process.pid,
    startedAt,
    updatedAt: startedAt,
    target: { where, inputBucket, outputBucket },
  };
  let written = 0;
  // A change held back by the interval is written when the interval ends, so a phase that then
  // stands still (a wait with nothing moving) still shows its last count.
  let pending: NodeJS.Timeout | undefined;
  const write = () => {
    if (pending) clearTimeout(pending);
    pending = undefined;
    written = state.updatedAt;
    if (dir === undefined) return;
    try {
      replaceFile(path, `${JSON.stringify(state)}\n`);
    } catch {
      // As above: the run goes on without its file.
    }
  };
  write();
  return {
    path,
    progress(p) {
      const phaseChanged = p.phase !== state.progress?.phase;
      state = { ...state, progress: p, updatedAt: now() };
      const wait = WRITE_INTERVAL_MS - (state.updatedAt - written);
      if (phaseChanged || wait <= 0) write();
      else if (!pending) {
        pending = setTimeout(write, wait);
        pending.unref(); // a run that ends meanwhile writes its end itself
      }
    },
    end(code) {
      if (state.ended) return;
      state = { ...state, updatedAt: now(), ended: { at: now(), code } };
      write();
    },
  };
}

/**
 * The runs of one pipeline that a console shows: the running ones, and those that ended (or whose
 * process is gone) within the last hour; newest first. Only regular files of the user, in the
 * private state directory, are read (links are not followed); an unsafe directory is refused
 * ({@link PrivateStateDirUnsafeError}).
 *
 * @example
 * readRuns({ where: 'http://127.0.0.1:4566', inputBucket: 'rerun-input', outputBucket: 'rerun-output' });
 */
export function readRuns(target: RunTarget, options: RunFileOptions = {}): RunView[] {
  const now = (options.now ?? Date.now)();
  let dir: string | undefined;
  try {
    dir = privateStateSubdir('runs', options);
  } catch (error) {
    if (error instanceof PrivateStateDirUnsafeError) throw error;
    return []; // unreadable (e.g. its parent is a file): no runs to show
  }
  if (dir === undefined) return [];
  const uid = 'uid' in options ? options.uid : process.getuid?.();
  const runs: RunView[] = [];
  for (const name of listJson(dir)) {
    const run = readJson(join(dir, name), uid);
    if (!run || !sameTarget(run.target, target)) continue;
    const state = run.ended ? 'ended' : isAlive(run.pid) ? 'running' : 'gone';
    if (state !== 'running' && now - run.updatedAt > ENDED_RUN_SHOWN_MS) continue;
    runs.push({ ...run, state });
  }
  return runs.sort((a, b) => b.startedAt - a.startedAt);
}

function sameTarget(a: RunTarget | undefined, b: RunTarget): boolean {
  return a?.where === b.where && a.inputBucket === b.inputBucket && a.outputBucket === b.outputBucket;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function listJson(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
}

function readJson(path: string, uid: number | undefined): RunInfo | undefined {
  const text = readOwnFile(path, uid);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as RunInfo;
  } catch {
    return undefined; // removed meanwhile, or not one of ours
  }
}

/** Removes entries older than a day: judged by their own lstat time and unlinked, so a link is never followed. */
function removeStaleFiles(dir: string, now: number): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    try {
      const modified = ownModifiedMs(path);
      if (modified !== undefined && now - modified > STALE_FILE_MS) unlinkSync(path);
    } catch {
      // removed by another run meanwhile
    }
  }
}

/**
 * Runs a command's work as a published run: its file is written first, and the work's own end
 * event marks it ended with the exit code (runRenderers.ts renders the end into the file). A work
 * that throws ends no run itself: its file is marked ended with 1 here, the error passing on.
 *
 * @example
 * return withPublishedRun({ command: 'backfill', label, target }, async (run) => { ...; return 0; });
 */
export async function withPublishedRun(
  info: Pick<RunInfo, 'command' | 'label' | 'target'>,
  work: (run: PublishedRun) => Promise<number>,
): Promise<number> {
  const run = publishRun(info);
  try {
    return await work(run);
  } catch (error) {
    run.end(1);
    throw error;
  }
}
