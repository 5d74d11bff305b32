import { createReadStream, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  formatOfKey,
  type NormalizeResult,
  normalizeRecords,
  type QuarantineEntry,
} from '../../src/normalize/normalizeRecords.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

/** What each sample file demonstrates (examples/README.md); `skip` = unsupported extension. */
const EXPECTED: Record<string, NormalizeResult | 'skip'> = {
  'orders.csv': { records: 12, quarantined: 0, header: 1, blank: 0, encoding: 'utf-8' },
  'sensor-readings.ndjson': { records: 8, quarantined: 0, header: 0, blank: 0, encoding: 'utf-8' },
  'orders-with-bad-rows.csv': { records: 3, quarantined: 4, header: 1, blank: 1, encoding: 'utf-8' },
  'events-with-bad-lines.jsonl': { records: 4, quarantined: 5, header: 0, blank: 1, encoding: 'utf-8' },
  '2026 sales+returns/café münchen.csv': { records: 5, quarantined: 0, header: 1, blank: 0, encoding: 'utf-8' },
  'duplicate-header.csv': {
    records: 0,
    quarantined: 3,
    header: 1,
    blank: 0,
    encoding: 'utf-8',
    unusableHeader: 'unusable header: columns 2 and 3 both normalize to "name"',
  },
  'latin1-export.csv': { records: 2, quarantined: 0, header: 1, blank: 0, encoding: 'utf-8' },
  'empty.csv': { records: 0, quarantined: 0, header: 0, blank: 0, encoding: 'utf-8' },
  'dt=2026-03-01/orders.csv': { records: 4, quarantined: 0, header: 1, blank: 0, encoding: 'utf-8' },
  'dt=2026-03-02/orders.csv': { records: 3, quarantined: 0, header: 1, blank: 0, encoding: 'utf-8' },
  'dt=2026-03-02/readings.ndjson': { records: 3, quarantined: 0, header: 0, blank: 0, encoding: 'utf-8' },
  'dt=2026-03-03/orders.csv': { records: 2, quarantined: 1, header: 1, blank: 0, encoding: 'utf-8' },
  'notes.txt': 'skip',
  'README.md': 'skip',
};

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** Runs one sample as the worker would: a Node Readable (like an S3 GetObject Body) with small chunks. */
async function normalizeFile(relativePath: string, highWaterMark: number) {
  const format = formatOfKey(`incoming/${relativePath}`);
  if (format === undefined) return 'skip' as const;
  const output: unknown[] = [];
  const quarantine: QuarantineEntry[] = [];
  const result = await normalizeRecords(createReadStream(join(EXAMPLES, relativePath), { highWaterMark }), format, {
    output: { write: (line) => void output.push(JSON.parse(line)) },
    quarantine: { write: (line) => void quarantine.push(JSON.parse(line) as QuarantineEntry) },
  });
  return { result, output, quarantine };
}

const files = listFiles(EXAMPLES)
  .map((file) => relative(EXAMPLES, file).split(sep).join('/'))
  .sort();

describe('examples/', () => {
  it('has an expected outcome for every sample file, and a file for every expectation', () => {
    expect(files).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(files)('%s gives its documented counts, whatever the chunk size', async (file) => {
    const big = await normalizeFile(file, 64 * 1024);
    const small = await normalizeFile(file, 7);
    expect(big === 'skip' ? 'skip' : big.result).toEqual(EXPECTED[file]);
    expect(small).toEqual(big);
  });

  it('orders-with-bad-rows.csv quarantines each bad row with the line where it starts', async () => {
    const run = await normalizeFile('orders-with-bad-rows.csv', 64 * 1024);
    if (run === 'skip') throw new Error('unexpected skip');
    expect(run.quarantine.map((q) => [q.line, q.reason])).toEqual([
      [3, 'expected 5 fields, got 4'],
      [4, 'expected 5 fields, got 6'],
      [8, 'unexpected text after the closing quote of field 2'],
      [10, 'unterminated quoted field at end of input'],
    ]);
    expect(run.output).toContainEqual(expect.objectContaining({ customer: 'Note: "fragile"\nhandle with care' }));
  });

  it('café münchen.csv loses its BOM, normalizes its header and keeps a quoted CRLF', async () => {
    const run = await normalizeFile('2026 sales+returns/café münchen.csv', 64 * 1024);
    if (run === 'skip') throw new Error('unexpected skip');
    expect(Object.keys(run.output[0] as object)).toEqual([
      'datum',
      'filiale',
      'artikel_nr',
      'menge_stück',
      'preis',
      'bemerkung',
    ]);
    expect(run.output[2]).toMatchObject({ menge_stück: '7', bemerkung: 'Mehrzeilige\r\nNotiz' });
  });

  it('latin1-export.csv decodes invalid UTF-8 bytes to U+FFFD', async () => {
    const run = await normalizeFile('latin1-export.csv', 64 * 1024);
    if (run === 'skip') throw new Error('unexpected skip');
    expect(run.output[0]).toEqual({ kunde: 'J\ufffdrgen Gro\ufffd', stadt: 'K\ufffdln', umsatz: '1200' });
  });
});
