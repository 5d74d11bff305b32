import { describe, expect, it } from 'vitest';
import {
  type ClassifiedInput,
  classifyInputs,
  describeCoverage,
  InputClass,
  type InputRules,
  judgeInputCoverage,
} from '../../app/partition/inputCoverage.js';
import { coverageProblem, SUMMARY_COVERAGE_KEYS, summaryCoverageOf } from '../../app/partition/summaryCoverage.js';
import { failureIndexKey, parseFailureIndexKey } from '../../src/failures/failureIndex.js';

const key = (i: number) => `incoming/dt=2026-01-05/f${String(i).padStart(6, '0')}.csv`;

describe('summaryCoverageOf', () => {
  it('keeps exact counts and the first 100 keys of a huge group; the digest still sees every key', () => {
    const classified: ClassifiedInput[] = Array.from({ length: 250 }, (_, i) => ({
      key: key(i),
      class: i < 240 ? InputClass.PENDING : InputClass.COVERED,
    }));
    const coverage = summaryCoverageOf(classified);
    expect(SUMMARY_COVERAGE_KEYS).toBe(100);
    expect(coverage.inputs).toBe(250);
    expect(coverage.notCovered.pending.count).toBe(240);
    expect(coverage.notCovered.pending.keys).toEqual(Array.from({ length: 100 }, (_, i) => key(i)));
    expect(coverage.covered.withOutput).toEqual({
      count: 10,
      keys: Array.from({ length: 10 }, (_, i) => key(240 + i)),
    });
    expect(coverageProblem(coverage)).toBeUndefined();
    // Input 200 (beyond the recorded keys) gets an output: the lists look the same, the digest does not.
    const changed = classified.map((c, i) => (i === 200 ? { ...c, class: InputClass.DEAD_LETTERED } : c));
    const after = summaryCoverageOf(changed);
    expect(after.notCovered.pending.keys).toEqual(coverage.notCovered.pending.keys);
    expect(after.digest).not.toBe(coverage.digest);
  });

  it('one name for every given-up input, as rerun status says: a non-retryable failure and a last receive are both dead-lettered; a current output wins over a failure record', () => {
    const rules: InputRules = {
      bucket: 'in',
      prefix: 'incoming/',
      failurePrefix: 'failures/',
      outputKey: (s) => `normalized/in/${s.key.slice('incoming/'.length)}.ndjson`,
    };
    const entry = (k: string, givenUp: 'last-receive' | 'non-retryable') =>
      parseFailureIndexKey(failureIndexKey('failures/', { bucket: 'in', key: k }, 'q', 'm', givenUp));
    const failures = [entry(key(1), 'non-retryable'), entry(key(2), 'last-receive'), entry(key(3), 'last-receive')];
    const listing = {
      inputs: [1, 2, 3].map((i) => ({ key: key(i), lastModified: 1000 })),
      outputs: new Map([[rules.outputKey({ bucket: 'in', key: key(3) }), 2000]]),
      failures: failures.filter((f) => f !== undefined),
    };
    const classified = classifyInputs(listing, rules);
    expect(classified.map((c) => c.class)).toEqual(['dead-lettered', 'dead-lettered', 'covered']);
    const coverage = summaryCoverageOf(classified);
    expect(coverage.notCovered).toEqual({
      pending: { count: 0, keys: [] },
      deadLettered: { count: 2, keys: [key(1), key(2)] },
      outdated: { count: 0, keys: [] },
      skipped: { count: 0, keys: [] },
    });
    // rerun status's view of the same listing uses the same word.
    expect(describeCoverage(judgeInputCoverage(listing, rules))).toBe(
      `3 inputs: 1 with outputs, 2 dead-lettered (${key(1)}, ${key(2)})`,
    );
  });

  it('finds a malformed coverage record', () => {
    const coverage = summaryCoverageOf([{ key: key(1), class: InputClass.PENDING }]);
    expect(coverageProblem({ ...coverage, inputs: 2 })).toBe('coverage groups add up to 1, not 2 inputs');
    expect(coverageProblem({ ...coverage, keysLimit: 0 })).toBe('a coverage group lists more keys than it counts');
    expect(coverageProblem(null)).toBe('coverage is not an object');
    const { deadLettered: _d, ...withoutDeadLettered } = coverage.notCovered;
    expect(coverageProblem({ ...coverage, notCovered: withoutDeadLettered })).toBe(
      'coverage lacks its group(s) deadLettered',
    );
    expect(coverageProblem({ ...coverage, notCovered: { ...coverage.notCovered, lost: { count: 0, keys: [] } } })).toBe(
      'coverage has unknown group(s) lost',
    );
    // A summary written before the one class still reads as sound, its legacy group counted.
    const legacy = {
      ...coverage,
      inputs: 2,
      notCovered: { ...coverage.notCovered, failing: { count: 1, keys: [key(2)] } },
    };
    expect(coverageProblem(legacy)).toBeUndefined();
  });
});
