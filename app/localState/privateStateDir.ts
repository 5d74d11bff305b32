import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { optionalEnv } from '../../src/env.js';
import { RerunError } from '../../src/errors.js';

/**
 * Where rerun keeps its machine-local state: `rerun dev`'s session files and outcome journals, and the
 * run files of `rerun reprocess` and `rerun backfill`. Each user has a directory of their own that no
 * other user can write or read, so nothing another user plants can steer, fake or delete anything of
 * theirs (the shared temporary directory let them: a symlink at a fixed name was followed).
 */
export interface PrivateStateDirOptions {
  /**
   * The folder to make `rerun-<uid>` in, instead of `$XDG_RUNTIME_DIR/rerun` or the machine's
   * temporary directory (tests pass a scratch folder).
   * @default $XDG_RUNTIME_DIR when it is set and private to the user, else os.tmpdir()
   */
  readonly dir?: string;
  /** Read for XDG_RUNTIME_DIR. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * The user the directory (and every file in it) must belong to. Tests inject another uid to see the
   * refusal without root.
   * @default process.getuid(); undefined where there is none (Windows), which checks no owner
   */
  readonly uid?: number | undefined;
}

/**
 * The private state directory exists but cannot be trusted: it is a symbolic link, not a directory,
 * owned by another user, or open to other users. rerun refuses it rather than read or write through it.
 * Not retryable: the message says what to remove or change.
 *
 * @example
 * throw new PrivateStateDirUnsafeError('/tmp/rerun-1000', 'is a symbolic link');
 */
export class PrivateStateDirUnsafeError extends RerunError {
  /** The directory that was refused. */
  readonly path: string;
  constructor(path: string, problem: string) {
    super(
      `rerun keeps its dev session, outcome journal and run files in ${path}, but it ${problem}: another user ` +
        'could plant, change or read files there, so rerun refuses it. If it is yours, remove it (rm -r ' +
        `${path}) and run the command again; rerun recreates it, private to you (mode 0700). Otherwise set ` +
        'XDG_RUNTIME_DIR (or TMPDIR) to a directory only you can write.',
      { retryable: false },
    );
    this.name = 'PrivateStateDirUnsafeError';
    this.path = path;
  }
}

/** The user id every check compares with, or undefined where the platform has none. */
function currentUid(options: PrivateStateDirOptions): number | undefined {
  return 'uid' in options ? options.uid : process.getuid?.();
}

/**
 * The path of the user's private state directory, without touching it: `<dir>/rerun-<uid>` when
 * `dir` is given, else `$XDG_RUNTIME_DIR/rerun` when that directory is the user's own and private
 * (systemd makes it so, and removes it at logout), else `<tmpdir>/rerun-<uid>`.
 *
 * @example
 * privateStateDirPath({ dir: '/tmp', uid: 1000 }); // '/tmp/rerun-1000'
 */
export function privateStateDirPath(options: PrivateStateDirOptions = {}): string {
  const uid = currentUid(options);
  const name = uid === undefined ? 'rerun' : `rerun-${uid}`;
  if (options.dir !== undefined) return join(options.dir, name);
  const runtime = optionalEnv('XDG_RUNTIME_DIR', '', options.env);
  if (runtime !== '' && isAbsolute(runtime)) {
    try {
      if (problemOf(lstatSync(runtime), uid) === undefined) return join(runtime, 'rerun');
    } catch {
      // Not there: the temporary directory serves.
    }
  }
  return join(tmpdir(), name);
}

/**
 * The user's private state directory ({@link privateStateDirPath}), checked: created with mode 0700
 * when `create` is set and it is missing; refused with a {@link PrivateStateDirUnsafeError} unless it
 * is a real directory (`lstat`, so a symbolic link is never followed), owned by the user, and not
 * open to the group or others. Undefined when it does not exist and `create` is not set (nothing
 * was ever published).
 *
 * @example
 * const dir = privateStateDir({ create: true }); // '/run/user/1000/rerun'
 */
export function privateStateDir(
  options: PrivateStateDirOptions & { readonly create?: boolean } = {},
): string | undefined {
  const path = privateStateDirPath(options);
  return checkedDir(path, currentUid(options), options.create ?? false) ? path : undefined;
}

/**
 * A folder inside the private state directory (e.g. `runs`), checked the same way. Undefined when
 * either does not exist and `create` is not set.
 *
 * @example
 * const runs = privateStateSubdir('runs', { create: true });
 */
export function privateStateSubdir(
  name: string,
  options: PrivateStateDirOptions & { readonly create?: boolean } = {},
): string | undefined {
  const parent = privateStateDir(options);
  if (parent === undefined) return undefined;
  const path = join(parent, name);
  return checkedDir(path, currentUid(options), options.create ?? false) ? path : undefined;
}

/** True when `path` is a safe directory (made if asked), false when it is missing; throws when unsafe. */
function checkedDir(path: string, uid: number | undefined, create: boolean): boolean {
  if (create) {
    try {
      // mkdir never follows a link at its own path: a planted one makes EEXIST, then lstat refuses it.
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !create) return false;
    throw error;
  }
  const problem = problemOf(stats, uid);
  if (problem !== undefined) throw new PrivateStateDirUnsafeError(path, problem);
  return true;
}

/** Why a directory's `lstat` makes it unsafe, or undefined when it is the user's private directory. */
function problemOf(stats: Stats, uid: number | undefined): string | undefined {
  if (stats.isSymbolicLink()) return 'is a symbolic link';
  if (!stats.isDirectory()) return 'is not a directory';
  if (uid === undefined) return undefined; // no owners to compare (Windows: the temporary directory is per user)
  if (stats.uid !== uid) return `belongs to uid ${stats.uid}, not to you (uid ${uid})`;
  if ((stats.mode & 0o077) !== 0) {
    return `is open to other users (mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')})`;
  }
  return undefined;
}
