/**
 * Issue 31's acceptance, against `rerun dev`: a user's three-stage pipeline defined here only, in
 * plain JavaScript, importing the packed tarball (not the sources). An object stage with the user's
 * own key rule (clean/{bucket}/{key without incoming/}.lines) over uploads keyed
 * year=/month=/day=/hour=/, an hourly window stage over its outputs and a daily window stage over the
 * hourly one (test/support/clicksPipeline.ts, shared with the deployed tier). `npx rerun dev` runs it; every tool is the installed `npx rerun` run from a terminal
 * with only PATH, HOME and TMPDIR set.
 */
import type { ChildProcess } from 'node:child_process';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevReady } from '../../app/dev/runDev.js';
import { ensurePythonTool, PythonTool } from '../../local/emulator/pythonEnvironment.js';
import { uniqueName } from '../support/aws.js';
import { CLICKS_DEPENDENCIES, CLICKS_FILES } from '../support/clicksPipeline.js';
import {
  bareTerminalEnv,
  killPackedRuns,
  type PackedCli,
  type PackedProject,
  packAndInstall,
  runPackedRerun,
} from '../support/packedProject.js';

let project: PackedProject | undefined;
const children: ChildProcess[] = [];

beforeAll(() => {
  project = packAndInstall(CLICKS_FILES, CLICKS_DEPENDENCIES);
}, 600_000);

afterAll(() => {
  killPackedRuns(children);
  project?.remove();
}, 300_000);

/** `npx rerun ...` in the scratch project, from a bare terminal (plus `extra`). */
function npxRerun(args: readonly string[], extra: Record<string, string> = {}): PackedCli {
  const cli = runPackedRerun(project?.dir ?? '', args, bareTerminalEnv(extra));
  children.push(cli.child);
  return cli;
}

/** Runs a tool to its end; its exit code must be `code`. */
async function tool(args: readonly string[], code = 0): Promise<PackedCli> {
  const cli = npxRerun(args);
  const exit = await cli.exit;
  expect(exit, `rerun ${args.join(' ')}\nstdout:\n${cli.stdout()}\nstderr:\n${cli.stderr()}`).toBe(code);
  return cli;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** A UTC day `n` days before today. */
function daysAgo(n: number): { iso: string; path: string } {
  const d = new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
  const [y, m, day] = d.split('-');
  return { iso: d, path: `year=${y}/month=${m}/day=${day}` };
}

interface WindowStatusJson {
  windows: { window: string; status: string; inputs: number }[];
  counts: Record<string, number>;
  requests: { list: number; head: number };
}

describe('a plain-JavaScript pipeline of three stages from the packed package under `npx rerun dev`', () => {
  it('status, backfill --downstream, reprocess --verify, redrive and ui each show and repair it', async () => {
    const app = uniqueName('packedpipe');
    const python = await ensurePythonTool(PythonTool.MOTO, { progress: () => {} });
    const [d1, d2] = [daysAgo(4), daysAgo(3)];
    // Short timings, so a poisoned input reaches the DLQ in seconds (2 receives).
    const fast = ['--visibility-timeout', '6', '--function-timeout', '5', '--max-receive-count', '2'];
    const dev = npxRerun(
      [
        'dev',
        '--no-demo',
        '--app-name',
        app,
        ...fast,
        '--handler',
        'worker.mjs',
        '--pipeline',
        'pipeline.mjs',
        '--stage-handler',
        'hourly=hourly.mjs',
        '--stage-handler',
        'daily=daily.mjs',
      ],
      // The emulator's Python the other tests use (already installed): not an AWS setting.
      { RERUN_PYTHON: python },
    );
    await until('READY', () => /^READY /m.test(dev.stdout()) || dev.child.exitCode !== null, 120_000);
    const ready = JSON.parse(/^READY (.*)$/m.exec(dev.stdout())?.[1] ?? 'null') as DevReady | null;
    expect(ready, dev.stderr()).not.toBeNull();
    if (!ready) return;
    const s3 = new S3Client({
      endpoint: ready.endpoint,
      region: ready.region,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const inputs: Record<string, string> = {
      [`${d1.path}/hour=03/a.txt`]: 'a\nb\n',
      [`${d1.path}/hour=03/b.txt`]: 'c\n',
      [`${d1.path}/hour=04/c.txt`]: 'd\n',
      [`${d2.path}/hour=10/d.txt`]: 'e\nf\ng\n',
    };
    const inKey = (path: string) => `incoming/${path}`;
    const outKey = (path: string) => `clean/${ready.inputBucket}/${path}.lines`;
    for (const [path, body] of Object.entries(inputs)) {
      await s3.send(new PutObjectCommand({ Bucket: ready.inputBucket, Key: inKey(path), Body: body }));
    }
    const processed = (path: string) =>
      new RegExp(`^processed +s3://${ready.inputBucket}/${inKey(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `, 'm');
    await until('the four object outputs', () => Object.keys(inputs).every((p) => processed(p).test(dev.stderr())));

    const status = async (stage: string, from: string, to: string) => {
      const cli = await tool(['status', '--stage', stage, '--from', from, '--to', to, '--app-name', app, '--json']);
      const report = JSON.parse(cli.stdout()) as WindowStatusJson;
      return { report, by: Object.fromEntries(report.windows.map((w) => [w.window, w.status])) };
    };
    const before = await status('daily', d1.iso, d2.iso);
    expect(before.by).toEqual({ [d1.iso]: 'missing', [d2.iso]: 'missing' });
    // Listings only: two per day (its hourly inputs, its output folder), no HEAD before anything is published.
    expect(before.report.requests).toEqual({ list: 4, head: 0 });
    // The object stage's inputs, judged from the session alone: four uploads, four current outputs.
    const objects = JSON.parse((await tool(['status', '--stage', 'clean', '--app-name', app, '--json'])).stdout()) as {
      counts: Record<string, number>;
    };
    expect(objects.counts).toMatchObject({ current: 4, missing: 0, stale: 0, invalid: 0 });
    // The hourly windows of the uploads' hours each hold their inputs.
    const hours = await status('hourly', `${d1.iso}T03`, `${d1.iso}T04`);
    expect(hours.report.windows.map((w) => [w.window, w.status, w.inputs])).toEqual([
      [`${d1.iso}T03`, 'missing', 2],
      [`${d1.iso}T04`, 'missing', 1],
    ]);

    const backfill = await tool([
      'backfill',
      '--stage',
      'hourly',
      '--from',
      `${d1.iso}T00`,
      '--to',
      `${d2.iso}T23`,
      '--downstream',
      '--wait',
      '--app-name',
      app,
      '--json',
    ]);
    const first = JSON.parse(backfill.stdout()) as {
      planned: number;
      enqueued: number;
      stages: {
        stage: string;
        enqueued: number;
        requests: { list: number; head: number };
        sendRequests: number;
        wait?: { ended: string; published: number };
      }[];
    };
    // 48 hours (empty ones publish an empty count), then the 2 days over them, each after its upstream.
    expect(first).toMatchObject({ planned: 50, enqueued: 50 });
    expect(first.stages.map((s) => [s.stage, s.enqueued, s.wait?.ended, s.wait?.published])).toEqual([
      ['hourly', 48, 'complete', 48],
      ['daily', 2, 'complete', 2],
    ]);
    // Planning lists two prefixes per window (its inputs, its output folder); sends go in batches of 10.
    expect(first.stages.map((s) => [s.stage, s.requests, s.sendRequests])).toEqual([
      ['hourly', { list: 96, head: 0 }, 5],
      ['daily', { list: 4, head: 0 }, 1],
    ]);
    const hourlyStatus = await status('hourly', `${d1.iso}T00`, `${d2.iso}T23`);
    expect(hourlyStatus.by[`${d1.iso}T03`]).toBe('published');
    expect(hourlyStatus.by[`${d1.iso}T04`]).toBe('published');
    expect(hourlyStatus.by[`${d2.iso}T10`]).toBe('published');
    expect(hourlyStatus.report.counts).toMatchObject({ published: 48, missing: 0, stale: 0 });
    expect((await status('daily', d1.iso, d2.iso)).by).toEqual({ [d1.iso]: 'published', [d2.iso]: 'published' });
    const cat = async (key: string) =>
      JSON.parse((await tool(['cat', `s3://${ready.outputBucket}/${key}`, '--app-name', app])).stdout()) as unknown;
    expect(await cat(`daily/${d1.path}/total.json`)).toEqual({
      day: d1.iso,
      hours: 24,
      busy: [`${d1.iso}T03`, `${d1.iso}T04`],
      lines: 4,
    });
    expect(await cat(`daily/${d2.path}/total.json`)).toEqual({
      day: d2.iso,
      hours: 24,
      busy: [`${d2.iso}T10`],
      lines: 3,
    });

    // Damage: one output deleted, another overwritten with other bytes (no longer rerun's output).
    const gone = `${d1.path}/hour=03/a.txt`;
    const corrupt = `${d2.path}/hour=10/d.txt`;
    await s3.send(new DeleteObjectCommand({ Bucket: ready.outputBucket, Key: outKey(gone) }));
    await s3.send(new PutObjectCommand({ Bucket: ready.outputBucket, Key: outKey(corrupt), Body: 'garbage\n' }));
    // The hourly windows over them are stale (an upstream output removed, another rebuilt); the
    // daily ones read the hourly outputs, which have not changed, so they stay published.
    const damaged = await status('hourly', `${d1.iso}T03`, `${d2.iso}T10`);
    expect(damaged.by[`${d1.iso}T03`]).toBe('stale');
    expect(damaged.by[`${d2.iso}T10`]).toBe('stale');
    expect(damaged.by[`${d1.iso}T04`]).toBe('published');
    expect(damaged.report.counts).toMatchObject({ stale: 2, published: 30, missing: 0 });

    interface ReprocessJson {
      planned: number;
      enqueued: number;
      counts: Record<string, number>;
      sample: { state: string; inputKey: string; outputKey: string }[];
      requests: { list: number; lookup: number; head: number };
      waited?: string;
      done?: number;
    }
    const reprocess = async (...args: string[]) =>
      JSON.parse(
        (await tool(['reprocess', '--stage', 'clean', '--verify', ...args, '--app-name', app, '--json'])).stdout(),
      ) as ReprocessJson;
    const plan = await reprocess('--dry-run');
    expect(plan).toMatchObject({
      planned: 2,
      enqueued: 0,
      counts: { missing: 1, invalid: 1, current: 2, stale: 0, 'old-code': 0, orphan: 0, skipped: 0 },
      // Three listing pages (inputs, outputs) and one HEAD per output that looks current (--verify).
      requests: { list: 3, lookup: 0, head: 3 },
    });
    expect(plan.sample.map((s) => [s.state, s.inputKey, s.outputKey])).toEqual([
      ['missing', inKey(gone), outKey(gone)],
      ['invalid', inKey(corrupt), outKey(corrupt)],
    ]);
    const repair = await reprocess('--wait');
    expect(repair).toMatchObject({ planned: 2, enqueued: 2, waited: 'complete', done: 2 });
    const repairedObject = await s3.send(new GetObjectCommand({ Bucket: ready.outputBucket, Key: outKey(corrupt) }));
    expect(await repairedObject.Body?.transformToString()).toBe('E\nF\nG\n');
    expect(await reprocess('--dry-run')).toMatchObject({ planned: 0, counts: { current: 4 } });
    // Rebuilt from the same bytes, the outputs have the ETags the hourly windows recorded: published again.
    const healed = await status('hourly', `${d1.iso}T03`, `${d2.iso}T10`);
    expect(healed.report.counts).toMatchObject({ published: 32, stale: 0 });

    // A late input in a published hour: its hour, then its day, are stale; a backfill republishes both.
    const late = `${d1.path}/hour=04/late.txt`;
    await s3.send(new PutObjectCommand({ Bucket: ready.inputBucket, Key: inKey(late), Body: 'h\n' }));
    await until('the late output', () => processed(late).test(dev.stderr()));
    expect((await status('hourly', `${d1.iso}T04`, `${d1.iso}T04`)).by).toEqual({ [`${d1.iso}T04`]: 'stale' });
    const hourOnly = JSON.parse(
      (
        await tool([
          'backfill',
          '--stage',
          'hourly',
          '--from',
          `${d1.iso}T04`,
          '--to',
          `${d1.iso}T04`,
          '--wait',
          '--app-name',
          app,
          '--json',
        ])
      ).stdout(),
    ) as { planned: number; enqueued: number };
    expect(hourOnly).toMatchObject({ planned: 1, enqueued: 1 });
    expect((await status('daily', d1.iso, d2.iso)).by).toEqual({ [d1.iso]: 'stale', [d2.iso]: 'published' });
    const cascade = JSON.parse(
      (
        await tool([
          'backfill',
          '--stage',
          'hourly',
          '--from',
          `${d1.iso}T00`,
          '--to',
          `${d2.iso}T23`,
          '--downstream',
          '--wait',
          '--app-name',
          app,
          '--json',
        ])
      ).stdout(),
    ) as { planned: number; stages: { stage: string; enqueued: number; wait?: { ended: string } }[] };
    // Nothing of the hourly stage is left to do; the daily stage rebuilds the one stale day.
    expect(cascade.stages.map((s) => [s.stage, s.enqueued])).toEqual([
      ['hourly', 0],
      ['daily', 1],
    ]);
    expect((await status('daily', d1.iso, d2.iso)).by).toEqual({ [d1.iso]: 'published', [d2.iso]: 'published' });
    expect(await cat(`daily/${d1.path}/total.json`)).toEqual({
      day: d1.iso,
      hours: 24,
      busy: [`${d1.iso}T03`, `${d1.iso}T04`],
      lines: 5,
    });

    // A poisoned input: the object stage throws, the input is dead-lettered with its failure record.
    const poison = `${d2.path}/hour=11/poison.txt`;
    await s3.send(new PutObjectCommand({ Bucket: ready.inputBucket, Key: inKey(poison), Body: 'POISON\n' }));
    let redrive = await tool(['redrive', '--dry-run', '--app-name', app]);
    const deadline = Date.now() + 180_000;
    while (!redrive.stdout().includes('POISON marker')) {
      expect(Date.now() < deadline, `never dead-lettered:\n${redrive.stdout()}\n${dev.stderr()}`).toBe(true);
      await new Promise((r) => setTimeout(r, 2000));
      redrive = await tool(['redrive', '--dry-run', '--app-name', app]);
    }
    // The object stage's DLQ, with the failure record's reason, found from the session alone.
    expect(redrive.stdout()).toMatch(
      new RegExp(
        `^\\S+\\s+2\\s+s3://${ready.inputBucket}/incoming/${d2.path}/hour=11/poison\\.txt\\s+Error: clean: the input holds the POISON marker$`,
        'm',
      ),
    );
    expect(redrive.stdout()).toMatch(/^SUMMARY \{"dryRun":true,"inspected":1,"moved":0,/m);
    // By the stage's name: the object stage's DLQ is named "clean", and --queue clean picks it.
    const byStage = await tool(['redrive', '--queue', 'clean', '--dry-run', '--app-name', app]);
    expect(byStage.stdout()).toMatch(new RegExp(`^clean DLQ \\(object stage\\): \\S+/${app}-normalize-dlq$`, 'm'));
    expect(byStage.stdout()).toContain('Error: clean: the input holds the POISON marker');
    expect(byStage.stdout()).toMatch(/^SUMMARY \{"dryRun":true,"inspected":1,"moved":0,.*"queues":1\}$/m);
    expect(redrive.stdout()).toMatch(/^clean DLQ \(object stage\): /m);
    expect(redrive.stdout()).not.toMatch(/^normalize DLQ/m);

    const ui = npxRerun(['ui', '--app-name', app]);
    await until('the URL line', () => /^URL /m.test(ui.stdout()) || ui.child.exitCode !== null, 60_000);
    const url = new URL(/^URL (\S+)$/m.exec(ui.stdout())?.[1] ?? '');
    const token = url.searchParams.get('token') ?? '';
    const overview = await fetch(new URL('/api/overview', url), { headers: { 'x-rerun-token': token } });
    expect(overview.status).toBe(200);
    const seen = (await overview.json()) as Record<string, unknown>;
    expect(seen).toMatchObject({
      appName: app,
      inputBucket: ready.inputBucket,
      inputPrefix: 'incoming/',
      outputBucket: ready.outputBucket,
      live: 'dev',
      session: { endpoint: ready.endpoint },
      // The pipeline's daily window stage, not rerun's own summary.
      codeVersion: 'daily@1',
      stage: { name: 'daily', kind: 'window' },
    });
    const days = await fetch(new URL(`/api/days?from=${d1.iso}&to=${d2.iso}`, url), {
      headers: { 'x-rerun-token': token },
    });
    expect(days.status).toBe(200);
    const { partitions } = (await days.json()) as { partitions: { day: string; status: string }[] };
    expect(partitions.map((p) => [p.day, p.status])).toEqual([
      [d1.iso, 'published'],
      [d2.iso, 'published'],
    ]);
    if (ui.child.pid) process.kill(-ui.child.pid, 'SIGINT');
    await ui.exit;

    if (dev.child.pid) process.kill(-dev.child.pid, 'SIGINT');
    // npx ends by the signal (no exit code); the SUMMARY line is what rerun dev says of the session.
    await dev.exit;
    const summary = JSON.parse(/^SUMMARY (.*)$/m.exec(dev.stdout())?.[1] ?? '{}') as Record<string, unknown>;
    expect(summary).toMatchObject({ deadLettered: 1, inFlight: 0 });
  }, 900_000);
});
