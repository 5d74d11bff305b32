import { describe, expect, it } from 'vitest';
import { MissingEnvironmentVariableError, optionalEnv, optionalIntegerEnv, requireEnv } from '../../src/env.js';

describe('requireEnv', () => {
  it('returns a set variable', () => {
    expect(requireEnv('OUTPUT_BUCKET', { OUTPUT_BUCKET: 'out' })).toBe('out');
  });
  it('names the missing variable in the error', () => {
    expect(() => requireEnv('OUTPUT_BUCKET', {})).toThrow(MissingEnvironmentVariableError);
    expect(() => requireEnv('OUTPUT_BUCKET', { OUTPUT_BUCKET: '' })).toThrow(/OUTPUT_BUCKET/);
  });
  it('falls back only when unset or empty', () => {
    expect(optionalEnv('X', 'd', {})).toBe('d');
    expect(optionalEnv('X', 'd', { X: '0' })).toBe('0');
  });
});

describe('optionalIntegerEnv', () => {
  const range = { min: 1, max: 1000 };
  it('reads an integer in range, and undefined when unset or empty', () => {
    expect(optionalIntegerEnv('N', range, { N: '5' })).toBe(5);
    expect(optionalIntegerEnv('N', range, {})).toBeUndefined();
    expect(optionalIntegerEnv('N', range, { N: '' })).toBeUndefined();
  });

  it('refuses anything else, naming the variable and the range', () => {
    for (const value of ['five', '2.5', '0', '1001', '1e3', '0x10']) {
      expect(() => optionalIntegerEnv('MAX_RECEIVE_COUNT', range, { MAX_RECEIVE_COUNT: value })).toThrow(
        `Environment variable MAX_RECEIVE_COUNT must be an integer in 1..1000, not "${value}".`,
      );
    }
  });
});
