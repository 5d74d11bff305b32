import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FormatRegistry } from '../../src/normalize/formatRegistry.js';
import { csvFormat } from '../../src/normalize/formats/csv.js';
import { defaultFormats, SupportedExtensions } from '../../src/normalize/inputFormat.js';
import { normalizeRecords } from '../../src/normalize/normalizeRecords.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { tsvFormat } from '../fixtures/formats/tsv.js';

async function normalize(chunks: (string | Uint8Array)[], format: string, formats: FormatRegistry) {
  const output: string[] = [];
  const quarantine: string[] = [];
  const result = await normalizeRecords(
    chunks,
    format,
    {
      output: { write: (line) => void output.push(line) },
      quarantine: { write: (line) => void quarantine.push(line) },
    },
    { formats },
  );
  return { result, output, quarantine };
}

describe('input formats as a registry: a new format is one file and one registration', () => {
  const withTsv = defaultFormats.with(tsvFormat);

  it('a TSV format defined in the tests alone normalizes, quarantines and accounts like the built-in ones', async () => {
    const tsv = 'id\tname\n1\tAda\n\n2\n3\tGrace\n';
    const { result, output, quarantine } = await normalize([tsv.slice(0, 7), tsv.slice(7)], 'tsv', withTsv);
    expect(output).toEqual(['{"id":"1","name":"Ada"}', '{"id":"3","name":"Grace"}']);
    expect(quarantine).toEqual(['{"line":4,"reason":"expected 2 fields, got 1","raw":"2","truncated":false}']);
    expect(result).toEqual({ records: 2, quarantined: 1, header: 1, blank: 1, encoding: 'text' });
  });

  it('gets decoding for free: a gzipped TSV is decompressed by the content, whatever the name', async () => {
    const { result, output } = await normalize([gzipSync('a\tb\nx\ty\n')], 'tsv', withTsv);
    expect(output).toEqual(['{"a":"x","b":"y"}']);
    expect(result.encoding).toBe('gzip+utf-8');
  });

  it('selects by extension in the registry it was added to, and nowhere else', () => {
    expect(withTsv.formatOfKey('incoming/dt=2026-01-02/a.TSV.gz')).toBe('tsv');
    expect(withTsv.formatOfKey('incoming/a.tab')).toBe('tsv');
    expect(withTsv.formatOfKey('incoming/a.csv')).toBe('csv');
    expect(defaultFormats.formatOfKey('incoming/a.tsv')).toBeUndefined();
    expect(defaultFormats.names()).toEqual(['csv', 'ndjson']);
    expect(defaultFormats.extensions()).toEqual(SupportedExtensions);
  });

  it('the normalize worker reads the formats it is given, and skips the others with the list it knows', () => {
    const rule = { bucket: 'in', key: 'incoming/a.tsv', eventName: 'ObjectCreated:Put', size: 10 };
    expect(createNormalizeWorker({ outputBucket: 'out', formats: withTsv }).skipReason?.(rule)).toBeUndefined();
    expect(createNormalizeWorker({ outputBucket: 'out' }).skipReason?.(rule)).toBe(
      'unsupported file type (expected .csv, .ndjson or .jsonl, optionally gzipped as .gz)',
    );
  });

  it('an unknown format name is refused with the known ones; a name or an extension claimed twice is refused', async () => {
    await expect(normalize(['a'], 'tsv', defaultFormats)).rejects.toThrow(
      /Unknown input format "tsv": expected one of csv, ndjson/,
    );
    expect(() => defaultFormats.with(csvFormat)).toThrow(/"csv" is registered twice/);
    expect(() => new FormatRegistry([csvFormat, { ...tsvFormat, extensions: ['.csv'] }])).toThrow(
      /Extension \.csv is claimed by "csv" and "tsv"/,
    );
  });
});
