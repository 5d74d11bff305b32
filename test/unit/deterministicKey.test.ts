import { describe, expect, it } from 'vitest';
import { deterministicKey, legacyHashedKey, MAX_S3_KEY_BYTES } from '../../src/keys/deterministicKey.js';
import { dayOfRelativeKey } from '../../src/keys/partition.js';

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

  it('keeps the partition path of an overlong key, so the hashed output stays in its day', () => {
    const long = `incoming/dt=2026-11-30/${'x/'.repeat(300)}${'é'.repeat(300)}.csv`;
    const key = deterministicKey({ ...base, source: { bucket: 'in', key: long } });
    expect(key).toMatch(/^normalized\/in\/dt=2026-11-30\/_long\/[0-9a-f]{64}\.ndjson$/);
    expect(dayOfRelativeKey(key.slice('normalized/in/'.length))).toBe('2026-11-30');
    // Every leading name=value segment is a partition segment (Hive style).
    const hive = `incoming/dt=2026-11-30/region=eu/${'y'.repeat(1100)}.csv`;
    expect(deterministicKey({ ...base, source: { bucket: 'in', key: hive } })).toMatch(
      /^normalized\/in\/dt=2026-11-30\/region=eu\/_long\/[0-9a-f]{64}\.ndjson$/,
    );
  });

  it('falls back to the bucket root when even the partition path does not fit', () => {
    const key = deterministicKey({ ...base, source: { bucket: 'in', key: `incoming/k=${'v'.repeat(1100)}/a.csv` } });
    expect(key).toMatch(/^normalized\/in\/_long\/[0-9a-f]{64}\.ndjson$/);
  });

  it('names the pre-partition hashed key of an overlong input (legacyHashedKey), and nothing for other keys', () => {
    const long = `incoming/dt=2026-11-30/${'z'.repeat(1100)}.csv`;
    const options = { ...base, source: { bucket: 'in', key: long } };
    const current = deterministicKey(options);
    const legacy = legacyHashedKey(options);
    expect(legacy).toBe(`normalized/in/_long/${current.slice(-'.ndjson'.length - 64, -'.ndjson'.length)}.ndjson`);
    expect(legacyHashedKey({ ...base, source: { bucket: 'in', key: 'incoming/dt=2026-11-30/a.csv' } })).toBeUndefined();
    expect(
      legacyHashedKey({ ...base, source: { bucket: 'in', key: `incoming/${'z'.repeat(1100)}.csv` } }),
    ).toBeUndefined();
  });
});
