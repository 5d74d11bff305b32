import { spawnSync } from 'node:child_process';
import {
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { replaceFile } from '../../app/localState/noFollowFiles.js';
import { PrivateStateDirUnsafeError, privateStateDir } from '../../app/localState/privateStateDir.js';
import {
  ENDED_RUN_SHOWN_MS,
  publishRun,
  type RunInfo,
  readRuns,
  runProgressDir,
  withPublishedRun,
} from '../../app/runs/runProgressFile.js';

import { runFileRenderer } from '../../app/runs/runRenderers.js';

const TARGET = { where: 'http://127.0.0.1:4566', inputBucket: 'acme-input', outputBucket: 'acme-output' };
const OTHER = { ...TARGET, where: 'AWS (eu-west-1)' };

describe('run progress files (rerun reprocess and backfill, read by rerun ui)', () => {
  let dir: string;
  let clock: number;
  const now = () => clock;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rerun-runs-test-'));
    clock = Date.parse('2026-03-02T10:00:00Z');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes a run's progress as it goes and its end, for the pipeline it works on only", () => {
    const run = publishRun(
      { command: 'backfill', label: 'backfill 2026-03-01..2026-03-03 (mode stale)', target: TARGET },
      { dir, now },
    );
    expect(readRuns(TARGET, { dir, now })).toMatchObject([{ state: 'running', command: 'backfill' }]);
    expect(readRuns(TARGET, { dir, now })[0]?.progress).toBeUndefined();
    expect(readRuns(OTHER, { dir, now })).toEqual([]);

    run.progress({ phase: 'waiting', done: 0, total: 3, unit: 'days published', figures: { queued: 3 } });
    expect(readRuns(TARGET, { dir, now })[0]?.progress).toEqual({
      phase: 'waiting',
      done: 0,
      total: 3,
      unit: 'days published',
      figures: { queued: 3 },
    });
    // Within the same phase, at most a write per half second...
    clock += 100;
    run.progress({ phase: 'waiting', done: 1, total: 3, unit: 'days published' });
    expect(readRuns(TARGET, { dir, now })[0]?.progress?.done).toBe(0);
    clock += 500;
    run.progress({ phase: 'waiting', done: 2, total: 3, unit: 'days published' });
    expect(readRuns(TARGET, { dir, now })[0]?.progress?.done).toBe(2);
    // ...and the end at once, with the latest progress.
    clock += 10;
    run.progress({ phase: 'waiting', done: 3, total: 3, unit: 'days published' });
    run.end(0);
    const [ended] = readRuns(TARGET, { dir, now });
    expect(ended).toMatchObject({ state: 'ended', ended: { code: 0, at: clock }, progress: { done: 3 } });
    // The file holds the three names of the target, nothing else of it.
    const file = JSON.parse(readFileSync(run.path, 'utf8')) as RunInfo;
    expect(file.target).toEqual(TARGET);
    expect(readdirSync(runProgressDir({ dir })).filter((n) => n.endsWith('.tmp'))).toEqual([]);

    clock += ENDED_RUN_SHOWN_MS + 1;
    expect(readRuns(TARGET, { dir, now })).toEqual([]);
  });

  it('writes a change held back by the interval when the interval ends, though nothing follows it', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const run = publishRun({ command: 'reprocess', label: 'reprocess', target: TARGET }, { dir, now });
      run.progress({ phase: 'waiting', done: 5, total: 6, unit: 'inputs' });
      clock += 200;
      run.progress({ phase: 'waiting', done: 6, total: 6, unit: 'inputs' });
      expect(readRuns(TARGET, { dir, now })[0]?.progress?.done).toBe(5);
      // The wait then stands still: no further progress, no end yet.
      vi.advanceTimersByTime(300);
      expect(readRuns(TARGET, { dir, now })[0]?.progress?.done).toBe(6);
      run.end(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('calls a run whose process died without ending it gone, and removes files older than a day', () => {
    // A process that has exited: its id names no running process (reuse within the test is unlikely).
    const exited = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    const deadPid = Number(exited.stdout.trim());
    clock = Date.now(); // files' ages are told by their modification times
    const runs = runProgressDir({ dir });
    publishRun({ command: 'reprocess', label: 'first', target: TARGET }, { dir, now }).end(1);
    const killed: RunInfo = {
      command: 'reprocess',
      label: 'reprocess incoming/ (mode missing)',
      pid: deadPid,
      startedAt: clock - 1000,
      updatedAt: clock - 500,
      target: TARGET,
      progress: { phase: 'enqueueing', done: 40, total: 100, unit: 'inputs' },
    };
    writeFileSync(join(runs, `reprocess-${deadPid}-1.json`), JSON.stringify(killed));
    expect(readRuns(TARGET, { dir, now }).map((r) => [r.label, r.state])).toEqual([
      ['first', 'ended'],
      ['reprocess incoming/ (mode missing)', 'gone'],
    ]);
    // A file of two days ago goes when the next run starts.
    const old = join(runs, 'backfill-1-1.json');
    writeFileSync(old, JSON.stringify({ ...killed, pid: 1 }));
    const twoDaysAgo = (Date.now() - 2 * 86_400_000) / 1000;
    utimesSync(old, twoDaysAgo, twoDaysAgo);
    publishRun({ command: 'backfill', label: 'next', target: TARGET }, { dir, now });
    expect(readdirSync(runs)).not.toContain('backfill-1-1.json');
  });

  it('leaves the end of a run to its end event, and ends it with 1 when the work throws', async () => {
    // withPublishedRun writes under the machine's temporary directory: its own target keeps it apart.
    const mine = { ...TARGET, inputBucket: `in-${process.pid}-${Date.now()}` };
    const end = { kind: 'end', code: 130, summary: {}, json: {} } as const;
    const ok = withPublishedRun({ command: 'backfill', label: 'ok', target: mine }, async (run) => {
      runFileRenderer(run)(end);
      return 130;
    });
    expect(await ok).toBe(130);
    // A work that returns without its end event leaves its file running: the code returned is not written.
    expect(await withPublishedRun({ command: 'backfill', label: 'silent', target: mine }, async () => 0)).toBe(0);
    await expect(
      withPublishedRun({ command: 'backfill', label: 'boom', target: mine }, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const ended = Object.fromEntries(readRuns(mine).map((r) => [r.label, r.ended?.code]));
    expect(ended).toEqual({ ok: 130, silent: undefined, boom: 1 });
    const own = readdirSync(runProgressDir()).filter((n) => n.startsWith(`backfill-${process.pid}-`));
    for (const name of own) rmSync(join(runProgressDir(), name));
  });

  it('never fails the run when its file cannot be written', () => {
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    const run = publishRun({ command: 'backfill', label: 'x', target: TARGET }, { dir: file, now });
    run.progress({ phase: 'waiting', done: 1, unit: 'days' });
    run.end(0);
    expect(readRuns(TARGET, { dir: file, now })).toEqual([]);
  });
});

describe('run files on a shared machine: another user can neither steer, fake nor prune them', () => {
  let shared: string;
  let victim: string;
  const old = (Date.now() - 2 * 86_400_000) / 1000;
  beforeEach(() => {
    shared = mkdtempSync(join(tmpdir(), 'rerun-shared-tmp-'));
    // What the planted links point to: the victim's own files, one of them older than a day.
    victim = join(shared, 'victims-files');
    mkdirSync(victim);
    writeFileSync(join(victim, 'thesis.txt'), 'two years of work');
    utimesSync(join(victim, 'thesis.txt'), old, old);
  });
  afterEach(() => rmSync(shared, { recursive: true, force: true }));

  it('a symbolic link planted at <tmpdir>/rerun-runs is not followed: the files it points to, old ones too, stay', () => {
    symlinkSync(victim, join(shared, 'rerun-runs'));
    publishRun({ command: 'reprocess', label: 'dry run', target: TARGET }, { dir: shared }).end(0);
    expect(readdirSync(victim)).toEqual(['thesis.txt']);
    expect(readFileSync(join(victim, 'thesis.txt'), 'utf8')).toBe('two years of work');
  });

  it('fake runs in a pre-created <tmpdir>/rerun-runs are not shown', () => {
    mkdirSync(join(shared, 'rerun-runs'));
    const fake: RunInfo = {
      command: 'backfill',
      label: 'rm -rf your bucket',
      pid: process.pid,
      startedAt: Date.now(),
      updatedAt: Date.now(),
      target: TARGET,
    };
    writeFileSync(join(shared, 'rerun-runs', `backfill-${process.pid}-1.json`), JSON.stringify(fake));
    expect(readRuns(TARGET, { dir: shared })).toEqual([]);
  });

  it('a symbolic link at runs/ inside the private directory is refused, and its target untouched', () => {
    const state = privateStateDir({ dir: shared, create: true }) as string;
    symlinkSync(victim, join(state, 'runs'));
    expect(() => publishRun({ command: 'backfill', label: 'x', target: TARGET }, { dir: shared })).toThrow(
      PrivateStateDirUnsafeError,
    );
    expect(() => readRuns(TARGET, { dir: shared })).toThrow(/runs, but it is a symbolic link/);
    expect(readdirSync(victim)).toEqual(['thesis.txt']);
  });

  it('pruning removes an old link itself, never what it points to', () => {
    const runs = join(privateStateDir({ dir: shared, create: true }) as string, 'runs');
    mkdirSync(runs, { mode: 0o700 });
    symlinkSync(join(victim, 'thesis.txt'), join(runs, 'backfill-1-1.json'));
    lutimesSync(join(runs, 'backfill-1-1.json'), old, old);
    publishRun({ command: 'backfill', label: 'next', target: TARGET }, { dir: shared });
    expect(readdirSync(runs)).not.toContain('backfill-1-1.json');
    expect(readFileSync(join(victim, 'thesis.txt'), 'utf8')).toBe('two years of work');
  });

  it('a run file is replaced whole, never written through a link at its name or at its temporary name', () => {
    const target = join(victim, 'thesis.txt');
    const path = join(shared, 'run.json');
    symlinkSync(target, path);
    symlinkSync(target, `${path}.tmp`);
    replaceFile(path, '{"label":"mine"}\n');
    expect(readFileSync(target, 'utf8')).toBe('two years of work');
    expect(readFileSync(path, 'utf8')).toBe('{"label":"mine"}\n');
  });
});
