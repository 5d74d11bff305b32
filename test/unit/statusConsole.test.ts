import { describe, expect, it } from 'vitest';
import type { PartitionStatus } from '../../app/partition/judgePartition.js';
import { statusConsole } from '../../app/status/statusConsole.js';
import type { JudgedStatus, StatusEvent } from '../../app/status/statusEvents.js';

/** A fake terminal: every write, tagged by its stream. */
function fakeIo() {
  const writes: { stream: 'stdout' | 'stderr'; text: string }[] = [];
  return {
    writes,
    io: {
      isTTY: false,
      stderrColumns: 80,
      stdout: (text: string) => writes.push({ stream: 'stdout', text }),
      stderr: (text: string) => writes.push({ stream: 'stderr', text }),
    },
  };
}

const counts = { published: 2, missing: 1, stale: 0, invalid: 0, incomplete: 0 } as Record<PartitionStatus, number>;

/** A window stage judged over two days: two published, one missing, a key in no window. */
const WINDOW_STAGE: JudgedStatus = {
  of: 'windowStage',
  forms: 'windows like 2026-12-05 (daily)',
  report: {
    stage: 'daily',
    from: 'pipeline.json',
    grain: 'daily',
    codeVersion: 'daily@1',
    range: { from: '2026-12-05', to: '2026-12-07' },
    outputBucket: 'acme-output',
    windows: [],
    counts,
    skipped: { count: 1, first: [] },
    requests: { list: 4, head: 2 },
  },
};

/** rerun's daily summaries judged over a window with nothing in it: the hint says what to check. */
const SUMMARIES: JudgedStatus = {
  of: 'summaries',
  report: {
    outputBucket: 'acme-output',
    inputBucket: 'acme-input',
    codeVersion: 'summarize@1',
    from: '2026-01-01',
    to: '2026-01-03',
    partitions: [],
    counts: { ...counts, published: 0 },
    requests: { list: 3, head: 0 },
  },
  hint: 'hint: nothing under the window.\n',
};

/** What a status tells: what it judged, then its end. */
function events(judged: JudgedStatus): StatusEvent[] {
  return [
    { kind: 'judged', judged },
    { kind: 'end', code: 0, judged },
  ];
}

describe('rerun status renders its events (terminal, --json)', () => {
  it('--json is the JSON renderer of the end event: the whole report, alone, once', () => {
    for (const judged of [WINDOW_STAGE, SUMMARIES]) {
      const { io, writes } = fakeIo();
      const emit = statusConsole({ io, json: true, liveLine: (line) => line });
      for (const event of events(judged)) emit(event);
      expect(writes).toEqual([{ stream: 'stdout', text: JSON.stringify(judged.report) }]);
    }
  });

  it('the terminal: the header on stderr, the table and counts on stdout, then the SUMMARY line', () => {
    const { io, writes } = fakeIo();
    const emit = statusConsole({ io, json: false, liveLine: (line) => line });
    for (const event of events(WINDOW_STAGE)) emit(event);
    expect(writes[0]).toEqual({
      stream: 'stderr',
      text: 'Window stage "daily" (pipeline.json), windows like 2026-12-05 (daily), code version daily@1.\n',
    });
    expect(writes.slice(1).every((w) => w.stream === 'stdout')).toBe(true);
    expect(writes.at(-2)?.text).toMatch(/, 1 key\(s\) in no window skipped \(4 list \+ 2 HEAD requests\)$/);
    const summary = writes.at(-1)?.text ?? '';
    expect(summary.startsWith('SUMMARY ')).toBe(true);
    expect(JSON.parse(summary.slice('SUMMARY '.length))).toEqual({
      stage: 'daily',
      from: '2026-12-05',
      to: '2026-12-07',
      ...counts,
      skipped: 1,
      requests: { list: 4, head: 2 },
    });
  });

  it("the daily summaries' hint goes to stderr between the table and the counts", () => {
    const { io, writes } = fakeIo();
    const emit = statusConsole({ io, json: false, liveLine: (line) => line });
    for (const event of events(SUMMARIES)) emit(event);
    expect(writes.map((w) => w.stream)).toEqual(['stdout', 'stderr', 'stdout', 'stdout']);
    expect(writes[1]?.text).toBe('hint: nothing under the window.\n');
    expect(writes[3]?.text).toBe(
      `SUMMARY ${JSON.stringify({ from: '2026-01-01', to: '2026-01-03', ...SUMMARIES.report.counts, requests: { list: 3, head: 0 } })}`,
    );
  });
});
