import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  PrivateStateDirUnsafeError,
  privateStateDir,
  privateStateDirPath,
} from '../../app/localState/privateStateDir.js';
import { RerunError } from '../../src/errors.js';

const uid = process.getuid?.() as number;
const scratches: string[] = [];
/** A folder standing for the machine's shared temporary directory. */
function sharedTmp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rerun-shared-tmp-'));
  scratches.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of scratches.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the private state directory (session files, journals, run files)', () => {
  it('is created as rerun-<uid>, a directory of the user that only the user can open (mode 0700)', () => {
    const shared = sharedTmp();
    const dir = privateStateDir({ dir: shared, create: true });
    expect(dir).toBe(join(shared, `rerun-${uid}`));
    const stats = lstatSync(dir as string);
    expect(stats.isDirectory()).toBe(true);
    expect(stats.uid).toBe(uid);
    expect(stats.mode & 0o777).toBe(0o700);
    // Read without create: the same directory, checked again.
    expect(privateStateDir({ dir: shared })).toBe(dir);
  });

  it('is not made by a reader: undefined when nothing was ever published', () => {
    const shared = sharedTmp();
    expect(privateStateDir({ dir: shared })).toBeUndefined();
  });

  it("refuses a symbolic link planted at its path, and leaves the link's target untouched", () => {
    const shared = sharedTmp();
    const victim = join(shared, 'elsewhere');
    mkdirSync(victim, { mode: 0o700 });
    writeFileSync(join(victim, 'keep.txt'), 'mine');
    symlinkSync(victim, join(shared, `rerun-${uid}`));
    for (const create of [true, false]) {
      expect(() => privateStateDir({ dir: shared, create })).toThrow(PrivateStateDirUnsafeError);
    }
    expect(() => privateStateDir({ dir: shared })).toThrow(/is a symbolic link.*rm -r .*rerun-\d+/);
    expect(lstatSync(join(victim, 'keep.txt')).size).toBe(4);
  });

  it('refuses a directory open to the group or to others, saying its mode', () => {
    const shared = sharedTmp();
    const path = join(shared, `rerun-${uid}`);
    mkdirSync(path);
    chmodSync(path, 0o755);
    expect(() => privateStateDir({ dir: shared, create: true })).toThrow(/is open to other users \(mode 0755\)/);
    chmodSync(path, 0o770);
    expect(() => privateStateDir({ dir: shared })).toThrow(PrivateStateDirUnsafeError);
  });

  it('refuses a directory owned by another user (the expected uid injected, so no root is needed)', () => {
    const shared = sharedTmp();
    const other = uid + 1;
    // The directory the "other" user finds at its own name was made by this one.
    mkdirSync(join(shared, `rerun-${other}`), { mode: 0o700 });
    const refused = (() => {
      try {
        privateStateDir({ dir: shared, uid: other });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(PrivateStateDirUnsafeError);
    expect(refused).toBeInstanceOf(RerunError);
    expect((refused as Error).name).toBe('PrivateStateDirUnsafeError');
    expect((refused as Error).message).toMatch(new RegExp(`belongs to uid ${uid}, not to you \\(uid ${other}\\)`));
  });

  it('refuses a plain file at its path', () => {
    const shared = sharedTmp();
    writeFileSync(join(shared, `rerun-${uid}`), '');
    expect(() => privateStateDir({ dir: shared, create: true })).toThrow(/is not a directory/);
  });

  it("lives in $XDG_RUNTIME_DIR when that is the user's private directory, in the temporary directory otherwise", () => {
    const runtime = sharedTmp();
    chmodSync(runtime, 0o700);
    expect(privateStateDirPath({ env: { XDG_RUNTIME_DIR: runtime } })).toBe(join(runtime, 'rerun'));
    expect(privateStateDir({ env: { XDG_RUNTIME_DIR: runtime }, create: true })).toBe(join(runtime, 'rerun'));
    chmodSync(runtime, 0o777);
    expect(privateStateDirPath({ env: { XDG_RUNTIME_DIR: runtime } })).toBe(join(tmpdir(), `rerun-${uid}`));
    expect(privateStateDirPath({ env: { XDG_RUNTIME_DIR: 'relative/dir' } })).toBe(join(tmpdir(), `rerun-${uid}`));
    expect(privateStateDirPath({ env: {} })).toBe(join(tmpdir(), `rerun-${uid}`));
  });
});
