import { describe, expect, it } from 'vitest';
import { PartitionTemplateInvalidError } from '../../src/partitions/errors.js';
import type { PartitionSpec } from '../../src/partitions/partitionSpec.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { WindowTaskConfigurationError } from '../../src/window/errors.js';
import { judgeWindow } from '../../src/window/judgeWindow.js';
import type { WindowTaskDefinition } from '../../src/window/WindowTaskDefinition.js';
import { windowLineageHash } from '../../src/window/windowLineage.js';

const DAILY: PartitionSpec = { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' };
const HOURLY: PartitionSpec = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' };

/** A parts' combine that is never called: the checks run at start-up. */
const combine = async (): Promise<undefined> => undefined;

const definition = (overrides: Partial<WindowTaskDefinition> = {}): WindowTaskDefinition => ({
  name: 'daily',
  codeVersion: 'daily@1',
  partitions: DAILY,
  inputs: [{ name: 'hourly', prefix: 'events/', partitions: HOURLY }],
  output: { bucket: 'out', prefix: 'daily/', fileName: 'out.json' },
  build: async () => undefined,
  ...overrides,
});

describe('defineWindowTask: a definition is checked at start-up', () => {
  it("accepts an hourly-to-daily task and lists its inputs at the day's prefix in the hourly template", () => {
    const task = defineWindowTask(definition());
    const [source] = task.sources;
    expect(source?.listingScheme?.prefixesOf(task.scheme.parseWindow('2026-12-05') as never)).toEqual([
      'year=2026/month=12/day=05/hour=',
    ]);
    expect(source?.bucket).toBe('out');
  });

  it('lists a coarser input window by window (a day over its month)', () => {
    const task = defineWindowTask(
      definition({
        inputs: [{ name: 'm', prefix: 'm/', partitions: { kind: 'time', grain: 'monthly', template: '{yyyy}-{MM}' } }],
      }),
    );
    expect(task.sources[0]?.listingScheme).toBeUndefined();
  });

  it.each([
    [
      'a static input under time windows',
      { inputs: [{ name: 's', prefix: 's/', partitions: { kind: 'static', keys: ['eu'] } }] },
      /input "s": A time window cannot depend/,
    ],
    [
      'two inputs of one name',
      {
        inputs: [
          { name: 'h', prefix: 'a/', partitions: HOURLY },
          { name: 'h', prefix: 'b/', partitions: HOURLY },
        ],
      },
      /"h" is empty or appears twice/,
    ],
    ['no inputs', { inputs: [] }, /no inputs/],
    [
      'own windows without a prefix of their own',
      { partitions: { kind: 'time', grain: 'daily', template: HOURLY.kind === 'time' ? HOURLY.template : '' } },
      /no prefix of their own/,
    ],
    ['a file name with a slash', { output: { bucket: 'out', prefix: 'd/', fileName: 'a/b.json' } }, /fileName/],
    ['no code version', { codeVersion: '' }, /no codeVersion/],
    ['parts of its own grain', { parts: { grain: 'daily', combine } }, /daily parts do not split a daily window/],
    [
      'parts that do not tile its windows (weeks in a month)',
      {
        partitions: { kind: 'time', grain: 'monthly', template: '{yyyy}-{MM}' },
        parts: { grain: 'weekly', combine },
      },
      /weekly parts do not split a monthly window/,
    ],
    [
      'parts an input does not lie inside (hourly parts over a daily input)',
      {
        inputs: [{ name: 'days', prefix: 'd/', partitions: DAILY }],
        partitions: { kind: 'time', grain: 'monthly', template: '{yyyy}-{MM}' },
        parts: { grain: 'hourly', combine },
      },
      /the input "days" has daily windows, which do not lie inside one hourly part/,
    ],
    ['parts with an unknown grain', { parts: { grain: 'minutely', combine } }, /parts.grain "minutely"/],
    ['parts without combine', { parts: { grain: 'hourly' } }, /parts.combine is not a function/],
    [
      'a misspelt option of parts',
      { parts: { grain: 'hourly', combine, combin: 1 } },
      /parts: unknown option 'combin'; did you mean 'combine'\?/,
    ],
    [
      'parts of a static task',
      {
        partitions: { kind: 'static', keys: ['eu'] },
        inputs: [{ name: 's', prefix: 's/', partitions: { kind: 'static', keys: ['eu'] } }],
        parts: { grain: 'hourly', combine },
      },
      /parts need a time scheme; its partitions are static/,
    ],
  ] as const)('refuses %s, naming the task', (_what, overrides, problem) => {
    const define = () => defineWindowTask(definition(overrides as Partial<WindowTaskDefinition>));
    expect(define).toThrow(WindowTaskConfigurationError);
    expect(define).toThrow(problem);
    expect(define).toThrow(/The window task "daily" cannot be used/);
  });

  it('accepts daily parts of a monthly task over hourly inputs', () => {
    const task = defineWindowTask(
      definition({
        partitions: { kind: 'time', grain: 'monthly', template: '{yyyy}-{MM}' },
        parts: { grain: 'daily', combine },
      }),
    );
    expect(task.definition.parts?.grain).toBe('daily');
  });

  it('refuses a template that cannot name its windows with the template named', () => {
    expect(() =>
      defineWindowTask(definition({ partitions: { kind: 'time', grain: 'daily', template: '{yyyy}/{MM}' } })),
    ).toThrow(PartitionTemplateInvalidError);
  });
});

describe('judgeWindow: the list-only done-check of a window', () => {
  const lineage = [{ source: 'hourly', path: 'year=2026/month=12/day=05/hour=00/a.json', etag: 'e1' }];
  const hash = windowLineageHash({ partition: '2026-12-05', codeVersion: 'daily@1', entries: lineage });
  const marker = { lineageHash: hash, outputEtag: 'o1', codeVersion: 'daily@1' };
  const judge = (listing: Partial<Parameters<typeof judgeWindow>[0]>) =>
    judgeWindow({ partition: '2026-12-05', lineage, markers: [marker], output: { etag: 'o1' }, ...listing }, 'daily@1');

  it('calls a window published only when its one marker names the output and the lineage listed now', () => {
    expect(judge({}).status).toBe('published');
    expect(judge({ output: undefined } as never)).toMatchObject({ status: 'missing' });
    expect(judge({ markers: [] })).toMatchObject({
      status: 'stale',
      reason: expect.stringMatching(/without a manifest marker/),
    });
    expect(judge({ markers: [marker, { ...marker, outputEtag: 'o0' }] })).toMatchObject({
      status: 'stale',
      reason: expect.stringMatching(/raced/),
    });
    expect(judge({ output: { etag: 'o2' } })).toMatchObject({ status: 'invalid' });
    expect(
      judge({
        lineage: [...lineage, { source: 'hourly', path: 'year=2026/month=12/day=05/hour=05/late.json', etag: 'e2' }],
      }),
    ).toMatchObject({
      status: 'stale',
      reason: 'inputs changed since publish (2 inputs now)',
    });
    expect(
      judgeWindow({ partition: '2026-12-05', lineage, markers: [marker], output: { etag: 'o1' } }, 'daily@2'),
    ).toMatchObject({
      status: 'stale',
      reason: 'code changed: built by daily@1, current daily@2',
    });
  });
});
