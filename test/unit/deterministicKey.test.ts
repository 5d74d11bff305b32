import { describe, expect, it } from 'vitest';
import { deterministicKey, MAX_S3_KEY_BYTES } from '../../src/keys/deterministicKey.js';

describe('deterministicKey', () => {
  const base = { prefix: 'normalized/', stripPrefix: 'incoming/', suffix: '.ndjson' };

  it('is a pure function of bucket and key: identical across calls', () => {
    const a = deterministicKey({ ...base, source: { bucket: 'in', key: 'incoming/café münchen.csv' } });
    const b = deterministicKey({ ...base, source: { bucket: 'in', key: 'incoming/café münchen.csv' } });
    expect(a).toBe('normalized/in/café münchen.csv.ndjson');
    expect(b).toBe(a);
  });

  it('keeps inputs that differ only by extension or bucket apart', () => {
    const keys = new Set([
      deterministicKey({ ...base, source: { bucket: 'in', key: 'incoming/a.csv' } }),
      deterministicKey({ ...base, source: { bucket: 'in', key: 'incoming/a.ndjson' } }),
      deterministicKey({ ...base, source: { bucket: 'other', key: 'incoming/a.csv' } }),
    ]);
    expect(keys.size).toBe(3);
  });

  it('hashes keys that would exceed S3 limit of 1024 bytes, still deterministically', () => {
    const long = `incoming/${'é'.repeat(600)}.csv`;
    const key = deterministicKey({ ...base, source: { bucket: 'in', key: long } });
    expect(Buffer.byteLength(key)).toBeLessThanOrEqual(MAX_S3_KEY_BYTES);
    expect(key).toMatch(/^normalized\/in\/_long\/[0-9a-f]{64}\.ndjson$/);
    expect(deterministicKey({ ...base, source: { bucket: 'in', key: long } })).toBe(key);
  });
});
