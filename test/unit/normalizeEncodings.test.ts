import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputFormat } from '../../src/normalize/normalizeRecords.js';
import { chunksOf, everySplit, normalizeChunks } from '../support/normalizeRun.js';

const CSV = 'Id,Näme\r\n1,Zoë 😀\r\n2,"a,b"\n';
const EXPECTED_OUTPUT = ['{"id":"1","näme":"Zoë 😀"}', '{"id":"2","näme":"a,b"}'];

function utf16(text: string, endian: 'le' | 'be'): Buffer {
  const le = Buffer.from(`\ufeff${text}`, 'utf16le');
  return endian === 'le' ? le : Buffer.from(le).swap16();
}

describe('normalizeRecords: encodings (UTF-16 with a BOM)', () => {
  for (const endian of ['le', 'be'] as const) {
    it(`decodes UTF-16 ${endian.toUpperCase()} with its BOM, split at every byte`, async () => {
      const bytes = utf16(CSV, endian);
      for (const chunks of everySplit(bytes)) {
        const run = await normalizeChunks(chunks, InputFormat.CSV);
        expect(run.output).toEqual(EXPECTED_OUTPUT);
        expect(run.result).toEqual({ records: 2, quarantined: 0, header: 1, blank: 0, encoding: `utf-16${endian}` });
      }
    });
  }

  it('rejects UTF-16 without a BOM as binary (NUL bytes), naming what to do', async () => {
    const run = await normalizeChunks([Buffer.from(CSV, 'utf16le')], InputFormat.CSV);
    expect(run.output).toEqual([]);
    expect(run.result.rejected).toMatch(/^binary content: NUL byte at offset 1 .*UTF-16 with a BOM/);
    expect(run.quarantine).toEqual([{ line: 1, reason: run.result.rejected, raw: '', truncated: false }]);
  });
});

describe('normalizeRecords: gzip, whatever the name', () => {
  it('decompresses gzip by its magic bytes, split at every byte of the compressed stream', async () => {
    const gz = gzipSync(Buffer.from(CSV));
    for (const chunks of everySplit(gz)) {
      const run = await normalizeChunks(chunks, InputFormat.CSV);
      expect(run.output).toEqual(EXPECTED_OUTPUT);
      expect(run.result).toEqual({ records: 2, quarantined: 0, header: 1, blank: 0, encoding: 'gzip+utf-8' });
    }
  });

  it('decompresses UTF-16 inside gzip, and concatenated gzip members', async () => {
    const inner = await normalizeChunks([gzipSync(utf16(CSV, 'le'))], InputFormat.CSV);
    expect(inner.output).toEqual(EXPECTED_OUTPUT);
    expect(inner.result.encoding).toBe('gzip+utf-16le');
    const members = Buffer.concat([gzipSync('{"a":1}\n'), gzipSync('{"b":2}\n')]);
    const run = await normalizeChunks(chunksOf(members, 5), InputFormat.NDJSON);
    expect(run.output).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('keeps the records before a truncation and quarantines the rest of the file once, at its line', async () => {
    const text = Array.from({ length: 2000 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(i % 50)}"}`).join('\n');
    const gz = gzipSync(Buffer.from(text));
    const cut = gz.subarray(0, Math.floor(gz.length / 2));
    const runs = await Promise.all(
      [1, 7, 4096].map((size) => normalizeChunks(chunksOf(cut, size), InputFormat.NDJSON)),
    );
    const [first] = runs;
    if (!first) throw new Error('no run');
    expect(first.result.rejected).toBe('gzip stream is truncated: the rest of the file could not be read');
    expect(first.result.records).toBeGreaterThan(100);
    expect(first.result.records).toBeLessThan(2000);
    // The unfinished last line is never output as if it were whole: it is the rest of the file.
    const rest = first.quarantine.at(-1);
    expect(rest).toEqual({ line: first.result.records + 1, reason: first.result.rejected, raw: '', truncated: false });
    expect(first.output.every((line) => JSON.parse(line).n >= 0)).toBe(true);
    for (const run of runs) expect(run).toEqual(first); // the same bytes, however chunked
  });

  it('names a corrupt gzip stream', async () => {
    const gz = gzipSync(Buffer.from(CSV));
    gz[12] = (gz[12] ?? 0) ^ 0xff;
    gz[13] = (gz[13] ?? 0) ^ 0xff;
    const run = await normalizeChunks([gz], InputFormat.CSV);
    expect(run.result.rejected).toMatch(/^gzip stream is (corrupt \(Z_[A-Z_]+\)|truncated)/);
    expect(run.quarantine.at(-1)?.reason).toBe(run.result.rejected);
  });

  it('stops a gzip bomb at a fixed byte bound, the same wherever the chunks fall', async () => {
    const bomb = gzipSync(Buffer.from(`id\n${'1\n'.repeat(500_000)}`)); // ~1 MB of rows from ~1 KB
    const options = { decode: { maxInflatedBytes: 10_000 } };
    const runs = await Promise.all(
      [3, 64, 65536].map((size) => normalizeChunks(chunksOf(bomb, size), InputFormat.CSV, options)),
    );
    const [first] = runs;
    if (!first) throw new Error('no run');
    expect(first.result.rejected).toBe(
      'gzip content exceeds 10000 bytes when decompressed (bomb guard: maxInflatedBytes)',
    );
    expect(first.result.records).toBe(4998); // 10,000 bytes: the header (3) and 4998 rows (2 each), then "1" cut
    for (const run of runs) expect(run).toEqual(first);
  });

  it('bounds the ratio of decompressed to stored size, with its own reason', async () => {
    const bomb = gzipSync(Buffer.from(`id\n${'1\n'.repeat(500_000)}`));
    const run = await normalizeChunks([bomb], InputFormat.CSV, {
      decode: { storedBytes: bomb.length, maxInflateRatio: 100, ratioFloorBytes: 1 },
    });
    expect(run.result.rejected).toBe(
      `gzip content expands more than 100x its stored ${bomb.length} bytes (bomb guard: maxInflateRatio)`,
    );
  });

  it('rethrows an error of the source itself (worth a retry), never classifying it as bad content', async () => {
    const gz = gzipSync(Buffer.from(CSV.repeat(1000)));
    async function* failing() {
      yield gz.subarray(0, 100);
      throw new Error('socket hang up');
    }
    await expect(normalizeChunks(failing(), InputFormat.CSV)).rejects.toThrow('socket hang up');
  });
});

describe('normalizeRecords: binary content is rejected with a named reason', () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ['a zip archive (or .xlsx)', Buffer.from('PK\x03\x04\x14\x00\x00\x00rest', 'latin1'), /zip archive/],
    ['a Parquet file', Buffer.from('PAR1\x15\x04\x15\x10', 'latin1'), /Parquet file/],
    ['a NUL byte early on', Buffer.from('id,name\n1,\x00\x00\n', 'latin1'), /NUL byte at offset 10/],
    ['a gzip inside a gzip', gzipSync(gzipSync('id\n1\n')), /gzip inside gzip/],
    ['a zip inside a gzip', gzipSync(Buffer.from('PK\x03\x04....', 'latin1')), /zip archive/],
    ['UTF-32 text', Buffer.from([0xff, 0xfe, 0, 0, 0x61, 0, 0, 0]), /UTF-32 LE/],
    ['a PNG image', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]), /PNG image/],
    ['bzip2 data', Buffer.from('BZh91AY&SY', 'latin1'), /bzip2/],
  ];
  it.each(cases)('%s', async (_, bytes, reason) => {
    for (const format of [InputFormat.CSV, InputFormat.NDJSON]) {
      const run = await normalizeChunks(chunksOf(bytes, 3), format);
      expect(run.output).toEqual([]);
      expect(run.result.rejected).toMatch(/^binary content: /);
      expect(run.result.rejected).toMatch(reason);
      expect(run.result).toMatchObject({ records: 0, quarantined: 1, header: 0, blank: 0 });
      expect(run.quarantine).toEqual([{ line: 1, reason: run.result.rejected, raw: '', truncated: false }]);
    }
  });

  it('reads a CSV whose header merely starts with PAR1 as text', async () => {
    const run = await normalizeChunks([Buffer.from('PAR1,PAR2\n1,2\n')], InputFormat.CSV);
    expect(run.output).toEqual(['{"par1":"1","par2":"2"}']);
    expect(run.result.rejected).toBeUndefined();
  });
});
