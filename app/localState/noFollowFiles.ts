import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';

// O_NOFOLLOW makes open fail (ELOOP) on a symbolic link instead of opening what it points to. Windows
// has no such flag (and no user-planted links in a per-user temporary directory): 0 there.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const CREATE_NEW = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | NOFOLLOW;

/**
 * Creates `path` as a new file, private to the user (mode 0600), and opens it for appending. Exclusive:
 * nothing at the path is followed, truncated or reused. A leftover of the same name (a file of a
 * process that had the same id and was killed) is unlinked first, which removes a link itself, never
 * what it points to.
 *
 * @example
 * const fd = createNewFile('/run/user/1000/rerun/dev-shop-42.outcomes.jsonl');
 * writeSync(fd, '{"status":"processed"}\n');
 */
export function createNewFile(path: string): number {
  try {
    return openSync(path, CREATE_NEW | constants.O_APPEND, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    unlinkSync(path);
    return openSync(path, CREATE_NEW | constants.O_APPEND, 0o600);
  }
}

/**
 * Replaces `path` with `text` whole: written to a new temporary file beside it (exclusive, not
 * following links), then renamed into place, so a reader never sees half of it, and a link planted
 * at `path` is replaced, not written through (rename does not follow links).
 *
 * @example
 * replaceFile('/run/user/1000/rerun/runs/backfill-42-1.json', '{"label":"backfill"}\n');
 */
export function replaceFile(path: string, text: string): void {
  const temporary = `${path}.tmp`;
  const fd = createNewFile(temporary);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/**
 * The text of `path` when it is a regular file owned by `uid` (any owner when `uid` is undefined), read
 * without following a link; undefined otherwise (missing, a link, another user's, unreadable).
 *
 * @example
 * const text = readOwnFile('/run/user/1000/rerun/dev-shop-42.json', process.getuid?.());
 */
export function readOwnFile(path: string, uid: number | undefined): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || (uid !== undefined && stats.uid !== uid)) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The modification time of `path` itself (a link's own, never its target's), or undefined when it
 * is gone: what pruning compares, so it never judges, or removes, what a link points to.
 *
 * @example
 * const mtime = ownModifiedMs(path);
 */
export function ownModifiedMs(path: string): number | undefined {
  try {
    return lstatSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}
