import { describe, expect, it } from 'vitest';
import { WorkerConfigurationError } from '../../src/errors.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { inputBucketsFrom, outsideInputs } from '../../src/worker/inputScope.js';

const base = {
  name: 'w',
  codeVersion: '1',
  outputBucket: 'out',
  outputKey: (s: { key: string }) => `upper/${s.key}`,
  async transform() {
    return {};
  },
};

describe("a worker's inputs: the buckets and prefixes it reads", () => {
  it('refuses a bucket it does not list, the output bucket included, and accepts the one it lists', () => {
    const worker = { outputBucket: 'out', inputBuckets: ['in'] };
    expect(outsideInputs(worker, { bucket: 'in', key: 'incoming/a.csv' })).toBeUndefined();
    expect(outsideInputs(worker, { bucket: 'out', key: 'incoming/a.csv' })).toBe(
      "s3://out/incoming/a.csv is in the worker's output bucket, which is never one of its inputs (it reads in)",
    );
    expect(outsideInputs(worker, { bucket: 'elsewhere', key: 'a.csv' })).toBe(
      's3://elsewhere/a.csv is in a bucket this pipeline does not read (it reads in): refused, not read',
    );
  });

  it("never takes the worker's own outputs for inputs, even where one bucket is read and written", () => {
    const oneBucket = { outputBucket: 'data', outputPrefixes: ['upper/'], inputBuckets: ['data'] };
    expect(outsideInputs(oneBucket, { bucket: 'data', key: 'incoming/a.csv' })).toBeUndefined();
    expect(outsideInputs(oneBucket, { bucket: 'data', key: 'upper/a.csv' })).toBe(
      "s3://data/upper/a.csv is one of the worker's own outputs (under upper/), never an input",
    );
    // Nothing declared but its output prefixes: its own outputs are still refused.
    expect(
      outsideInputs({ outputBucket: 'data', outputPrefixes: ['upper/'] }, { bucket: 'data', key: 'upper/x' }),
    ).toMatch(/own outputs/);
  });

  it('refuses a key under none of its input prefixes', () => {
    expect(outsideInputs({ outputBucket: 'out', inputPrefixes: ['incoming/'] }, { bucket: 'in', key: 'x/a.csv' })).toBe(
      's3://in/x/a.csv is outside the prefixes this pipeline reads (incoming/): refused, not read',
    );
  });

  it('reads INPUT_BUCKETS as a comma-separated list; empty means not declared', () => {
    expect(inputBucketsFrom(' in-a, in-b ,')).toEqual(['in-a', 'in-b']);
    expect(inputBucketsFrom('')).toBeUndefined();
    expect(inputBucketsFrom(undefined)).toBeUndefined();
  });

  it('defineWorker refuses an empty or malformed inputBuckets or inputPrefixes at start-up', () => {
    expect(() => defineWorker({ ...base, inputBuckets: [] })).toThrow(WorkerConfigurationError);
    expect(() => defineWorker({ ...base, inputBuckets: [''] })).toThrow(/empty bucket name/);
    expect(() => defineWorker({ ...base, inputPrefixes: [3 as unknown as string] })).toThrow(/inputPrefixes/);
    expect(defineWorker({ ...base, inputBuckets: ['in'], inputPrefixes: ['incoming/'] }).inputBuckets).toEqual(['in']);
  });
});
