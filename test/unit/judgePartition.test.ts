import { describe, expect, it } from 'vitest';
import { judgePartition, type PartitionListing } from '../../app/partition/judgePartition.js';
import { judgeSummaryHead } from '../../app/partition/judgeSummaryHead.js';
import { lineageHash } from '../../app/partition/lineage.js';
import { buildSummaryMetadata } from '../../app/partition/summaryMetadata.js';

const DAY = '2026-01-05';
const CODE = 'summarize@1';
const lineage = [
  { kind: 'normalized', path: `dt=${DAY}/a.csv.ndjson`, etag: 'n1' },
  { kind: 'quarantine', path: `dt=${DAY}/a.csv.ndjson`, etag: 'q1' },
] as const;
const hash = lineageHash({ day: DAY, codeVersion: CODE, entries: lineage });
const published = (over: Partial<PartitionListing> = {}): PartitionListing => ({
  day: DAY,
  lineage,
  summary: { etag: 's1' },
  markers: [{ lineageHash: hash, summaryEtag: 's1', codeVersion: CODE }],
  ...over,
});

describe('judgePartition (the bulk done-check, from listings alone)', () => {
  it("with the inputs listed, judges the summary's coverage record by the digest its marker names", () => {
    const group = (first: string[]) => ({ count: first.length, first });
    const coverage = (digest: string, pending: string[] = []) => ({
      inputs: 1 + pending.length,
      covered: 1,
      skipped: 0,
      quarantined: 0,
      deadLettered: group([]),
      pending: group(pending),
      outdated: group([]),
      digest,
    });
    const marker = (coverageDigest?: string) => [
      { lineageHash: hash, summaryEtag: 's1', codeVersion: CODE, ...(coverageDigest ? { coverageDigest } : {}) },
    ];
    expect(judgePartition(published({ markers: marker('d1'), coverage: coverage('d1') }), CODE).status).toBe(
      'published',
    );
    // Same outputs, another coverage: the record is untrue (an input arrived, failed, was dead-lettered).
    expect(
      judgePartition(published({ markers: marker('d1'), coverage: coverage('d2', ['c.csv']) }), CODE),
    ).toMatchObject({
      status: 'stale',
      reason: 'inputs changed since publish, not their outputs (2 inputs: 1 with outputs, 1 pending (c.csv) now)',
    });
    // The record is true and names a pending input: current, but not covering the day.
    expect(judgePartition(published({ markers: marker('d2'), coverage: coverage('d2', ['c.csv']) }), CODE).status).toBe(
      'incomplete',
    );
    // A summary built without the inputs records no coverage; judged by outputs alone, it is published.
    expect(judgePartition(published({ coverage: coverage('d1') }), CODE).reason).toMatch(
      /does not record which inputs/,
    );
    expect(judgePartition(published({ markers: marker('d1') }), CODE).status).toBe('published');
  });

  it('is published when the single marker names the current lineage, code and the listed summary ETag', () => {
    expect(judgePartition(published(), CODE)).toMatchObject({
      status: 'published',
      inputs: 1,
      quarantineInputs: 1,
      lineageHash: hash,
    });
  });

  it('is missing without a summary (also with a marker left by an interrupted publish)', () => {
    expect(judgePartition(published({ summary: undefined, markers: [] }), CODE)).toMatchObject({
      status: 'missing',
      reason: 'no summary published (1 input)',
    });
    expect(judgePartition(published({ summary: undefined }), CODE).reason).toMatch(/marker remains/);
  });

  it('is stale when inputs or code changed, or when markers are missing or several', () => {
    const changed = published({ lineage: [{ ...lineage[0], etag: 'n1b' }, lineage[1]] });
    expect(judgePartition(changed, CODE)).toMatchObject({
      status: 'stale',
      reason: 'inputs changed since publish (1 input now)',
    });
    expect(judgePartition(published(), 'summarize@2')).toMatchObject({
      status: 'stale',
      reason: 'code changed: built by summarize@1, current summarize@2',
    });
    expect(judgePartition(published({ markers: [] }), CODE).status).toBe('stale');
    const two = published({
      markers: [...published().markers, { lineageHash: 'old', summaryEtag: 's0', codeVersion: CODE }],
    });
    expect(judgePartition(two, CODE)).toMatchObject({
      status: 'stale',
      reason: '2 manifest markers (publish interrupted or raced)',
    });
  });

  it('is invalid when the summary object is not the one published with the marker', () => {
    expect(judgePartition(published({ summary: { etag: 'other' } }), CODE)).toMatchObject({
      status: 'invalid',
      reason: 'summary object changed since it was published (ETag other, published s1)',
    });
  });
});

describe('judgeSummaryHead (the worker done-check, from a HEAD)', () => {
  const metadata = buildSummaryMetadata({
    day: DAY,
    lineageHash: hash,
    codeVersion: CODE,
    sha256Base64: 'abc=',
    bytes: 10,
  });
  const head = (over: object = {}) => ({ etag: 'e', contentLength: 10, metadata, checksumSHA256: 'abc=', ...over });
  const expected = { day: DAY, lineageHash: hash, codeVersion: CODE };

  it('is current only when complete and built from this lineage by this code', () => {
    expect(judgeSummaryHead(undefined, expected).state).toBe('missing');
    expect(judgeSummaryHead(head(), expected).state).toBe('current');
    expect(judgeSummaryHead(head(), { ...expected, lineageHash: 'x' })).toMatchObject({
      state: 'outdated',
      reason: /inputs changed/,
    });
    expect(judgeSummaryHead(head(), { ...expected, codeVersion: 'summarize@2' })).toMatchObject({ state: 'outdated' });
  });

  it('is invalid when truncated, replaced, foreign or for another partition', () => {
    expect(judgeSummaryHead(head({ contentLength: 9 }), expected)).toMatchObject({
      state: 'invalid',
      reason: /content length 9/,
    });
    expect(judgeSummaryHead(head({ checksumSHA256: 'zzz=' }), expected)).toMatchObject({
      state: 'invalid',
      reason: /stored SHA-256 differs/,
    });
    expect(judgeSummaryHead(head({ checksumSHA256: undefined }), expected).state).toBe('invalid');
    expect(judgeSummaryHead(head({ metadata: {} }), expected)).toMatchObject({
      state: 'invalid',
      reason: /no rerun summary metadata/,
    });
    expect(judgeSummaryHead(head(), { ...expected, day: '2026-01-06' })).toMatchObject({
      state: 'invalid',
      reason: /names partition/,
    });
  });
});
