import { describe, expect, it } from 'vitest';
import { redriveConsole } from '../../app/redrive/redriveConsole.js';
import type { RedriveResult } from '../../app/redrive/redriveDeadLetters.js';
import type { RedriveEvent } from '../../app/redrive/redriveEvents.js';

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
  };
}

const DLQ = 'http://127.0.0.1:4566/000000000000/normalize-dlq';

/** One DLQ of two messages: one moved back, one kept in the DLQ because it would fail again. */
const RESULT: RedriveResult = {
  dlqUrl: DLQ,
  sourceQueueUrl: 'http://127.0.0.1:4566/000000000000/normalize',
  depth: 2,
  inFlight: 0,
  inspected: [
    { messageId: 'm-1', subject: 's3://in/a.json', reason: 'timeout', receiveCount: 3 },
    { messageId: 'm-2', subject: 's3://in/b.json', reason: 'not JSON', receiveCount: 3, wouldFailAgain: 'not JSON' },
  ],
  dryRun: false,
  method: 'resend',
  moved: 1,
  keptBack: ['m-2'],
  failed: [],
  notes: [],
};

/** A redrive of that DLQ as it tells it. */
const EVENTS: readonly RedriveEvent[] = [
  { kind: 'note', text: 'note: the stack has no output for the DLQ of stage daily: not looked at.\n' },
  { kind: 'queue', label: 'normalize DLQ', dlqUrl: DLQ },
  { kind: 'inspected', letters: RESULT.inspected, depth: 2, inFlight: 0 },
  { kind: 'moved', moved: 1, total: 1 },
  { kind: 'phaseEnd' },
  { kind: 'queueEnd', result: RESULT },
  { kind: 'end', code: 0, dryRun: false, results: [RESULT] },
];

function render(isTTY: boolean, json: boolean) {
  const { io, writes } = fakeIo(isTTY);
  const emit = redriveConsole({ io, json, liveLine: (line) => `\r${line}` });
  for (const event of EVENTS) emit(event);
  return writes;
}

describe('rerun redrive renders its events (terminal, --json)', () => {
  it('off a terminal: notes and a line per step of the moving on stderr, each DLQ and the SUMMARY on stdout', () => {
    const writes = render(false, false);
    expect(writes.map((w) => `${w.stream}: ${w.text}`)).toEqual([
      'stderr: note: the stack has no output for the DLQ of stage daily: not looked at.\n',
      `stdout: \nnormalize DLQ: ${DLQ}`,
      expect.stringMatching(/^stdout: MESSAGE +RECEIVES +SUBJECT +REASON\n.*\n2 message\(s\)\.$/s),
      'stderr: moved 1/1\n',
      'stdout: Moved 1 message(s) back to http://127.0.0.1:4566/000000000000/normalize (resend).\n' +
        'Kept in the DLQ (would fail again): m-2',
      'stdout: SUMMARY {"dryRun":false,"inspected":2,"moved":1,"keptBack":1,"failed":0,"inFlight":0,"queues":1}',
    ]);
  });

  it('on a terminal: the moving is one line redrawn in place, closed when the DLQ is done', () => {
    const stderr = render(true, false).filter((w) => w.stream === 'stderr');
    expect(stderr.map((w) => w.text)).toEqual([
      'note: the stack has no output for the DLQ of stage daily: not looked at.\n',
      expect.stringMatching(/^\rmoved .*1\/1/),
      '\n',
    ]);
  });

  it('--json is the end event alone: the totals and every DLQ result, once', () => {
    expect(render(false, true)).toEqual([
      {
        stream: 'stdout',
        text: JSON.stringify({
          dryRun: false,
          inspected: 2,
          moved: 1,
          keptBack: 1,
          failed: 0,
          inFlight: 0,
          queues: [RESULT],
        }),
      },
    ]);
  });
});
