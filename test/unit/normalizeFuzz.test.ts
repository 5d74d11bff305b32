import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputFormat, normalizeRecords } from '../../src/normalize/normalizeRecords.js';
import { cuts, splitAt } from '../support/hostileCsv.js';
import { everySplit, type NormalizeRun, normalizeChunks } from '../support/normalizeRun.js';

const FUZZ_RUNS = 1000;
const FORMATS = [InputFormat.CSV, InputFormat.NDJSON] as const;

/** What must hold for any input at all: the sinks agree with the counts, and every output line is an object. */
function expectWellFormed(run: NormalizeRun): void {
  expect(run.result.records).toBe(run.output.length);
  expect(run.result.quarantined).toBe(run.quarantine.length);
  for (const line of run.output) {
    const value: unknown = JSON.parse(line);
    expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
  }
  for (const entry of run.quarantine) {
    expect(entry.line).toBeGreaterThanOrEqual(1);
    expect(typeof entry.reason).toBe('string');
    expect(entry.reason.length).toBeGreaterThan(0);
  }
  if (run.result.rejected !== undefined) expect(run.quarantine.at(-1)?.reason).toBe(run.result.rejected);
}

/** Bytes that are mostly text, so that the fuzzer gets past the binary sniffing into the parsers. */
const textish = fc
  .array(
    fc.oneof(
      fc.constantFrom(...'{}[]",:\\ \t\r\nab1é'.split('').map((c) => Buffer.from(c))),
      fc.uint8Array({ minLength: 1, maxLength: 4 }),
    ),
    { maxLength: 300 },
  )
  .map((parts) => new Uint8Array(Buffer.concat(parts)));

describe('normalizer fuzz: no input makes it throw', () => {
  it('random bytes, random chunking, both formats', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .oneof(fc.uint8Array({ maxLength: 3000 }), textish)
          .chain((bytes) =>
            fc.record({ bytes: fc.constant(bytes), points: cuts(bytes.length), format: fc.constantFrom(...FORMATS) }),
          ),
        async ({ bytes, points, format }) => {
          const run = await normalizeChunks(splitAt(bytes, points), format, { maxRecordBytes: 512 });
          expectWellFormed(run);
          // And the chunking never matters.
          expect(await normalizeChunks([bytes], format, { maxRecordBytes: 512 })).toEqual(run);
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('every NDJSON line of mostly-text input is counted once: records + quarantined + blank = physical lines', async () => {
    await fc.assert(
      fc.asyncProperty(textish, async (bytes) => {
        const run = await normalizeChunks([bytes], InputFormat.NDJSON);
        fc.pre(run.result.rejected === undefined);
        // Count the lines of the text as the normalizer decoded it: `FF FE` is a UTF-16 BOM, not two
        // bad UTF-8 bytes (the input [255, 254] has no line at all).
        const { encoding } = run.result;
        fc.pre(encoding === 'utf-8' || encoding === 'utf-16le' || encoding === 'utf-16be');
        const text = new TextDecoder(encoding).decode(bytes);
        const lines = text === '' ? [] : text.split(/\r\n|\r|\n/);
        if (lines.at(-1) === '') lines.pop();
        expect(run.result.records + run.result.quarantined + run.result.blank).toBe(lines.length);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('random bytes behind gzip magic, and gzipped random bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 2000 }),
        fc.boolean(),
        fc.constantFrom(...FORMATS),
        async (bytes, wrap, format) => {
          const input = wrap ? gzipSync(bytes) : Buffer.concat([Buffer.from([0x1f, 0x8b]), bytes]);
          const run = await normalizeChunks([input], format);
          expectWellFormed(run);
          if (!wrap) expect(run.result.rejected).toMatch(/^gzip stream is (corrupt|truncated)/);
        },
      ),
      { numRuns: FUZZ_RUNS / 2 },
    );
  });
});

describe('normalizer fuzz: structured hostile records stay per record', () => {
  it('an NDJSON line nested 10,000 levels deep is quarantined by name; the rest of the file is written', async () => {
    const deep = `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const deepObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const flatButLong = `{"s":"${'['.repeat(10_000)}"}`;
    const text = ['{"ok":1}', deep, deepObject, flatButLong, '{"ok":2}'].join('\n');
    const run = await normalizeChunks([Buffer.from(text)], InputFormat.NDJSON);
    expect(run.output).toEqual(['{"ok":1}', flatButLong, '{"ok":2}']);
    expect(run.quarantine.map((q) => [q.line, q.reason, q.truncated])).toEqual([
      [2, 'nested deeper than 1000 levels', true],
      [3, 'nested deeper than 1000 levels', true],
    ]);
  });

  it('nesting exactly at the limit is kept', async () => {
    const atLimit = `${'['.repeat(999)}${']'.repeat(999)}`;
    const run = await normalizeChunks([Buffer.from(`{"a":${atLimit}}\n`)], InputFormat.NDJSON);
    expect(run.result).toMatchObject({ records: 1, quarantined: 0 });
  });

  it('huge fields: a 3 MiB CSV field and NDJSON line are quarantined as oversized; the next records are read', async () => {
    const huge = 'x'.repeat(3 * 1024 * 1024);
    const csv = await normalizeChunks([Buffer.from(`id,v\n1,${huge}\n2,ok\n`)], InputFormat.CSV);
    expect(csv.output).toEqual(['{"id":"2","v":"ok"}']);
    expect(csv.quarantine.map((q) => [q.line, q.reason])).toEqual([[2, 'record exceeds 1 MiB']]);
    const ndjson = await normalizeChunks([Buffer.from(`{"v":"${huge}"}\n{"v":2}\n`)], InputFormat.NDJSON);
    expect(ndjson.output).toEqual(['{"v":2}']);
    expect(ndjson.quarantine[0]?.reason).toBe('record exceeds 1 MiB');
  });

  it('control characters in fields come out as JSON escapes (a NUL after the sniffed head too)', async () => {
    const controls = Array.from({ length: 32 }, (_, c) => String.fromCharCode(c))
      .filter((c) => c !== '\n' && c !== '\r')
      .join('');
    const padding = `${'p,q\n'.repeat(3000)}`; // pushes the fields past the first 8 KiB that are sniffed
    const csv = await normalizeChunks([Buffer.from(`a,b\n${padding}"${controls}",x\u007f\n`)], InputFormat.CSV);
    expect(csv.result).toMatchObject({ records: 3001, quarantined: 0 });
    expect(JSON.parse(csv.output.at(-1) ?? '{}')).toEqual({ a: controls.trim(), b: 'x\u007f' });
    const ndjson = await normalizeChunks(
      [Buffer.from(`${'{}\n'.repeat(3000)}${JSON.stringify({ c: controls })}\n`)],
      InputFormat.NDJSON,
    );
    expect(JSON.parse(ndjson.output.at(-1) ?? '{}')).toEqual({ c: controls });
  });

  it('invalid UTF-8 becomes U+FFFD, the same wherever the chunks fall', async () => {
    const invalid = [[0x80], [0xbf], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf5, 0x80], [0xff], [0xe2, 0x82]];
    const parts = [Buffer.from('id,v\n')];
    for (const [i, seq] of invalid.entries()) parts.push(Buffer.from(`${i},a`), Buffer.from(seq), Buffer.from('b\n'));
    const bytes = Buffer.concat(parts);
    const whole = await normalizeChunks([bytes], InputFormat.CSV);
    expect(whole.result).toMatchObject({ records: invalid.length, quarantined: 0 });
    for (const line of whole.output) expect(JSON.parse(line).v).toMatch(/^a\ufffd+b$/);
    for (const chunks of everySplit(bytes)) expect(await normalizeChunks(chunks, InputFormat.CSV)).toEqual(whole);
  });

  it('lone surrogates in string input are escaped, not a crash', async () => {
    const run = await normalizeChunks(['id,v\n1,\ud800x\n2,y\udc00\n'], InputFormat.CSV);
    expect(run.output).toEqual(['{"id":"1","v":"\\ud800x"}', '{"id":"2","v":"y\\udc00"}']);
  });

  it('a failing sink is NOT a record failure: its error propagates (the file is retried, no row is lost)', async () => {
    const failing = {
      output: {
        write: () => {
          throw new Error('S3 upload failed');
        },
      },
      quarantine: { write: () => {} },
    };
    await expect(normalizeRecords([Buffer.from('{"a":1}\n')], InputFormat.NDJSON, failing)).rejects.toThrow(
      'S3 upload failed',
    );
  });
});
