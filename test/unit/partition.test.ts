import { describe, expect, it } from 'vitest';
import { type LineageEntry, lineageHash, sortLineage } from '../../app/partition/lineage.js';
import {
  classifySummaryKey,
  lineagePrefix,
  markerKey,
  stagingKey,
  summaryKey,
  summaryLayout,
} from '../../app/partition/summaryLayout.js';
import {
  dayOfInstant,
  dayOfPartition,
  dayOfRelativeKey,
  daysInWindow,
  isDay,
  MAX_WINDOW_DAYS,
  previousDay,
} from '../../src/keys/partition.js';

describe('daily partitions', () => {
  it('accepts only real calendar days', () => {
    expect(isDay('2024-02-29')).toBe(true);
    expect(isDay('2026-02-29')).toBe(false);
    expect(isDay('2026-1-05')).toBe(false);
    expect(isDay('2026-13-01')).toBe(false);
  });

  it('reads the partition of a key from its first dt= segment, never from anything else', () => {
    expect(dayOfRelativeKey('dt=2026-01-05/a/b.csv.ndjson')).toBe('2026-01-05');
    expect(dayOfRelativeKey('a/dt=2026-01-05/b.csv.ndjson')).toBeUndefined();
    expect(dayOfRelativeKey('dt=2026-01-05-extra/b.csv.ndjson')).toBeUndefined();
    expect(dayOfRelativeKey('dt=2026-01-05')).toBeUndefined();
    expect(dayOfPartition('dt=2026-02-30')).toBeUndefined();
  });

  it('computes windows and yesterday across month, year and leap-day boundaries', () => {
    expect(daysInWindow('2024-02-28', '2024-03-01')).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
    expect(daysInWindow('2026-01-05', '2026-01-05')).toEqual(['2026-01-05']);
    expect(previousDay('2026-01-01')).toBe('2025-12-31');
    expect(dayOfInstant('2026-01-06T00:30:00+02:00')).toBe('2026-01-05'); // UTC, not local time
    expect(dayOfInstant(Date.parse('2026-01-06T23:59:59Z'))).toBe('2026-01-06');
  });

  it('refuses reversed, malformed and oversized windows with the reason', () => {
    expect(() => daysInWindow('2026-01-05', '2026-01-04')).toThrow(/ends \(2026-01-04\) before it starts/);
    expect(() => daysInWindow('2026-01-5', '2026-01-06')).toThrow(/--from "2026-01-5" is not a day/);
    expect(() => daysInWindow('1026-01-01', '2026-01-01')).toThrow(new RegExp(`at most ${MAX_WINDOW_DAYS}`));
  });
});

describe('summary layout', () => {
  const layout = summaryLayout('rerun-input');

  it('derives every key from the source and the day', () => {
    expect(lineagePrefix(layout, 'normalized', '2026-01-05')).toBe('normalized/rerun-input/dt=2026-01-05/');
    expect(lineagePrefix(layout, 'quarantine', '2026-01-05')).toBe('quarantine/rerun-input/dt=2026-01-05/');
    expect(summaryKey(layout, '2026-01-05')).toBe('summaries/rerun-input/dt=2026-01-05/summary.json');
    expect(stagingKey(layout, '2026-01-05', 'ab')).toBe('summaries/_staging/rerun-input/dt=2026-01-05/ab.json');
  });

  it('round-trips a manifest marker through its key, code versions with "/" included', () => {
    const marker = {
      lineageHash: 'f00d',
      summaryEtag: '9e107d9d372bb6826bd81d3542a419d6',
      codeVersion: 'summarize@2/beta',
    };
    const key = markerKey(layout, '2026-01-05', marker);
    expect(key).toBe(
      'summaries/rerun-input/dt=2026-01-05/_manifest/f00d/9e107d9d372bb6826bd81d3542a419d6/summarize%402%2Fbeta',
    );
    expect(classifySummaryKey(layout, key)).toEqual({ kind: 'marker', day: '2026-01-05', marker });
    expect(classifySummaryKey(layout, summaryKey(layout, '2026-01-05'))).toEqual({
      kind: 'summary',
      day: '2026-01-05',
    });
    // A summary that records its inputs' coverage names the record's digest in a 4th segment.
    const covered = { ...marker, coverageDigest: 'c0ffee' };
    expect(markerKey(layout, '2026-01-05', covered)).toBe(`${key}/c0ffee`);
    expect(classifySummaryKey(layout, `${key}/c0ffee`)).toEqual({ kind: 'marker', day: '2026-01-05', marker: covered });
    expect(classifySummaryKey(layout, `${key}/c0ffee/more`).kind).toBe('other');
    expect(classifySummaryKey(layout, 'summaries/rerun-input/dt=2026-01-05/notes.txt').kind).toBe('other');
    expect(classifySummaryKey(layout, 'summaries/other-input/dt=2026-01-05/summary.json').kind).toBe('other');
  });
});

describe('lineage hash', () => {
  const entries: LineageEntry[] = [
    { kind: 'quarantine', path: 'dt=2026-01-05/a.csv.ndjson', etag: 'q1' },
    { kind: 'normalized', path: 'dt=2026-01-05/b.csv.ndjson', etag: 'n2' },
    { kind: 'normalized', path: 'dt=2026-01-05/a.csv.ndjson', etag: 'n1' },
  ];
  const hash = (e: LineageEntry[], codeVersion = 'summarize@1') =>
    lineageHash({ day: '2026-01-05', codeVersion, entries: e });

  it('does not depend on listing order', () => {
    expect(hash([...entries].reverse())).toBe(hash(entries));
    expect(sortLineage(entries).map((e) => e.etag)).toEqual(['n1', 'n2', 'q1']);
  });

  it('changes with any changed, added or removed input, and with the code version', () => {
    const base = hash(entries);
    expect(hash(entries.map((e) => (e.etag === 'n2' ? { ...e, etag: 'n2b' } : e)))).not.toBe(base);
    expect(hash(entries.slice(1))).not.toBe(base);
    expect(hash([...entries, { kind: 'normalized', path: 'dt=2026-01-05/c.csv.ndjson', etag: 'n3' }])).not.toBe(base);
    expect(hash(entries, 'summarize@2')).not.toBe(base);
    expect(hash([])).toMatch(/^[0-9a-f]{64}$/);
  });
});
