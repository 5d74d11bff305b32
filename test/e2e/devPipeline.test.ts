import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DevReady, DevSummary } from '../../app/dev/runDev.js';
import { uniqueName } from '../support/aws.js';

/**
 * `rerun dev --pipeline` with a user's two-stage pipeline (test/fixtures/userPipeline/: an object
 * stage writing upper/{bucket}/dt=D/..., a daily window stage over it), every step through the real
 * CLI processes, the tools run from a bare environment as in another terminal.
 */
const FIXTURE = 'test/fixtures/userPipeline';
const PIPELINE_FLAGS = [
  '--handler',
  `${FIXTURE}/worker.ts`,
  '--pipeline',
  `${FIXTURE}/pipeline.ts`,
  '--stage-handler',
  `daily=${FIXTURE}/daily.ts`,
];

/** The environment of a fresh terminal: nothing of AWS's or rerun's set (no endpoint, no keys). */
function bareEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('RERUN_')),
  );
}

interface Cli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  readonly exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function rerun(args: readonly string[]): Cli {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/cli/rerun.ts', ...args], {
    env: bareEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function until(what: string, check: () => boolean, cli: Cli, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (cli.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`no ${what} (exit ${cli.child.exitCode}):\n${cli.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A UTC day `n` days before today, YYYY-MM-DD. */
function daysAgo(n: number): string {
  return new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
}

/** A directory of inputs for --demo --examples: `dt=<day>/<name>` files. */
async function inputs(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rerun-devpipe-'));
  dirs.push(dir);
  for (const [path, body] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), body);
  }
  return dir;
}

interface WindowStatusJson {
  windows: { window: string; status: string }[];
}

/** `rerun status --stage daily --json` from another terminal: each window's status. */
async function windowStatus(app: string, from: string, to: string): Promise<Record<string, string>> {
  const status = rerun(['status', '--stage', 'daily', '--from', from, '--to', to, '--app-name', app, '--json']);
  expect(await status.exit, status.stderr()).toBe(0);
  const report = JSON.parse(status.stdout()) as WindowStatusJson;
  return Object.fromEntries(report.windows.map((w) => [w.window, w.status]));
}

/** `rerun cat` of one window's output, parsed. */
async function windowOutput(app: string, day: string): Promise<{ day: string; files: string[]; lines: number }> {
  const cat = rerun(['cat', `s3://${app}-output/daily/dt=${day}/total.json`, '--app-name', app]);
  expect(await cat.exit, cat.stderr()).toBe(0);
  return JSON.parse(cat.stdout()) as { day: string; files: string[]; lines: number };
}

function summaryOf(dev: Cli): DevSummary {
  const line = /^SUMMARY (.*)$/m.exec(dev.stdout())?.[1];
  expect(line, dev.stderr()).toBeDefined();
  return JSON.parse(line as string) as DevSummary;
}

describe("rerun dev --pipeline runs a user's object stage and daily window stage", () => {
  it('uploads become object outputs and the last closed day is published; backfill --stage (no --queue-url) publishes older days, which status --stage shows', async () => {
    const [yesterday, before, older] = [daysAgo(1), daysAgo(2), daysAgo(3)];
    const app = uniqueName('devpipe');
    const dir = await inputs({
      [`dt=${yesterday}/one.csv`]: 'a\nb\n',
      [`dt=${yesterday}/two.csv`]: 'c\n',
      [`dt=${before}/three.csv`]: 'd\n',
      [`dt=${older}/four.csv`]: 'e\nf\ng\n',
    });
    const dev = rerun(['dev', '--demo', '--examples', dir, '--app-name', app, ...PIPELINE_FLAGS]);
    const published = new RegExp(`^processed +s3://${app}-output/daily/dt=${yesterday}/total\\.json `, 'm');
    await until('the window outcome of yesterday', () => published.test(dev.stderr()), dev);
    const ready = JSON.parse(/^READY (.*)$/m.exec(dev.stdout())?.[1] ?? '{}') as DevReady;
    // The object stage first: each upload's output under the key its description gives.
    for (const key of [`dt=${yesterday}/one.csv`, `dt=${yesterday}/two.csv`, `dt=${older}/four.csv`]) {
      expect(dev.stderr()).toMatch(new RegExp(`^processed +s3://${ready.inputBucket}/incoming/${key} `, 'm'));
    }
    expect(dev.stderr()).toContain(`Backfill:   npx rerun backfill --stage daily --from W --to W --app-name ${app}`);
    // The user's worker recorded that its code version ran, so status judges old code from listings.
    const objects = rerun(['status', '--stage', 'upper', '--app-name', app, '--json']);
    expect(await objects.exit, objects.stderr()).toBe(0);
    const upper = JSON.parse(objects.stdout()) as { codeVersion: { known: boolean; note: string } };
    expect(upper.codeVersion.known, upper.codeVersion.note).toBe(true);
    expect(upper.codeVersion.note).toMatch(/^code version upper@1 first ran at /);
    expect(await windowOutput(app, yesterday)).toEqual({
      day: yesterday,
      files: [`dt=${yesterday}/one.csv`, `dt=${yesterday}/two.csv`],
      lines: 3,
    });
    // The older days were uploaded, but only the last closed window is built by the schedule.
    expect(await windowStatus(app, older, yesterday)).toEqual({
      [older]: 'missing',
      [before]: 'missing',
      [yesterday]: 'published',
    });

    const backfill = rerun([
      'backfill',
      '--stage',
      'daily',
      '--from',
      older,
      '--to',
      before,
      '--wait',
      '--app-name',
      app,
    ]);
    expect(await backfill.exit, backfill.stderr()).toBe(0);
    expect(backfill.stderr()).toContain(`note: rerun backfill uses the running rerun dev of app ${app}`);
    expect(backfill.stdout()).toMatch(/^SUMMARY \{/m);

    expect(await windowStatus(app, older, yesterday)).toEqual({
      [older]: 'published',
      [before]: 'published',
      [yesterday]: 'published',
    });
    expect((await windowOutput(app, older)).lines).toBe(3);
    expect((await windowOutput(app, before)).lines).toBe(1);
    // rerun dev saw the backfilled windows as it sees its own: one line each.
    await until('the backfilled outcomes', () => dev.stderr().includes(`daily/dt=${older}/total.json`), dev);

    dev.child.kill('SIGINT');
    expect(await dev.exit, dev.stderr()).toBe(0);
    const summary = summaryOf(dev);
    // Four uploads, three windows; the S3 test event is the one skip.
    expect(summary).toMatchObject({ processed: 7, failed: 0, deadLettered: 0, inFlight: 0 });
  }, 300_000);

  it('a window whose task throws is dead-lettered with its failure record, and the summary says so; the other windows are published', async () => {
    const [yesterday, before, older] = [daysAgo(1), daysAgo(2), daysAgo(3)];
    const app = uniqueName('devpoison');
    const dir = await inputs({
      [`dt=${yesterday}/ok.csv`]: 'a\n',
      [`dt=${before}/bad.csv`]: 'poison\n',
      [`dt=${older}/fine.csv`]: 'b\nc\n',
    });
    // Short timings, so a failing window reaches the DLQ in seconds (2 receives x 3 s).
    const fast = ['--visibility-timeout', '3', '--function-timeout', '2', '--max-receive-count', '2'];
    const dev = rerun(['dev', '--demo', '--examples', dir, '--app-name', app, ...fast, ...PIPELINE_FLAGS]);
    const published = new RegExp(`^processed +s3://${app}-output/daily/dt=${yesterday}/total\\.json `, 'm');
    await until('the window outcome of yesterday', () => published.test(dev.stderr()), dev);

    const backfill = rerun([
      'backfill',
      '--stage',
      'daily',
      '--from',
      older,
      '--to',
      before,
      '--wait',
      '--app-name',
      app,
    ]);
    // --wait ends with a window not published: exit 1, and it says the window was dead-lettered.
    expect(await backfill.exit, backfill.stderr()).toBe(1);
    expect(await windowStatus(app, older, yesterday)).toEqual({
      [older]: 'published',
      [before]: 'missing',
      [yesterday]: 'published',
    });

    // The failure record: rerun redrive finds the stage's DLQ from the session and shows why.
    const redrive = rerun(['redrive', '--queue', 'daily', '--dry-run', '--app-name', app]);
    expect(await redrive.exit, redrive.stderr()).toBe(0);
    expect(redrive.stdout()).toContain(`${app}-daily-dlq.fifo`);
    expect(redrive.stdout()).toContain(`fixture: dt=${before}/bad.csv is poisoned`);
    expect(redrive.stdout()).toMatch(/^1 message\(s\)/m);
    // Redriven to the stage's own queue (from the session), it fails again and returns to the DLQ: the build
    // is still broken for that day. Waited for by the DLQ itself, as an operator would look.
    const moved = rerun(['redrive', '--queue', 'daily', '--app-name', app]);
    expect(await moved.exit, moved.stderr()).toBe(0);
    expect(moved.stdout()).toMatch(new RegExp(`^Moved 1 message\\(s\\) back to \\S*${app}-daily-queue\\.fifo`, 'm'));
    const deadline = Date.now() + 120_000;
    for (;;) {
      const look = rerun(['redrive', '--queue', 'daily', '--dry-run', '--app-name', app]);
      expect(await look.exit, look.stderr()).toBe(0);
      if (/^1 message\(s\)/m.test(look.stdout())) break;
      expect(Date.now() < deadline, `the redriven window never returned to the DLQ:\n${dev.stderr()}`).toBe(true);
      await new Promise((r) => setTimeout(r, 1000));
    }

    dev.child.kill('SIGINT');
    await dev.exit;
    const summary = summaryOf(dev);
    expect(summary.deadLettered).toBe(1);
    expect(dev.stderr()).toContain(`1 message(s) in the DLQ ${app}-daily-dlq.fifo: rerun redrive --dry-run shows why`);
    // The failed window's own line: its deliveries failed with the build's error.
    expect(dev.stderr()).toMatch(
      new RegExp(`^failed +s3://${app}-output/daily/dt=${before}/total\\.json .*poisoned`, 'm'),
    );
  }, 300_000);
});
