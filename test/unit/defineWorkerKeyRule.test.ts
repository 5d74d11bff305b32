import { describe, expect, it } from 'vitest';
import { OutputKeyOutsidePrefixesError, WorkerConfigurationError } from '../../src/errors.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { defineWorker, type WorkerDefinitionInput } from '../../src/worker/defineWorker.js';

const source = { bucket: 'uploads-in', key: 'incoming/dt=2026-12-05/a b.csv' };
const worker = (outputKey: WorkerDefinitionInput['outputKey'], extra: Partial<WorkerDefinitionInput> = {}) =>
  defineWorker({
    name: 'upper',
    codeVersion: 'upper@1',
    outputBucket: 'out',
    outputKey,
    async transform() {
      return {};
    },
    ...extra,
  });

describe('defineWorker({ outputKey }) as data: the key rule a pipeline description holds', () => {
  it("gives the README's keys from { prefix, stripPrefix }, the same as the function form", () => {
    const data = worker({ prefix: 'upper/', stripPrefix: 'incoming/' });
    const fn = worker((s) => deterministicKey({ prefix: 'upper/', source: s, stripPrefix: 'incoming/' }));
    expect(data.outputKey(source)).toBe('upper/uploads-in/dt=2026-12-05/a b.csv');
    expect(data.outputKey(source)).toBe(fn.outputKey(source));
    expect(typeof data.outputKey).toBe('function');
  });

  it("takes a stage's rule from definePipeline as it is, so the worker and the stack share one", () => {
    const pipeline = definePipeline({
      name: 'uploads',
      stages: {
        upper: {
          kind: 'object',
          input: { prefix: 'incoming/' },
          outputKey: { prefix: 'upper/', stripPrefix: 'incoming/', suffix: '.txt' },
        },
      },
    });
    expect(worker(pipeline.stages.upper.outputKey).outputKey(source)).toBe(
      'upper/uploads-in/dt=2026-12-05/a b.csv.txt',
    );
  });

  it('takes a custom pair of functions, and still checks the declared outputPrefixes', () => {
    const custom = worker(
      { outputKeyOf: (s) => `out/${s.key}`, inputKeyOf: (k) => ({ bucket: 'in', key: k.slice(4) }) },
      { outputPrefixes: ['upper/'] },
    );
    expect(() => custom.outputKey(source)).toThrow(OutputKeyOutsidePrefixesError);
  });

  it('refuses a malformed rule at once, naming the field', () => {
    expect(() => worker({ prefix: 'upper' })).toThrow(WorkerConfigurationError);
    expect(() => worker({ prefix: 'upper' })).toThrow(
      /^defineWorker: outputKey\.prefix: must be a key prefix ending with "\/"/,
    );
    expect(() => worker({ prefix: 'upper/', strip: 'incoming/' } as never)).toThrow(
      /outputKey\.strip: unknown field; did you mean "stripPrefix"\?/,
    );
    expect(() => worker({ custom: true } as never)).toThrow(/give the worker the functions/);
    expect(() => worker(undefined as never)).toThrow('defineWorker: "outputKey" and "transform" must be functions');
  });
});
