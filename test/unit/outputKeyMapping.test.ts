import { describe, expect, it } from 'vitest';
import { deterministicKeyMapping } from '../../app/reprocess/outputKeyMapping.js';

describe('deterministicKeyMapping with a stripPrefix shorter than the input prefix', () => {
  it('keeps the unstripped part of the input prefix in the output root, and inverts keys under it', () => {
    const m = deterministicKeyMapping({
      inputBucket: 'in',
      inputPrefix: 'incoming/',
      outputPrefix: 'upper/',
      suffix: '',
      stripPrefix: '',
    });
    expect(m.outputRoot).toBe('upper/in/incoming/');
    expect(m.outputKeyOf('incoming/a.csv')).toBe('upper/in/incoming/a.csv');
    expect(m.inputKeyOf('upper/in/incoming/a.csv')).toBe('incoming/a.csv');
    expect(m.inputKeyOf('upper/in/a.csv')).toBeUndefined();
  });

  it('defaults to stripping the whole input prefix, as before', () => {
    const m = deterministicKeyMapping({
      inputBucket: 'in',
      inputPrefix: 'incoming/',
      outputPrefix: 'upper/',
      suffix: '.txt',
    });
    expect(m.outputRoot).toBe('upper/in/');
    expect(m.inputKeyOf(m.outputKeyOf('incoming/dt=2026-12-05/a.csv'))).toBe('incoming/dt=2026-12-05/a.csv');
  });

  it('refuses a stripPrefix that does not start the input prefix: the keys would not invert', () => {
    expect(() =>
      deterministicKeyMapping({
        inputBucket: 'in',
        inputPrefix: 'incoming/',
        outputPrefix: 'u/',
        suffix: '',
        stripPrefix: 'other/',
      }),
    ).toThrow(RangeError);
  });
});
