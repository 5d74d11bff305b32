import { describe, expect, it } from 'vitest';
import { LedgerConfigurationError } from '../../src/ledger/errors.js';
import { canonicalJson, hashPayload } from '../../src/ledger/payloadHash.js';

describe('canonicalJson', () => {
  it('sorts object keys recursively and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: [true, { d: null, c: 'x' }] })).toBe('{"a":[true,{"c":"x","d":null}],"b":1}');
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
  });

  it('follows JSON.stringify for undefined, functions and toJSON', () => {
    expect(canonicalJson({ a: undefined, f: () => 1, d: new Date(0) })).toBe('{"d":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson([undefined, () => 1])).toBe('[null,null]');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson('é"\n')).toBe(JSON.stringify('é"\n'));
  });

  it('refuses values JSON.stringify would silently turn into something else', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(LedgerConfigurationError);
    expect(() => canonicalJson({ n: Number.POSITIVE_INFINITY })).toThrow(/non-finite/);
    expect(() => canonicalJson(new Map([['a', 1]]))).toThrow(/Map or Set/);
    expect(() => canonicalJson({ s: new Set([1]) })).toThrow(/Map or Set/);
    expect(() => canonicalJson({ big: 1n })).toThrow(/BigInt/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cycle/);
  });

  it('accepts a shared (non-cyclic) reference twice', () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe('hashPayload', () => {
  it('is the same for equal data built in a different key order', () => {
    expect(hashPayload({ a: 1, b: { c: 2, d: [1, 2] } })).toBe(hashPayload({ b: { d: [1, 2], c: 2 }, a: 1 }));
  });

  it('differs when any value differs and is the SHA-256 hex of the canonical text', () => {
    expect(hashPayload({ a: 1 })).not.toBe(hashPayload({ a: 2 }));
    expect(hashPayload([1, 2])).not.toBe(hashPayload([2, 1]));
    // sha256('{"a":1}')
    expect(hashPayload({ a: 1 })).toBe('015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862');
  });
});
