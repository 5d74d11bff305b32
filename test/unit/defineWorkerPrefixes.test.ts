import { describe, expect, it } from 'vitest';
import { OutputKeyOutsidePrefixesError, WorkerConfigurationError } from '../../src/errors.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker, type WorkerDefinition } from '../../src/worker/defineWorker.js';
import { processObject } from '../../src/worker/processObject.js';

const source = { bucket: 'in', key: 'incoming/a.csv' };
const upper = (overrides: Partial<WorkerDefinition> = {}) =>
  defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket: 'out',
    outputPrefixes: ['upper/', 'rejects/'],
    outputKey: (s) => deterministicKey({ prefix: 'upper/', source: s, stripPrefix: 'incoming/' }),
    sideOutputs: { rejects: (s) => deterministicKey({ prefix: 'rejects/', source: s, stripPrefix: 'incoming/' }) },
    async transform() {
      return {};
    },
    ...overrides,
  });

describe('defineWorker({ outputPrefixes }): the worker says where it writes, and keys elsewhere are refused', () => {
  it('passes keys under the declared prefixes through unchanged', () => {
    const worker = upper();
    expect(worker.outputKey(source)).toBe(deterministicKey({ prefix: 'upper/', source, stripPrefix: 'incoming/' }));
    expect(worker.sideOutputs?.rejects?.(source)).toMatch(/^rejects\//);
    expect(worker.outputPrefixes).toEqual(['upper/', 'rejects/']);
  });

  it('refuses a main or side key outside them, not retryable, naming the key, the prefixes and what to change', () => {
    const worker = upper({ outputKey: (s) => `out/${s.key}`, sideOutputs: { bad: () => 'elsewhere/x' } });
    let caught: unknown;
    try {
      worker.outputKey(source);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(OutputKeyOutsidePrefixesError);
    expect((caught as OutputKeyOutsidePrefixesError).retryable).toBe(false);
    expect((caught as Error).message).toMatch(
      /outputKey returned "out\/incoming\/a\.csv", which is outside the worker's outputPrefixes \(upper\/, rejects\/\).*RerunPipeline/,
    );
    expect(() => worker.sideOutputs?.bad?.(source)).toThrow(/sideOutputs\.bad returned "elsewhere\/x"/);
  });

  it('fails the record before any S3 request', async () => {
    const worker = upper({ outputKey: () => 'out/a' });
    const untouchable = new Proxy({} as S3ObjectStore, {
      get: () => {
        throw new Error('the store was used');
      },
    });
    await expect(
      processObject(worker, { ...source, eventName: 'ObjectCreated:Put' }, { store: untouchable }),
    ).rejects.toThrow(OutputKeyOutsidePrefixesError);
  });

  it('keeps `this` for key functions written as methods', () => {
    const worker = defineWorker({
      name: 'm',
      codeVersion: '1',
      outputBucket: 'out',
      outputPrefixes: ['m/'],
      outputKey(s) {
        return `m/${(this as { name: string }).name}/${s.key}`;
      },
      async transform() {
        return {};
      },
    } as WorkerDefinition);
    expect(worker.outputKey(source)).toBe('m/m/incoming/a.csv');
  });

  it('refuses prefixes that are not key prefixes ending with "/"', () => {
    for (const outputPrefixes of [[], ['upper'], [''], [7]]) {
      expect(() => upper({ outputPrefixes: outputPrefixes as string[] })).toThrow(WorkerConfigurationError);
    }
  });

  it('checks nothing when no prefixes are declared', () => {
    const worker = upper({ outputPrefixes: undefined, outputKey: () => 'anywhere/x' });
    expect(worker.outputKey(source)).toBe('anywhere/x');
  });
});
