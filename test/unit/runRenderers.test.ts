import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../app/runs/runEvents.js';
import { publishRun, readRuns } from '../../app/runs/runProgressFile.js';
import { jsonRenderer, runFileRenderer, runRenderers, terminalRenderer } from '../../app/runs/runRenderers.js';

const TARGET = { where: 'http://127.0.0.1:4566', inputBucket: 'acme-input', outputBucket: 'acme-output' };

/** A fake terminal: every write, tagged by its stream. */
function fakeIo(isTTY: boolean) {
  const writes: { stream: 'stdout' | 'stderr'; text: string }[] = [];
  return {
    writes,
    io: {
      isTTY,
      stderrColumns: 80,
      stdout: (text: string) => writes.push({ stream: 'stdout', text }),
      stderr: (text: string) => writes.push({ stream: 'stderr', text }),
    },
    text: (stream: 'stdout' | 'stderr') =>
      writes
        .filter((w) => w.stream === stream)
        .map((w) => w.text)
        .join(''),
  };
}

const liveLine = (line: string) => `\r${line}`;

/** A progress event whose terminal line says its figures, as a command's renderer words them. */
function progress(phase: string, done: number, total: number): RunEvent {
  return {
    kind: 'progress',
    progress: { phase, done, total, unit: 'days' },
    line: { text: `${phase} ${done}/${total} days`, inPlace: true, log: true },
  };
}

/** One event of every kind: a kind added to RunEvent must be added here (the type says so), then rendered. */
const ONE_OF_EACH: { readonly [K in RunEvent['kind']]: Extract<RunEvent, { kind: K }> } = {
  note: { kind: 'note', text: 'Planning 5 days.\n' },
  progress: {
    kind: 'progress',
    progress: { phase: 'enqueueing', done: 2, total: 5, unit: 'days' },
    line: { text: 'enqueueing 2/5 days', inPlace: true, log: true },
  },
  phaseEnd: { kind: 'phaseEnd' },
  result: { kind: 'result', text: 'Backfilled 5 days.\n' },
  end: { kind: 'end', code: 1, summary: { ok: true, done: 5 }, json: { ok: true, done: 5, tasks: [] } },
};

/** A run's events in the order a run tells them. */
const SEQUENCE: readonly RunEvent[] = [
  ONE_OF_EACH.note,
  progress('enqueueing', 2, 5),
  progress('enqueueing', 5, 5),
  progress('waiting', 3, 5),
  ONE_OF_EACH.phaseEnd,
  ONE_OF_EACH.result,
  ONE_OF_EACH.end,
];

describe('the renderers every run shares (terminal, run file, --json)', () => {
  let dir: string;
  let clock: number;
  const now = () => clock;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rerun-renderers-test-'));
    clock = Date.parse('2026-03-02T10:00:00Z');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the terminal renders every kind: no kind is dropped', () => {
    const { io, writes } = fakeIo(true);
    const render = terminalRenderer(io, liveLine);
    const rendered = Object.values(ONE_OF_EACH).filter((event) => {
      const before = writes.length;
      render(event);
      return writes.length > before;
    });
    expect(rendered.map((e) => e.kind)).toEqual(Object.keys(ONE_OF_EACH));
    expect(writes).toEqual([
      { stream: 'stderr', text: 'Planning 5 days.\n' },
      { stream: 'stderr', text: '\renqueueing 2/5 days' },
      { stream: 'stderr', text: '\n' },
      { stream: 'stdout', text: 'Backfilled 5 days.' },
      { stream: 'stdout', text: 'SUMMARY {"ok":true,"done":5}' },
    ]);
  });

  it('the same events give the same figures on the terminal, in the run file and in --json', () => {
    const terminal = fakeIo(false);
    const json = fakeIo(false);
    const run = publishRun(
      { command: 'backfill', label: 'backfill 2026-03-01..2026-03-05', target: TARGET },
      { dir, now },
    );
    const sinks = [terminalRenderer(terminal.io, liveLine), runFileRenderer(run), jsonRenderer(json.io)];
    const phases: { phase: string; done?: number; total?: number }[] = [];
    for (const event of SEQUENCE) {
      for (const sink of sinks) sink(event);
      const file = readRuns(TARGET, { dir, now })[0]?.progress;
      if (event.kind === 'progress' && file) phases.push({ phase: file.phase, done: file.done, total: file.total });
      clock += 1000; // past the run file's write interval, so each step is written
    }

    // The run file stood where each progress event said, and the terminal logged the same figures.
    expect(phases).toEqual([
      { phase: 'enqueueing', done: 2, total: 5 },
      { phase: 'enqueueing', done: 5, total: 5 },
      { phase: 'waiting', done: 3, total: 5 },
    ]);
    expect(terminal.text('stderr').split('\n').slice(1, 4)).toEqual(
      phases.map((p) => `${p.phase} ${p.done}/${p.total} days`),
    );
    // The run file is marked ended by the end event, with its exit code: nobody else writes the end.
    expect(readRuns(TARGET, { dir, now })[0]).toMatchObject({
      progress: { phase: 'waiting', done: 3, total: 5 },
      ended: { code: 1 },
    });
    // The closing figures: the SUMMARY line and the --json object say the same, the object adding its detail.
    const summary = JSON.parse(terminal.text('stdout').split('SUMMARY ')[1] ?? '');
    const object = JSON.parse(json.text('stdout'));
    expect(object).toEqual(ONE_OF_EACH.end.json);
    expect(object).toMatchObject(summary);
    // --json is the object alone: no note, progress or table.
    expect(json.writes).toEqual([{ stream: 'stdout', text: JSON.stringify(ONE_OF_EACH.end.json) }]);
  });

  it('runRenderers sends each event to the run file and to the terminal, or with --json to the object alone', () => {
    for (const asJson of [false, true]) {
      const { io, writes } = fakeIo(false);
      const run = publishRun({ command: 'reprocess', label: `reprocess ${asJson}`, target: TARGET }, { dir, now });
      const emit = runRenderers({ io, json: asJson, run, liveLine });
      for (const event of SEQUENCE) emit(event);
      clock += 1000;
      const files = readRuns(TARGET, { dir, now }).filter((r) => r.label === `reprocess ${asJson}`);
      expect(files[0]?.progress).toMatchObject({ phase: 'waiting', done: 3, total: 5 });
      expect(files[0]?.ended?.code).toBe(1);
      expect(writes.map((w) => w.stream)).toEqual(
        asJson ? ['stdout'] : ['stderr', 'stderr', 'stderr', 'stderr', 'stdout', 'stdout'],
      );
    }
  });

  it('a run ends by its end event: the run file takes its exit code, --json writes its object', () => {
    const run = publishRun({ command: 'backfill', label: 'ends', target: TARGET }, { dir, now });
    const { io, writes } = fakeIo(false);
    const end: RunEvent = { kind: 'end', code: 130, summary: { interrupted: true }, json: { interrupted: true } };
    expect(readRuns(TARGET, { dir, now })[0]?.state).toBe('running');
    runFileRenderer(run)(end);
    jsonRenderer(io)(end);
    expect(readRuns(TARGET, { dir, now })[0]).toMatchObject({ state: 'ended', ended: { code: 130 } });
    expect(writes).toEqual([{ stream: 'stdout', text: '{"interrupted":true}' }]);
  });
});
