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
