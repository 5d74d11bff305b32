import { describe, expect, it } from 'vitest';
import { RerunError } from '../../src/errors.js';
import {
  definePipeline,
  describePipeline,
  outputKeyOf,
  PipelineDescriptionError,
  parsePipelineDescription,
} from '../../src/pipeline/index.js';

/** The README's user pipeline, with a daily window stage over its outputs. */
const readmePipeline = {
  name: 'uploads',
  stages: {
    upper: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
      codeVersion: 'upper@1',
    },
    daily: {
      kind: 'window',
      input: { stage: 'upper' },
      partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
      outputPrefix: 'daily/',
      codeVersion: 'daily@1',
    },
  },
} as const;

/** A copy of the README pipeline with `edit` applied to a deep clone. */
function edited(edit: (p: { name: string; stages: Record<string, Record<string, unknown>> }) => void): unknown {
  const copy = structuredClone(readmePipeline) as unknown as {
    name: string;
    stages: Record<string, Record<string, unknown>>;
  };
  edit(copy);
  return copy;
}

/** The error parsing `value` throws (fails the test when it parses). */
function refusal(value: unknown): PipelineDescriptionError {
  try {
    parsePipelineDescription(value);
  } catch (error) {
    expect(error).toBeInstanceOf(PipelineDescriptionError);
    return error as PipelineDescriptionError;
  }
  throw new Error('expected a PipelineDescriptionError, but the description parsed');
}

describe('parsePipelineDescription', () => {
  it('reads the README pipeline: the object stage keeps its key rule, the window stage its partitions', () => {
    const parsed = parsePipelineDescription(JSON.parse(JSON.stringify(readmePipeline)));
    expect(parsed).toEqual({ version: 1, ...readmePipeline });
    expect(Object.isFrozen(parsed.stages)).toBe(true);
  });

  it("keeps a window stage's output file name, which the tools need to find its outputs", () => {
    const parsed = parsePipelineDescription(
      edited((p) => {
        (p.stages.daily as Record<string, unknown>).fileName = 'counts.json';
      }),
    );
    expect(parsed.stages.daily).toMatchObject({ kind: 'window', fileName: 'counts.json' });
    expect(describePipeline(parsed).stages.daily).toMatchObject({ fileName: 'counts.json' });
  });

  it('names an unknown stage reference by its path, with the nearest known name', () => {
    const error = refusal(
      edited((p) => {
        (p.stages.daily as { input: unknown }).input = { stage: 'uper' };
      }),
    );
    expect(error.message).toBe('stages.daily.input.stage: no stage named "uper"; did you mean "upper"?');
    expect(error.path).toBe('stages.daily.input.stage');
    expect(error.retryable).toBe(false);
    expect(error).toBeInstanceOf(RerunError);
    expect(error.name).toBe('PipelineDescriptionError');
  });

  it('refuses an unknown field, offering the known one it is nearest to', () => {
    const error = refusal(
      edited((p) => {
        (p.stages.upper as Record<string, unknown>).codeversion = 'x';
      }),
    );
    expect(error.message).toMatch(/^stages\.upper\.codeversion: unknown field; did you mean "codeVersion"\?/);
  });

  it('refuses stages that read each other in a cycle, naming the cycle', () => {
    const error = refusal({
      name: 'loop',
      stages: {
        a: { kind: 'object', input: { stage: 'b' }, outputKey: { prefix: 'a/' } },
        b: { kind: 'object', input: { stage: 'a' }, outputKey: { prefix: 'b/' } },
      },
    });
    expect(error.message).toMatch(/^stages\.a\.input\.stage: the stages a -> b -> a read each other's outputs/);
  });

  it('refuses a stage that reads its own outputs', () => {
    const error = refusal({
      name: 'self',
      stages: { a: { kind: 'object', input: { stage: 'a' }, outputKey: { prefix: 'a/' } } },
    });
    expect(error.path).toBe('stages.a.input.stage');
  });

  it.each([
    ['a missing name', (p: Record<string, unknown>) => delete p.name, /^name: is missing$/],
    [
      'a mistyped key prefix',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.upper as Record<string, unknown>).outputKey = { prefix: 7 };
      },
      /^stages\.upper\.outputKey\.prefix: must be a key prefix ending with "\/"/,
    ],
    [
      'an output prefix without its slash',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).outputPrefix = 'daily';
      },
      /^stages\.daily\.outputPrefix: must be a key prefix ending with "\/"/,
    ],
    [
      'a window stage without partitions',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        delete (p.stages.daily as Record<string, unknown>).partitions;
      },
      /^stages\.daily\.partitions: is missing$/,
    ],
    [
      'a grain that does not exist',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).partitions = {
          kind: 'time',
          grain: 'dayly',
          template: 'dt={yyyy}-{MM}-{dd}',
        };
      },
      /^stages\.daily\.partitions\.grain: must be one of hourly, daily, weekly, monthly \(got "dayly"\); did you mean "daily"\?$/,
    ],
    [
      'a daily template without the day',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).partitions = {
          kind: 'time',
          grain: 'daily',
          template: 'month={yyyy}-{MM}',
        };
      },
      /^stages\.daily\.partitions\.template: a daily window needs \{dd\}/,
    ],
    [
      'an hourly template without the hour',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).partitions = {
          kind: 'time',
          grain: 'hourly',
          template: 'year={yyyy}/month={MM}/day={dd}',
        };
      },
      /^stages\.daily\.partitions\.template: a hourly window needs \{HH\}/,
    ],
    [
      'a template field that does not exist',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).partitions = {
          kind: 'time',
          grain: 'daily',
          template: '{yyyy}/{MM}/{day}',
        };
      },
      /^stages\.daily\.partitions\.template: has no field \{day\}/,
    ],
    [
      'an empty static list',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).partitions = { kind: 'static', keys: [] };
      },
      /^stages\.daily\.partitions\.keys: must list at least one partition name/,
    ],
    [
      'a static key that is not a segment',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).partitions = { kind: 'static', keys: ['region=eu', 'a/b'] };
      },
      /^stages\.daily\.partitions\.keys\[1\]: must be a non-empty path segment/,
    ],
    [
      'a stripPrefix that is not a start of the input prefix',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.upper as Record<string, unknown>).outputKey = { prefix: 'upper/', stripPrefix: 'incoming/x/' };
      },
      /^stages\.upper\.outputKey\.stripPrefix: "incoming\/x\/" does not start the stage's input prefix "incoming\/"/,
    ],
    [
      'an input with both a prefix and a stage',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.upper as Record<string, unknown>).input = { prefix: 'incoming/', stage: 'daily' };
      },
      /^stages\.upper\.input: give either/,
    ],
    [
      'a window output file name holding a slash',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).fileName = 'out/counts.json';
      },
      /^stages\.daily\.fileName: is the last segment of each window's output key: no "\/"/,
    ],
    [
      'an empty window output file name',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).fileName = '';
      },
      /^stages\.daily\.fileName: must be a non-empty string/,
    ],
    [
      'a window stage over a prefix',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.daily as Record<string, unknown>).input = { prefix: 'upper/' };
      },
      /^stages\.daily\.input: a window stage reads another stage's outputs/,
    ],
    [
      'a function in JSON data',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.upper as Record<string, unknown>).outputKey = { outputKeyOf: () => 'x', inputKeyOf: () => undefined };
      },
      /^stages\.upper\.outputKey: a description is data: a custom key rule is published as \{ "custom": true \}/,
    ],
    [
      'a stage kind that does not exist',
      (p: { stages: Record<string, Record<string, unknown>> }) => {
        (p.stages.upper as Record<string, unknown>).kind = 'objects';
      },
      /^stages\.upper\.kind: must be "object" or "window" \(got "objects"\)$/,
    ],
    [
      'another format version',
      (p: Record<string, unknown>) => {
        p.version = 2;
      },
      /^version: this rerun reads version 1 \(got number 2\)/,
    ],
  ] as const)('refuses %s, naming the field', (_what, edit, message) => {
    expect(refusal(edited(edit as (p: unknown) => void)).message).toMatch(message);
  });

  it('refuses what is not a description at all without any other error', () => {
    expect(refusal(null).message).toBe('pipeline description: must be an object (got null)');
    expect(refusal([]).message).toBe('pipeline description: must be an object (got an array)');
    expect(refusal({ name: 'x', stages: {} }).message).toBe('stages: name at least one stage');
    expect(refusal({ name: 'x', stages: { __proto__x: {} } }).path).toBe('stages["__proto__x"]');
    expect(refusal(JSON.parse('{"name":"x","stages":{"__proto__":{}}}')).path).toBe('stages["__proto__"]');
  });
});

describe('definePipeline', () => {
  it('checks a definition as the parser does, at once', () => {
    expect(() =>
      definePipeline({
        name: 'uploads',
        stages: {
          upper: { kind: 'object', input: { prefix: 'incoming/' }, outputKey: { prefix: 'upper/' } },
          daily: {
            kind: 'window',
            input: { stage: 'uper' },
            partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
            outputPrefix: 'daily/',
            codeVersion: '1',
          },
        },
      }),
    ).toThrow('stages.daily.input.stage: no stage named "uper"; did you mean "upper"?');
  });

  it('keeps a custom key rule as functions, and describes it as custom: it cannot be published', () => {
    const pipeline = definePipeline({
      name: 'custom',
      stages: {
        out: {
          kind: 'object',
          input: { prefix: '' },
          outputKey: {
            prefix: 'out/',
            outputKeyOf: (s) => `out/${s.key}.json`,
            inputKeyOf: (k) => ({ bucket: 'in', key: k.slice(4, -5) }),
          },
        },
      },
    });
    expect(outputKeyOf(pipeline.stages.out.outputKey)({ bucket: 'in', key: 'a' })).toBe('out/a.json');
    const described = describePipeline(pipeline);
    expect(described.stages.out).toEqual({
      kind: 'object',
      input: { prefix: '' },
      outputKey: { custom: true, prefix: 'out/' },
    });
    expect(parsePipelineDescription(JSON.parse(JSON.stringify(described)))).toEqual(described);
  });

  it("the README's key rule as data gives the same keys as deterministicKey with those parameters", () => {
    const pipeline = definePipeline(readmePipeline);
    const keyOf = outputKeyOf(pipeline.stages.upper.outputKey);
    expect(keyOf({ bucket: 'uploads-in', key: 'incoming/dt=2026-12-05/a b.csv' })).toBe(
      'upper/uploads-in/dt=2026-12-05/a b.csv',
    );
  });
});
