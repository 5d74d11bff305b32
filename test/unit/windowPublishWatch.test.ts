import { describe, expect, it } from 'vitest';
import { WindowPublishWatch } from '../../app/backfill/windowPublishWatch.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { MemoryS3 } from '../support/memoryS3.js';

const DAILY = { kind: 'time', grain: 'daily', template: 'year={yyyy}/month={MM}/day={dd}' } as const;

describe('WindowPublishWatch', () => {
  it('lists a range of windows far apart no further than a page per window, then the folders it did not reach', async () => {
    const s3 = new MemoryS3(['in', 'out']);
    const task = defineWindowTask({
      name: 'daily',
      codeVersion: 'daily@1',
      partitions: DAILY,
      inputs: [{ name: 'hourly', bucket: 'in', prefix: 'hourly/', partitions: DAILY }],
      output: { bucket: 'out', prefix: 'daily/', fileName: 'total.json' },
      async build() {
        return {};
      },
    });
    // Two planned days a year apart, and between them the folders of every other day (50 keys each).
    const windows = [task.scheme.parseWindow('2026-01-01'), task.scheme.parseWindow('2026-12-31')];
    for (const day of task.scheme.windowsBetween('2026-01-02', '2026-12-30')) {
      const [yyyy, mm, dd] = day.name.split('-');
      for (let i = 0; i < 50; i++) s3.write('out', `daily/year=${yyyy}/month=${mm}/day=${dd}/part-${i}.json`, 'x');
    }
    const reader = new S3PartitionStore(s3.client);
    const watch = new WindowPublishWatch({ task, windows, reader });
    const first = await watch.check(false);
    expect(first.published).toBe(0);
    expect(first.remaining.map((v) => [v.window, v.status])).toEqual([
      ['2026-01-01', 'missing'],
      ['2026-12-31', 'missing'],
    ]);

    // Nothing changed: no window judged again; the range is listed for two pages (one per window),
    // then the last day's folder on its own. The whole range is 18,200 keys: 19 pages.
    const before = reader.listRequests;
    expect(await watch.check(false)).toEqual(first);
    expect(reader.listRequests - before).toBe(3);

    // An output written in the last day's folder (with no marker of its lineage): seen by that folder's
    // own listing, and that window alone judged again (its inputs' listing and its folder's).
    s3.write('out', 'daily/year=2026/month=12/day=31/total.json', '{}');
    const again = reader.listRequests;
    const changed = await watch.check(false);
    expect(changed.remaining.map((v) => [v.window, v.status])).toEqual([
      ['2026-01-01', 'missing'],
      ['2026-12-31', 'stale'],
    ]);
    expect(reader.listRequests - again).toBe(3 + 2);
  });
});
