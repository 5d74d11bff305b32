import { describe, expect, it } from 'vitest';
import { formatOfKey, InputFormat } from '../../src/normalize/normalizeRecords.js';

describe('formatOfKey', () => {
  it('maps .csv to CSV and .ndjson / .jsonl to NDJSON, case-insensitively', () => {
    expect(formatOfKey('incoming/orders.csv')).toBe(InputFormat.CSV);
    expect(formatOfKey('incoming/ORDERS.CSV')).toBe(InputFormat.CSV);
    expect(formatOfKey('a/b/readings.ndjson')).toBe(InputFormat.NDJSON);
    expect(formatOfKey('events.JsonL')).toBe(InputFormat.NDJSON);
  });

  it('reads the extension of the last path segment only, even in awkward keys', () => {
    expect(formatOfKey('incoming/2026 sales+returns/café münchen.csv')).toBe(InputFormat.CSV);
    expect(formatOfKey('incoming/data.csv/readme')).toBeUndefined();
    expect(formatOfKey('incoming/v1.2/orders.csv')).toBe(InputFormat.CSV);
  });

  it('accepts one .gz after a supported extension (.csv.gz, .ndjson.gz, .jsonl.gz)', () => {
    expect(formatOfKey('incoming/orders.csv.gz')).toBe(InputFormat.CSV);
    expect(formatOfKey('incoming/orders.CSV.GZ')).toBe(InputFormat.CSV);
    expect(formatOfKey('incoming/readings.ndjson.gz')).toBe(InputFormat.NDJSON);
    expect(formatOfKey('incoming/events.jsonl.gz')).toBe(InputFormat.NDJSON);
  });

  it('returns undefined (skip, not error) for unsupported extensions, archives and a bare .gz', () => {
    const keys = [
      'notes.txt',
      'orders.zip',
      'orders.gz',
      'orders.csv.gz.gz',
      'orders.json',
      'orders',
      'README.md',
      'orders.csv ',
      '.gz',
    ];
    for (const key of keys) {
      expect(formatOfKey(key), key).toBeUndefined();
    }
  });

  it('returns undefined for folder markers and bare dotfiles', () => {
    expect(formatOfKey('incoming/')).toBeUndefined();
    expect(formatOfKey('incoming/.csv')).toBeUndefined();
    expect(formatOfKey('')).toBeUndefined();
  });

  it('is not fooled by keys that look like Object.prototype members', () => {
    expect(formatOfKey('x.constructor')).toBeUndefined();
    expect(formatOfKey('x.__proto__')).toBeUndefined();
  });
});
