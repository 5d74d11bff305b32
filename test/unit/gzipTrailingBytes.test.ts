import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputFormat } from '../../src/normalize/normalizeRecords.js';
import { chunksOf, normalizeChunks } from '../support/normalizeRun.js';

const ROWS = Array.from({ length: 100 }, (_, i) => `{"n":${i}}`);
const NDJSON = `${ROWS.join('\n')}\n`;

describe('normalizeRecords: gzip followed by bytes that are not gzip', () => {
  it('keeps every row of a complete member followed by stray bytes and names how many were ignored, however chunked', async () => {
    const gz = Buffer.concat([gzipSync(NDJSON), Buffer.from([0x0a, 0x42, 0x43])]);
    for (const size of [1, 7, 64, gz.length]) {
      const run = await normalizeChunks(chunksOf(gz, size), InputFormat.NDJSON);
      expect(run.output, `chunks of ${size}`).toEqual(ROWS);
      expect(run.result.records).toBe(100);
      expect(run.result.rejected).toBe(
        '3 trailing bytes after the gzip data ignored (not a gzip member; gzip -d warns likewise): every row before them was read',
      );
      // One quarantine entry, after the last row, says so.
      expect(run.quarantine).toEqual([{ line: 101, reason: run.result.rejected, raw: '', truncated: false }]);
    }
  });

  it('reads every member of a multi-member gzip, skips zero padding between and after them, and then names stray bytes', async () => {
    const half = ROWS.length / 2;
    const first = gzipSync(`${ROWS.slice(0, half).join('\n')}\n`);
    const second = gzipSync(`${ROWS.slice(half).join('\n')}\n`);
    const padded = Buffer.concat([first, Buffer.alloc(16), second, Buffer.alloc(5)]);
    const clean = await normalizeChunks(chunksOf(padded, 11), InputFormat.NDJSON);
    expect(clean.output).toEqual(ROWS);
    expect(clean.result.rejected).toBeUndefined();
    const stray = await normalizeChunks(
      chunksOf(Buffer.concat([first, second, Buffer.from('junk!')]), 13),
      InputFormat.NDJSON,
    );
    expect(stray.output).toEqual(ROWS);
    expect(stray.result.rejected).toMatch(/^5 trailing bytes after the gzip data ignored/);
  });

  it('still refuses a member whose trailer does not match its data (CRC-32), as corrupt', async () => {
    const gz = Buffer.from(gzipSync(NDJSON));
    gz.writeUInt32LE((gz.readUInt32LE(gz.length - 8) ^ 1) >>> 0, gz.length - 8);
    const run = await normalizeChunks(chunksOf(gz, 32), InputFormat.NDJSON);
    expect(run.result.rejected).toBe('gzip stream is corrupt (Z_DATA_ERROR): the rest of the file could not be read');
  });
});
