import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { devSessionPath, publishDevSession } from '../../app/common/devSessionFile.js';
import { devSessionTarget, explicitTarget } from '../../app/common/devSessionTarget.js';
import { chooseDevSession, findDevSessions } from '../../app/common/findDevSession.js';
import { privateStateDir } from '../../app/localState/privateStateDir.js';
import { resolveConsoleSource } from '../../app/ui/consoleSource.js';
import { emitRecordOutcome } from '../../src/worker/outcomes.js';

const RESOURCES = {
  appName: 'shop',
  endpoint: 'http://127.0.0.1:45660',
  region: 'eu-west-1',
  emulator: 'embedded' as const,
  inputBucket: 'shop-input',
  outputBucket: 'shop-output',
  queueUrl: 'http://127.0.0.1:45660/123456789012/shop-normalize-queue',
  dlqUrl: 'http://127.0.0.1:45660/123456789012/shop-normalize-dlq',
  summaryQueueUrl: 'http://127.0.0.1:45660/123456789012/shop-summarize-queue.fifo',
  summaryDlqUrl: 'http://127.0.0.1:45660/123456789012/shop-summarize-dlq.fifo',
};

/** A process id that names no running process: one that has exited. */
function deadPid(): number {
  const exited = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(exited.stdout.trim());
}

let shared: string;
const closers: (() => void)[] = [];
beforeEach(() => {
  // Stands for the machine's shared temporary directory.
  shared = mkdtempSync(join(tmpdir(), 'rerun-shared-tmp-'));
});
afterEach(() => {
  for (const close of closers.splice(0)) close();
  rmSync(shared, { recursive: true, force: true });
});
function publish(resources: typeof RESOURCES, options: { pid?: number; now?: () => Date } = {}) {
  const session = publishDevSession(resources, { dir: shared, ...options });
  closers.push(() => session.close());
  return session;
}

describe('dev session files: one per process, in the private directory', () => {
  it("two sessions of one app name keep their own files, and one's exit leaves the other's", () => {
    // Two live processes of the user: this one and its parent.
    const first = publish(RESOURCES, { pid: process.pid, now: () => new Date('2026-12-05T10:00:00Z') });
    const second = publish(RESOURCES, { pid: process.ppid, now: () => new Date('2026-12-05T10:05:00Z') });
    expect(first.path).not.toBe(second.path);
    expect(findDevSessions({ dir: shared }).map((s) => s.pid)).toEqual([process.ppid, process.pid]);
    second.close();
    expect(existsSync(second.path)).toBe(false);
    const [left] = findDevSessions({ dir: shared });
    expect(left?.pid).toBe(process.pid);
    expect(existsSync(left?.journal as string)).toBe(true);
  });

  it('ignores the session of a process that is gone (a rerun dev killed with SIGKILL leaves its file)', () => {
    publish(RESOURCES, { pid: deadPid() });
    expect(findDevSessions({ dir: shared })).toEqual([]);
  });

  it('ignores a session file planted in the shared temporary directory, where the old file was', async () => {
    // What another user could write: a live pid (theirs or ours) and an endpoint of theirs.
    const planted = { ...RESOURCES, appName: 'rerun', pid: process.pid, journal: join(shared, 'j.jsonl') };
    writeFileSync(join(shared, 'rerun-dev-rerun.json'), JSON.stringify(planted));
    writeFileSync(join(shared, `dev-rerun-${process.pid}.json`), JSON.stringify(planted));
    expect(findDevSessions({ dir: shared })).toEqual([]);
    // The console, as `rerun ui` finds it (sessionDir is the option's name before the private directory).
    const env: NodeJS.ProcessEnv = {};
    const options = { dir: shared, sessionDir: shared } as Parameters<typeof resolveConsoleSource>[2];
    const source = await resolveConsoleSource({}, env, options);
    expect(source.kind).toBe('aws');
    expect(source.target.endpoint).toBeUndefined();
    expect(env).toEqual({}); // no keys put into the caller's environment
  });

  it('trusts no session file that is a link, even to a file of the user', () => {
    const state = privateStateDir({ dir: shared, create: true }) as string;
    const elsewhere = join(shared, 'session.json');
    const path = devSessionPath(state, 'shop', process.pid);
    writeFileSync(
      elsewhere,
      JSON.stringify({
        ...RESOURCES,
        pid: process.pid,
        startedAt: 'x',
        journal: path.replace(/\.json$/, '.outcomes.jsonl'),
      }),
    );
    symlinkSync(elsewhere, path);
    expect(findDevSessions({ dir: shared })).toEqual([]);
  });

  it("a link planted at the journal's or the session file's name is not followed: what it points to keeps its bytes", () => {
    const state = privateStateDir({ dir: shared, create: true }) as string;
    const victim = join(shared, 'victim.txt');
    writeFileSync(victim, 'precious');
    const path = devSessionPath(state, 'shop', process.pid);
    symlinkSync(victim, path);
    symlinkSync(victim, path.replace(/\.json$/, '.outcomes.jsonl'));
    const session = publish(RESOURCES);
    emitRecordOutcome({ messageId: 'm1', status: 'skipped', reason: 'a journal line' });
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    const [found] = findDevSessions({ dir: shared });
    expect(found?.pid).toBe(process.pid);
    expect(lstatSync(found?.journal as string).isFile()).toBe(true);
    expect(readFileSync(found?.journal as string, 'utf8')).toMatch(/a journal line/);
    session.close();
    expect(readFileSync(victim, 'utf8')).toBe('precious');
  });
});

describe('which session a command uses', () => {
  it('chooses by app name, else the newest, and says so in one line', () => {
    publish(RESOURCES, { pid: process.pid, now: () => new Date('2026-12-05T10:00:00Z') });
    publish(
      { ...RESOURCES, appName: 'blog', endpoint: 'http://127.0.0.1:45661' },
      {
        pid: process.ppid,
        now: () => new Date('2026-12-05T11:00:00Z'),
      },
    );
    const sessions = findDevSessions({ dir: shared });
    expect(chooseDevSession(sessions, 'shop')).toMatchObject({ session: { appName: 'shop' }, among: 1 });
    expect(chooseDevSession(sessions, undefined)).toMatchObject({ session: { appName: 'blog' }, among: 2 });
    expect(chooseDevSession(sessions, 'none')).toBeUndefined();

    const newest = devSessionTarget({}, {}, 'status', { dir: shared });
    expect(newest.session?.appName).toBe('blog');
    expect(newest.note).toBe(
      `note: rerun status uses the running rerun dev of app blog (pid ${process.ppid}, started 2026-12-05T11:00:00.000Z) ` +
        'at http://127.0.0.1:45661 (the newest of 2; --app-name NAME chooses another)\n',
    );
    const named = devSessionTarget({ 'app-name': 'shop' }, {}, 'ls', { dir: shared });
    expect(named.session?.appName).toBe('shop');
    expect(devSessionTarget({}, { RERUN_APP_NAME: 'shop' }, 'ls', { dir: shared }).session?.appName).toBe('shop');
  });

  it("uses the session's endpoint, region, buckets and the embedded emulator's keys when nothing is explicit", () => {
    publish(RESOURCES);
    const chosen = devSessionTarget({ from: '2026-03-01' }, { HOME: '/home/x' }, 'status', { dir: shared });
    expect(chosen.values).toEqual({
      from: '2026-03-01',
      'app-name': 'shop',
      'input-bucket': 'shop-input',
      'output-bucket': 'shop-output',
    });
    expect(chosen.env).toEqual({
      HOME: '/home/x',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:45660',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
  });

  it.each([
    [{ stack: 'Uploads' }, {}],
    [{ 'output-bucket': 'mine' }, {}],
    [{}, { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }],
    [{}, { RERUN_OUTPUT_BUCKET: 'prod-output' }],
    [{}, { RERUN_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/q' }],
    [{}, { AWS_ACCESS_KEY_ID: 'AKIAOPERATOR', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' }],
    [{}, { AWS_PROFILE: 'prod' }],
  ])('anything explicit wins over a live session: %j %j', (values, env) => {
    publish(RESOURCES);
    const chosen = devSessionTarget(values, env, 'status', { dir: shared });
    expect(chosen.session).toBeUndefined();
    expect(chosen.note).toBeUndefined();
    expect(chosen.values).toBe(values);
    expect(chosen.env).toBe(env);
    expect(explicitTarget(values, env)).toBeDefined();
  });

  it("an explicit RERUN_* resource wins in the console too: the session's buckets never replace it", async () => {
    publish(RESOURCES);
    const env = { RERUN_OUTPUT_BUCKET: 'prod-output', RERUN_INPUT_BUCKET: 'prod-input' };
    const source = await resolveConsoleSource({}, env, { dir: shared });
    expect(source.kind).toBe('aws');
    expect(source.target).toMatchObject({ outputBucket: 'prod-output', inputBucket: 'prod-input' });
    expect(source.target.endpoint).toBeUndefined();
  });

  it("an AWS_ENDPOINT_URL that is a running session's takes its resources, with the endpoint and keys as given", () => {
    publish(RESOURCES);
    const env = { AWS_ENDPOINT_URL: RESOURCES.endpoint, AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' };
    const chosen = devSessionTarget({}, env, 'backfill', { dir: shared });
    expect(chosen.session?.appName).toBe('shop');
    expect(chosen.values).toMatchObject({ 'output-bucket': 'shop-output' });
    expect(chosen.env).toBe(env);
  });
});
