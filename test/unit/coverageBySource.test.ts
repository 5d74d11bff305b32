import { describe, expect, it } from 'vitest';
import {
  type CoverageListing,
  classifyInputs,
  coverageCandidates,
  type InputRules,
  judgeInputCoverage,
  recordedSourceEtag,
} from '../../app/partition/inputCoverage.js';
import { judgePartition } from '../../app/partition/judgePartition.js';
import { lineageHash } from '../../app/partition/lineage.js';
import { summaryCoverageOf } from '../../app/partition/summaryCoverage.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';

// A day's inputs uploaded again with identical bytes (s5cmd sync, `aws s3 cp` twice, a copy onto
// itself) get a later LastModified and keep their ETag; the worker finds its output built from that
// ETag and writes nothing. Status and the summary's coverage record must call such an input covered.

const DAY = '2026-01-05';
const CODE = 'summarize@1';
const rules: InputRules = {
  bucket: 'in',
  prefix: 'incoming/',
  failurePrefix: 'failures/',
  outputKey: (s) => `normalized/${s.bucket}/${s.key.slice('incoming/'.length)}.ndjson`,
};
const a = `incoming/dt=${DAY}/a.csv`;
const b = `incoming/dt=${DAY}/b.csv`;
const outA = `normalized/in/dt=${DAY}/a.csv.ndjson`;
const outB = `normalized/in/dt=${DAY}/b.csv.ndjson`;

/** Both inputs processed at t=2000 from content e-a / e-b. */
const processed: CoverageListing = {
  inputs: [
    { key: a, lastModified: 1000, etag: 'e-a' },
    { key: b, lastModified: 1000, etag: 'e-b' },
  ],
  outputs: new Map([
    [outA, 2000],
    [outB, 2000],
  ]),
  failures: [],
};

/** `a` uploaded again at t=5000 with ETag `etagA`; its output records `recorded` (undefined: not read). */
function reuploaded(etagA: string, recorded?: string): CoverageListing {
  return {
    ...processed,
    inputs: [{ key: a, lastModified: 5000, etag: etagA }, processed.inputs[1] as (typeof processed.inputs)[number]],
    ...(recorded ? { recordedSources: new Map([[outA, recorded]]) } : {}),
  };
}

describe('input coverage: a timestamp nominates an outdated output, its recorded source decides', () => {
  it('nominates only outputs written before their input changed (one HEAD each), never current or missing ones', () => {
    expect(coverageCandidates(processed, rules)).toEqual([]);
    expect(coverageCandidates(reuploaded('e-a'), rules)).toEqual([{ inputKey: a, outputKey: outA }]);
    const missing = { ...reuploaded('e-a'), outputs: new Map([[outB, 2000]]) };
    expect(coverageCandidates(missing, rules)).toEqual([]);
  });

  it('an input uploaded again with identical bytes is covered when its output records that ETag; other bytes are outdated', () => {
    expect(classifyInputs(reuploaded('e-a', 'e-a'), rules).map((c) => c.class)).toEqual(['covered', 'covered']);
    expect(classifyInputs(reuploaded('e-a2', 'e-a'), rules).map((c) => c.class)).toEqual(['outdated', 'covered']);
    // Not read (or the output names another input): the listing's nomination stands.
    expect(classifyInputs(reuploaded('e-a'), rules).map((c) => c.class)).toEqual(['outdated', 'covered']);
  });

  it('the coverage digest (what a summary records) is unchanged by an identical re-upload, and changed by new bytes', () => {
    const before = judgeInputCoverage(processed, rules).digest;
    expect(judgeInputCoverage(reuploaded('e-a', 'e-a'), rules).digest).toBe(before);
    expect(summaryCoverageOf(classifyInputs(reuploaded('e-a', 'e-a'), rules)).digest).toBe(before);
    expect(judgeInputCoverage(reuploaded('e-a2', 'e-a'), rules).digest).not.toBe(before);
  });

  it('a published day stays published after an identical re-upload, and is stale after new bytes', () => {
    const lineage = [
      { kind: 'normalized', path: `dt=${DAY}/a.csv.ndjson`, etag: 'n-a' },
      { kind: 'normalized', path: `dt=${DAY}/b.csv.ndjson`, etag: 'n-b' },
    ] as const;
    const hash = lineageHash({ day: DAY, codeVersion: CODE, entries: lineage });
    const digest = judgeInputCoverage(processed, rules).digest;
    const day = (listing: CoverageListing) =>
      judgePartition(
        {
          day: DAY,
          lineage,
          summary: { etag: 's1' },
          markers: [{ lineageHash: hash, summaryEtag: 's1', codeVersion: CODE, coverageDigest: digest }],
          coverage: judgeInputCoverage(listing, rules),
        },
        CODE,
      );
    expect(day(reuploaded('e-a', 'e-a'))).toMatchObject({
      status: 'published',
      reason: 'up to date (2 inputs: 2 with outputs)',
    });
    expect(day(reuploaded('e-a2', 'e-a'))).toMatchObject({
      status: 'stale',
      reason: `inputs changed since publish, not their outputs (2 inputs: 1 with outputs, 1 outdated (${a}) now)`,
    });
  });

  it('reads the recorded source ETag only from an output whose metadata names exactly this input', () => {
    const metadata = buildOutputMetadata({
      source: { bucket: 'in', key: a, etag: 'e-a' },
      codeVersion: 'normalize@2',
      integrity: { kind: 'sha256', sha256Base64: 'd=', bytes: 1 },
    });
    expect(recordedSourceEtag(metadata, { bucket: 'in', key: a })).toBe('e-a');
    expect(recordedSourceEtag(metadata, { bucket: 'in', key: b })).toBeUndefined();
    expect(recordedSourceEtag(metadata, { bucket: 'other', key: a })).toBeUndefined();
    expect(recordedSourceEtag({}, { bucket: 'in', key: a })).toBeUndefined();
  });
});
