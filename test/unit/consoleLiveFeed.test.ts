import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { devSessionPath, publishDevSession } from '../../app/common/devSessionFile.js';
import { findDevSessions } from '../../app/common/findDevSession.js';
import { privateStateDirPath } from '../../app/localState/privateStateDir.js';
import { LiveFeed, liveKind } from '../../app/ui/liveFeed.js';
import { emitRecordOutcome } from '../../src/worker/outcomes.js';

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'rerun-ui-unit-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const RESOURCES = {
  appName: 'shop',
  endpoint: 'http://127.0.0.1:4566',
  region: 'us-east-1',
  emulator: 'embedded' as const,
  inputBucket: 'shop-input',
  outputBucket: 'shop-output',
  queueUrl: 'q',
  dlqUrl: 'd',
  summaryQueueUrl: 'sq',
  summaryDlqUrl: 'sd',
};

describe('the dev session file and its outcome journal', () => {
  it('announces the running session, journals each outcome of the process, and leaves nothing behind on close', () => {
    const dir = scratch();
    const session = publishDevSession(RESOURCES, { dir });
    expect(session.path).toBe(devSessionPath(privateStateDirPath({ dir }), 'shop', process.pid));
    const [found] = findDevSessions({ dir });
    expect(found).toMatchObject({ ...RESOURCES, pid: process.pid });
    emitRecordOutcome({
      messageId: 'm1',
      status: 'processed',
      reason: 'output created',
      source: { bucket: 'shop-input', key: 'incoming/a.csv' },
      quarantined: 2,
    });
    emitRecordOutcome({ messageId: 'm2', status: 'skipped', reason: 's3:TestEvent acknowledged' });
    const lines = readFileSync(found?.journal as string, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toMatchObject([
      { status: 'processed', subject: 's3://shop-input/incoming/a.csv', quarantined: 2 },
      { status: 'skipped', subject: 'message m2' },
    ]);
    session.close();
    expect(findDevSessions({ dir })).toEqual([]);
    emitRecordOutcome({ messageId: 'm3', status: 'skipped', reason: 'after close' }); // no listener, no file
  });
});

describe('LiveFeed', () => {
  it('reads only what was appended since the last poll, whole lines only, and counts outcomes per time bucket', async () => {
    const journal = join(scratch(), 'journal.jsonl');
    writeFileSync(journal, '');
    const feed = new LiveFeed(journal, { bucketMs: 1000, buckets: 3 });
    const line = (at: number, status: string, extra = {}) =>
      `${JSON.stringify({ at, status, subject: `s3://b/${at}`, reason: 'r', ...extra })}\n`;
    appendFileSync(journal, line(10_100, 'processed') + line(10_900, 'processed', { quarantined: 1 }));
    const half = line(11_200, 'failed');
    appendFileSync(journal, half.slice(0, 10)); // a line being written
    const first = await feed.poll(11_500);
    expect(first.seq).toBe(2);
    expect(first.outcomes.map((o) => o.subject)).toEqual(['s3://b/10100', 's3://b/10900']);
    expect(first.throughput).toEqual([
      { at: 9000, counts: {} },
      { at: 10_000, counts: { processed: 1, quarantined: 1 } },
      { at: 11_000, counts: {} },
    ]);
    appendFileSync(journal, half.slice(10));
    const second = await feed.poll(11_600, first.seq);
    expect(second.outcomes.map((o) => o.subject)).toEqual(['s3://b/11200']);
    expect(second.throughput.at(-1)).toEqual({ at: 11_000, counts: { failed: 1 } });
  });

  it('answers an empty feed while the journal does not exist', async () => {
    const feed = new LiveFeed(join(scratch(), 'none.jsonl'));
    expect((await feed.poll(0)).outcomes).toEqual([]);
  });

  it('names a processed outcome with quarantined lines "quarantined"', () => {
    expect(liveKind({ status: 'processed', quarantined: 3 })).toBe('quarantined');
    expect(liveKind({ status: 'processed' })).toBe('processed');
    expect(liveKind({ status: 'failed', retryable: true })).toBe('failed');
  });
});
