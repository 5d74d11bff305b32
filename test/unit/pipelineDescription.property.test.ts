import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describePipeline, PipelineDescriptionError, parsePipelineDescription } from '../../src/pipeline/index.js';

/** Names the parser accepts for stages and side outputs, plus a few it refuses. */
const name = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_-]{0,6}$/),
  fc.constantFrom('', '__proto__', 'a.b', 'constructor'),
);
const prefix = fc.oneof(fc.stringMatching(/^[a-z]{1,6}\/$/), fc.constantFrom('', '/', 'x', 'a/b'));
const keyRule = fc.oneof(
  fc.record({ prefix }, { requiredKeys: ['prefix'] }),
  fc.record(
    { prefix, stripPrefix: fc.constantFrom('', 'incoming/', 'in'), suffix: fc.constantFrom('', '.ndjson', 'a/b') },
    { requiredKeys: ['prefix'] },
  ),
  fc.record({ custom: fc.constantFrom(true, false), prefix }, { requiredKeys: ['custom'] }),
);
const partitions = fc.oneof(
  fc.record({ kind: fc.constant('none') }),
  fc.record({
    kind: fc.constant('static'),
    keys: fc.array(fc.constantFrom('region=eu', 'region=us', '', 'a/b'), { maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constant('time'),
    grain: fc.constantFrom('hourly', 'daily', 'weekly', 'monthly', 'yearly'),
    template: fc.constantFrom(
      'dt={yyyy}-{MM}-{dd}',
      'year={yyyy}/month={MM}/day={dd}/hour={HH}',
      '{yyyy}/{MM}',
      '{yyyy}-W{ww}',
      '{x}',
      '',
    ),
  }),
);
const input = fc.oneof(fc.record({ prefix: fc.constantFrom('incoming/', '', 'in') }), fc.record({ stage: name }));
const objectStage = fc.record(
  {
    kind: fc.constant('object'),
    input,
    outputKey: keyRule,
    sideOutputs: fc.dictionary(name, keyRule, { maxKeys: 2 }),
    partitions,
    codeVersion: fc.constantFrom('1', ''),
  },
  { requiredKeys: ['kind', 'input', 'outputKey'] },
);
const windowStage = fc.record(
  { kind: fc.constant('window'), input, partitions, outputPrefix: prefix, codeVersion: fc.constantFrom('1', '') },
  { requiredKeys: ['kind', 'input', 'partitions', 'outputPrefix', 'codeVersion'] },
);
/** Descriptions near the valid ones, so that many parse and many fail deep inside. */
const nearDescription = fc.record(
  {
    version: fc.constantFrom(1, 2),
    name: fc.constantFrom('uploads', ''),
    stages: fc.dictionary(name, fc.oneof(objectStage, windowStage), { maxKeys: 4 }),
  },
  { requiredKeys: ['name', 'stages'] },
);

const validRule = fc.oneof(
  fc.record({ prefix: fc.stringMatching(/^[a-z]{1,6}\/$/) }),
  fc.record({
    prefix: fc.stringMatching(/^[a-z]{1,6}\/$/),
    stripPrefix: fc.constantFrom('', 'incoming/', 'in'),
    suffix: fc.constantFrom('', '.ndjson'),
  }),
  fc.record({ custom: fc.constant(true), prefix: fc.stringMatching(/^[a-z]{1,6}\/$/) }, { requiredKeys: ['custom'] }),
);
const validPartitions = fc.oneof(
  fc.constant({ kind: 'none' }),
  fc.constant({ kind: 'static', keys: ['region=eu', 'region=us'] }),
  fc.constant({ kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' }),
  fc.constant({ kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' }),
  fc.constant({ kind: 'time', grain: 'weekly', template: '{yyyy}-W{ww}' }),
  fc.constant({ kind: 'time', grain: 'monthly', template: '{yyyy}/{MM}' }),
);
/** Valid descriptions: each stage reads the input bucket or a stage before it (no cycle). */
const validDescription = fc
  .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9_-]{0,6}$/), { minLength: 1, maxLength: 4 })
  .chain((names) =>
    fc.record({
      name: fc.constantFrom('uploads', 'p'),
      stages: fc
        .tuple(
          ...names.map((_, i) => {
            const input =
              i === 0
                ? fc.constant({ prefix: 'incoming/' })
                : fc.oneof(
                    fc.constant({ prefix: 'incoming/' }),
                    fc.constantFrom(...names.slice(0, i)).map((stage) => ({ stage })),
                  );
            const object = fc.record(
              {
                kind: fc.constant('object'),
                input,
                outputKey: validRule,
                sideOutputs: fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), validRule, { maxKeys: 2 }),
                partitions: validPartitions,
                codeVersion: fc.constantFrom('1', 'upper@2'),
              },
              { requiredKeys: ['kind', 'input', 'outputKey'] },
            );
            const window = fc.record({
              kind: fc.constant('window'),
              input: fc
                .constantFrom(...(i === 0 ? [names[0] as string] : names.slice(0, i)))
                .map((stage) => ({ stage })),
              partitions: validPartitions,
              outputPrefix: fc.constant('daily/'),
              codeVersion: fc.constant('1'),
            });
            return i === 0 ? object : fc.oneof(object, window);
          }),
        )
        .map((stages) => Object.fromEntries(stages.map((stage, i) => [names[i], stage]))),
    }),
  );

/** Parses, or throws a PipelineDescriptionError; any other error fails the property. */
function parseOrRefuse(value: unknown): ReturnType<typeof parsePipelineDescription> | undefined {
  try {
    return parsePipelineDescription(value);
  } catch (error) {
    if (!(error instanceof PipelineDescriptionError)) throw error;
    return undefined;
  }
}

describe('parsePipelineDescription, property-based', () => {
  it('any JSON value either parses or throws PipelineDescriptionError, never another error', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), nearDescription), (value) => {
        parseOrRefuse(value);
      }),
      { numRuns: 2000 },
    );
  });

  it('a parsed description survives JSON: parse(JSON.parse(JSON.stringify(described))) gives it back', () => {
    let parsedCount = 0;
    fc.assert(
      fc.property(fc.oneof(validDescription, nearDescription), (value) => {
        const parsed = parseOrRefuse(JSON.parse(JSON.stringify(value)));
        if (!parsed) return;
        parsedCount++;
        const described = describePipeline(parsed);
        expect(parsePipelineDescription(JSON.parse(JSON.stringify(described)))).toEqual(described);
        expect(described).toEqual(parsed);
      }),
      { numRuns: 300 },
    );
    // The generator is near enough to valid descriptions that the round trip is exercised.
    expect(parsedCount).toBeGreaterThan(100);
  });
});
