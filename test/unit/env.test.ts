import { describe, expect, it } from 'vitest';
import { MissingEnvironmentVariableError, optionalEnv, requireEnv } from '../../src/env.js';

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
