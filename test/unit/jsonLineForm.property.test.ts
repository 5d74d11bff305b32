import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyJsonLine, FAST_PATH_MAX_DEPTH, JsonLineForm } from '../../src/normalize/jsonLineForm.js';

const isCanonicalJsonObject = (line: string, maxDepth?: number) =>
  classifyJsonLine(line, maxDepth) === JsonLineForm.CANONICAL;

import { InputFormat } from '../../src/normalize/normalizeRecords.js';
import { normalizeChunks } from '../support/normalizeRun.js';

/** What the slow path writes for a line, or undefined when it would quarantine it. */
function slowPath(line: string): string | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** Canonical means written as it is: exactly what the slow path writes. Cut short means invalid JSON. */
function expectSafe(line: string): void {
  const form = classifyJsonLine(line);
  if (form === JsonLineForm.CANONICAL) expect(slowPath(line)).toBe(line);
  if (form === JsonLineForm.CUT_SHORT) expect(() => JSON.parse(line)).toThrow(SyntaxError);
}

// JSON text, mutated where canonical form is easy to break: spaces, escapes, numbers, keys.
const pieces = fc.constantFrom(
  ...[' ', '\\u0041', '\\/', '\\n', '\\"', '1.0', '1.5', '-0', '0', '1e5', '01', '0.0000001', '0.000001'],
  ...['12345678901234567', '"1":', '"a":', '"a":1,"a":2', '😀', '\ud800', '\u2028', '\t', '{', '}', '[', ']', ',', ':'],
);
const mutated = fc.tuple(fc.json(), fc.array(fc.tuple(fc.nat(), pieces), { maxLength: 3 })).map(([json, edits]) =>
  edits.reduce((text, [at, piece]) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + piece + text.slice(i);
  }, json),
);

/** Objects of the everyday kind: plain keys, strings, integers, decimals, booleans, nulls, nesting. */
const plainKey = fc.stringMatching(/^[a-z_][a-z0-9_ ]{0,8}$/);
const plainValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: fc.constantFrom(...'aZ é"\\\n\t€'.split('')), maxLength: 8 }),
    fc.integer({ min: -1e12, max: 1e12 }),
    fc.integer({ min: -99999, max: 99999 }).map((n) => n / 100),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    tie('object'),
  ),
  object: fc.dictionary(plainKey, tie('value'), { maxKeys: 4 }),
}));

describe('classifyJsonLine: the NDJSON fast path', () => {
  it('accepts a line only when parse-and-stringify would write it unchanged (random JSON, mutated)', () => {
    let accepted = 0;
    const objects = fc.oneof(fc.json(), mutated).filter((text) => text.startsWith('{'));
    fc.assert(
      fc.property(objects, (line) => {
        expectSafe(line);
        if (isCanonicalJsonObject(line)) accepted += 1;
      }),
      { numRuns: 20_000 },
    );
    // The property says something only if the fast path took many of them.
    expect(accepted).toBeGreaterThan(2_000);
  });

  it('says cut short only of invalid JSON (random JSON and mutations, cut anywhere)', () => {
    let cut = 0;
    const prefixes = fc
      .tuple(fc.oneof(fc.json(), mutated), fc.nat())
      .map(([text, at]) => text.slice(0, at % (text.length + 1)))
      .filter((text) => text.startsWith('{'));
    fc.assert(
      fc.property(prefixes, (line) => {
        expectSafe(line);
        if (classifyJsonLine(line) === JsonLineForm.CUT_SHORT) cut += 1;
      }),
      { numRuns: 20_000 },
    );
    expect(cut).toBeGreaterThan(2_000);
  });

  it('says cut short of every proper prefix of a plain object, the partial write of a producer', () => {
    const line = '{"id":49,"name":"Customer \\"49\\"","ok":true,"off":false,"tags":["a",null,[]],"at":{"x":-1.5}}';
    expect(classifyJsonLine(line)).toBe(JsonLineForm.CANONICAL);
    for (let end = 1; end < line.length; end++) {
      expect([end, classifyJsonLine(line.slice(0, end))]).toEqual([end, JsonLineForm.CUT_SHORT]);
    }
  });

  it('accepts what JSON.stringify writes for objects of plain keys and values', () => {
    fc.assert(
      fc.property(plainValue.object, (object) => {
        expect(isCanonicalJsonObject(JSON.stringify(object))).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it.each([
    ['{"a": 1}', 'a space'],
    ['{"a":1.50}', 'a trailing zero'],
    ['{"a":1e3}', 'an exponent'],
    ['{"a":-0}', 'minus zero'],
    ['{"a":0.0000001}', 'a number String() writes as 1e-7'],
    ['{"a":12345678901234567}', 'more than 15 digits'],
    ['{"b":1,"1":2}', 'an integer-like key, which the slow path moves first'],
    ['{"a":1,"a":2}', 'a duplicate key'],
    ['{"a":"\\u0041"}', 'a \\u escape'],
    ['{"a":"\\/"}', 'an escaped slash'],
    ['{"a":"\ud800"}', 'a lone surrogate'],
    ['[1]', 'an array'],
    ['{"a":1}x', 'trailing text'],
  ])('leaves %s to the slow path (%s)', (line) => {
    expect(isCanonicalJsonObject(line)).toBe(false);
    expectSafe(line);
  });

  it('applies the configured nesting limit: a line deeper than it is never written by the fast path', async () => {
    const deep = `${'{"a":'.repeat(5)}1${'}'.repeat(5)}`;
    expect(isCanonicalJsonObject(deep, 5)).toBe(true);
    expect(isCanonicalJsonObject(deep, 4)).toBe(false);
    const run = await normalizeChunks([`${deep}\n`], InputFormat.NDJSON, { maxNestingDepth: 4 });
    expect(run.output).toEqual([]);
    expect(run.quarantine[0]?.reason).toBe('nested deeper than 4 levels');
    const deeper = `${'['.repeat(FAST_PATH_MAX_DEPTH)}${']'.repeat(FAST_PATH_MAX_DEPTH)}`;
    expect(isCanonicalJsonObject(`{"a":${deeper}}`)).toBe(false);
  });

  it('keeps __proto__ as the own key JSON.parse makes of it', () => {
    const line = '{"__proto__":{"x":1},"a":2}';
    expect(isCanonicalJsonObject(line)).toBe(true);
    expectSafe(line);
  });
});
