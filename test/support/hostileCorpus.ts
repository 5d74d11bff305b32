import { gzipSync } from 'node:zlib';
import { expect } from 'vitest';

/**
 * The hostile corpus: what a hostile or unlucky world uploads, generated here (nothing is stored in
 * the repository), each file with the classified outcome the reference worker must give it. It runs
 * through the real pipeline (S3 upload -> notification -> SQS -> local runner -> worker -> S3) in
 * test/e2e/hostileCorpus.test.ts.
 */

/** The outcome a corpus file must have. */
export interface CorpusExpectation {
  readonly status: 'processed' | 'skipped';
  /** Matched against the outcome line's reason. */
  readonly reason?: RegExp;
  /** The summary stored with the output (metadata `rerun-x-*`), as S3 returns it: strings. */
  readonly summary?: Readonly<Record<string, string | RegExp>>;
  /** `[line, reason]` of the quarantine entries; a RegExp for reasons that name details. */
  readonly quarantine?: readonly (readonly [number, string | RegExp])[];
  /** Checks on the output lines, parsed. */
  readonly output?: (lines: readonly unknown[]) => void;
}

/** One uploaded file of the corpus. */
export interface CorpusFile {
  /** What the case is about, for the test name. */
  readonly name: string;
  /** Key under the input prefix (`incoming/` is added). */
  readonly key: string;
  readonly body: Uint8Array;
  readonly expected: CorpusExpectation;
}

const DAY = 'dt=2026-11-30';

/** A key (relative to `incoming/`) whose output key would pass S3's 1,024 bytes: it is hashed. */
export const OVERLONG_KEY = `${DAY}/${'long-name-'.repeat(98)}.csv`;
const text = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const utf16 = (s: string, endian: 'le' | 'be') => {
  const le = Buffer.from(`\ufeff${s}`, 'utf16le');
  return new Uint8Array(endian === 'le' ? le : Buffer.from(le).swap16());
};
const ORDERS = 'id,name,amount\n1,Ada,10\n2,Zoë,7\n3,"Smith, J",1\n';
const counts = (records: number, quarantined: number, header: number, blank: number) => ({
  records: String(records),
  quarantined: String(quarantined),
  header: String(header),
  blank: String(blank),
});

/** A deterministic byte generator (a linear congruential PRNG), so the corpus is the same on every run. */
function seededBytes(seed: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = seed >>> 0;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

/**
 * Every file of the corpus with its expected outcome.
 *
 * @example
 * for (const file of hostileCorpus()) await upload(clients, bucket, `incoming/${file.key}`, file.body);
 */
export function hostileCorpus(): CorpusFile[] {
  const truncatedGzip = gzipSync(
    Buffer.from(Array.from({ length: 3000 }, (_, i) => `{"n":${i},"p":"${'x'.repeat(i % 40)}"}`).join('\n')),
  );
  const corruptGzip = Buffer.from(gzipSync(Buffer.from(ORDERS.repeat(50))));
  corruptGzip.fill(0x55, 20, 40);
  const deep = `{"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
  const controls = Array.from({ length: 32 }, (_, c) => String.fromCharCode(c))
    .filter((c) => c !== '\n' && c !== '\r' && c !== '\0')
    .join('');
  const randomWithNul = seededBytes(42, 4096);
  randomWithNul[100] = 0;

  return [
    // Line terminators.
    {
      name: 'a classic Mac OS CSV (lone CR line endings, "CSV (Macintosh)")',
      key: `${DAY}/mac-export.csv`,
      body: text(ORDERS.replace(/\n/g, '\r')),
      expected: { status: 'processed', summary: counts(3, 0, 1, 0) },
    },
    {
      name: 'a header ending in CR followed by LF rows',
      key: `${DAY}/header-cr.csv`,
      body: text('id,name\r1,Ada\n2,Bob\n'),
      expected: { status: 'processed', summary: counts(2, 0, 1, 0) },
    },
    {
      name: 'every terminator mixed, with a quoted CRLF and blank lines of each kind',
      key: `${DAY}/mixed-terminators.csv`,
      body: text('id,note\r\n1,"two\r\nlines"\r\r2,b\n\n3,c\r'),
      expected: {
        status: 'processed',
        summary: counts(3, 0, 1, 2),
        output: (lines) => expect(lines[0]).toEqual({ id: '1', note: 'two\r\nlines' }),
      },
    },
    // Encodings.
    {
      name: 'UTF-16 LE with a BOM (Excel "Unicode Text")',
      key: `${DAY}/utf16le.csv`,
      body: utf16(ORDERS, 'le'),
      expected: {
        status: 'processed',
        summary: { ...counts(3, 0, 1, 0), encoding: 'utf-16le' },
        output: (lines) => expect(lines[1]).toEqual({ id: '2', name: 'Zoë', amount: '7' }),
      },
    },
    {
      name: 'UTF-16 BE with a BOM',
      key: `${DAY}/utf16be.ndjson`,
      body: utf16('{"a":"ü"}\r\n{"b":2}\r\n', 'be'),
      expected: { status: 'processed', summary: { ...counts(2, 0, 0, 0), encoding: 'utf-16be' } },
    },
    {
      name: 'UTF-16 without a BOM: NUL bytes, rejected by name, never garbage records',
      key: `${DAY}/utf16-no-bom.csv`,
      body: new Uint8Array(Buffer.from(ORDERS, 'utf16le')),
      expected: {
        status: 'processed',
        summary: { ...counts(0, 1, 0, 0), rejected: /^binary content: NUL byte at offset 1 / },
        quarantine: [[1, /^binary content: NUL byte/]],
      },
    },
    {
      name: 'a UTF-8 BOM only',
      key: `${DAY}/bom-only.csv`,
      body: text('\ufeff'),
      expected: { status: 'processed', summary: counts(0, 0, 0, 0) },
    },
    {
      name: 'Latin-1 bytes (invalid UTF-8) become U+FFFD, visibly',
      key: `${DAY}/latin1.csv`,
      body: new Uint8Array(Buffer.from('id,name\n1,J\xfcrgen\n', 'latin1')),
      expected: {
        status: 'processed',
        summary: counts(1, 0, 1, 0),
        output: (lines) => expect(lines[0]).toEqual({ id: '1', name: 'J\ufffdrgen' }),
      },
    },
    // Containers.
    {
      name: 'gzip named .csv (decompressed by its magic bytes)',
      key: `${DAY}/secretly-gzip.csv`,
      body: new Uint8Array(gzipSync(ORDERS)),
      expected: { status: 'processed', summary: { ...counts(3, 0, 1, 0), encoding: 'gzip+utf-8' } },
    },
    {
      name: '.csv.gz',
      key: `${DAY}/orders.csv.gz`,
      body: new Uint8Array(gzipSync(ORDERS)),
      expected: { status: 'processed', summary: { ...counts(3, 0, 1, 0), format: 'csv', encoding: 'gzip+utf-8' } },
    },
    {
      name: '.jsonl.gz of UTF-16',
      key: `${DAY}/events.jsonl.gz`,
      body: new Uint8Array(gzipSync(utf16('{"a":1}\n{"b":2}\n', 'le'))),
      expected: { status: 'processed', summary: { ...counts(2, 0, 0, 0), encoding: 'gzip+utf-16le' } },
    },
    {
      name: '.ndjson.gz cut short: the records before stand, the rest is one quarantine line',
      key: `${DAY}/truncated.ndjson.gz`,
      body: new Uint8Array(truncatedGzip.subarray(0, Math.floor(truncatedGzip.length / 2))),
      expected: {
        status: 'processed',
        summary: { quarantined: '1', rejected: 'gzip stream is truncated: the rest of the file could not be read' },
      },
    },
    {
      name: 'a whole gzip member then 3 stray bytes: every row stands, one quarantine line names the bytes ignored',
      key: `${DAY}/trailing-bytes.ndjson.gz`,
      body: new Uint8Array(
        Buffer.concat([gzipSync(Array.from({ length: 100 }, (_, i) => `{"n":${i}}\n`).join('')), Buffer.from('\nBC')]),
      ),
      expected: {
        status: 'processed',
        summary: {
          records: '100',
          quarantined: '1',
          rejected: /^3 trailing bytes after the gzip data ignored \(not a gzip member; gzip -d warns likewise\)/,
        },
      },
    },
    {
      name: 'a corrupt gzip stream',
      key: `${DAY}/corrupt.csv.gz`,
      body: new Uint8Array(corruptGzip),
      expected: { status: 'processed', summary: { rejected: /^gzip stream is (corrupt \(Z_\w+\)|truncated)/ } },
    },
    {
      name: 'a gzip of NUL bytes (the classic bomb) stops after the sniffed head',
      key: `${DAY}/bomb.csv.gz`,
      body: new Uint8Array(gzipSync(Buffer.alloc(8 * 1024 * 1024))),
      expected: {
        status: 'processed',
        summary: { ...counts(0, 1, 0, 0), rejected: /^binary content: NUL byte at offset 0/ },
      },
    },
    {
      name: 'a gzip inside a gzip',
      key: `${DAY}/double.csv.gz`,
      body: new Uint8Array(gzipSync(gzipSync(ORDERS))),
      expected: { status: 'processed', summary: { ...counts(0, 1, 0, 0), rejected: /gzip inside gzip/ } },
    },
    // Binary content under a text name.
    {
      name: 'an .xlsx (zip) saved as .csv',
      key: `${DAY}/spreadsheet.csv`,
      body: new Uint8Array(Buffer.concat([Buffer.from('PK\x03\x04\x14\x00\x06\x00', 'latin1'), seededBytes(1, 500)])),
      expected: {
        status: 'processed',
        summary: { ...counts(0, 1, 0, 0), rejected: /zip archive/ },
        quarantine: [[1, /zip archive/]],
      },
    },
    {
      name: 'a Parquet file named .ndjson',
      key: `${DAY}/table.ndjson`,
      body: new Uint8Array(
        Buffer.concat([Buffer.from('PAR1\x15\x04\x15\xa0', 'latin1'), seededBytes(2, 300), Buffer.from('PAR1')]),
      ),
      expected: { status: 'processed', summary: { ...counts(0, 1, 0, 0), rejected: 'binary content: Parquet file' } },
    },
    {
      name: 'a PDF named .csv',
      key: `${DAY}/invoice.csv`,
      body: text('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n'),
      expected: { status: 'processed', summary: { rejected: 'binary content: PDF document' } },
    },
    {
      name: 'random bytes with a NUL early on',
      key: `${DAY}/random.csv`,
      body: randomWithNul,
      expected: { status: 'processed', summary: { ...counts(0, 1, 0, 0), rejected: /^binary content: / } },
    },
    {
      name: 'a .zip by name',
      key: `${DAY}/archive.zip`,
      body: new Uint8Array(Buffer.from('PK\x05\x06', 'latin1')),
      expected: { status: 'skipped', reason: /unsupported file type/ },
    },
    // Records that must stay per record.
    {
      name: 'an NDJSON line nested 10,000 levels deep between valid lines',
      key: `${DAY}/deep.ndjson`,
      body: text(`{"ok":1}\n${deep}\n{"ok":2}\n`),
      expected: {
        status: 'processed',
        summary: counts(2, 1, 0, 0),
        quarantine: [[2, 'nested deeper than 1000 levels']],
      },
    },
    {
      name: 'a 2 MiB CSV field, then a good row',
      key: `${DAY}/huge-field.csv`,
      body: text(`id,v\n1,${'x'.repeat(2 * 1024 * 1024)}\n2,ok\n`),
      expected: { status: 'processed', summary: counts(1, 1, 1, 0), quarantine: [[2, 'record exceeds 1 MiB']] },
    },
    {
      name: 'a 2 MiB file without a single line break',
      key: `${DAY}/one-line.ndjson`,
      body: text(`{"v":"${'y'.repeat(2 * 1024 * 1024)}"}`),
      expected: { status: 'processed', summary: counts(0, 1, 0, 0), quarantine: [[1, 'record exceeds 1 MiB']] },
    },
    {
      name: 'control characters in fields (past the sniffed head)',
      key: `${DAY}/controls.csv`,
      body: text(`a,b\n${'p,q\n'.repeat(2100)}"${controls}",x\n`),
      expected: {
        status: 'processed',
        summary: counts(2101, 0, 1, 0),
        output: (lines) => expect(lines.at(-1)).toEqual({ a: controls.trim(), b: 'x' }),
      },
    },
    {
      name: 'NDJSON lines that are not objects',
      key: `${DAY}/not-objects.jsonl`,
      body: text('[1]\n42\n"s"\nnull\n{"ok":true}\n{"broken":\n'),
      expected: {
        status: 'processed',
        summary: counts(1, 5, 0, 0),
        quarantine: [
          [1, 'expected a JSON object, got array'],
          [2, 'expected a JSON object, got number'],
          [3, 'expected a JSON object, got string'],
          [4, 'expected a JSON object, got null'],
          [6, 'invalid JSON'],
        ],
      },
    },
    // Files with nothing, or only structure, in them.
    {
      name: 'a header-only CSV',
      key: `${DAY}/header-only.csv`,
      body: text('id,name\r\n'),
      expected: { status: 'processed', summary: counts(0, 0, 1, 0) },
    },
    {
      name: 'only blank lines',
      key: `${DAY}/blank.ndjson`,
      body: text('\n \r\n\t\r\n'),
      expected: { status: 'processed', summary: counts(0, 0, 0, 3) },
    },
    {
      name: 'a header whose names collide after normalization',
      key: `${DAY}/duplicate-header.csv`,
      body: text('Name,NAME\nA,B\nC,D\n'),
      expected: {
        status: 'processed',
        summary: counts(0, 2, 1, 0),
        quarantine: [
          [2, 'unusable header: columns 1 and 2 both normalize to "name"'],
          [3, 'unusable header: columns 1 and 2 both normalize to "name"'],
        ],
      },
    },
    {
      name: 'an unterminated quote swallowing the end of the file',
      key: `${DAY}/open-quote.csv`,
      body: text('id,v\n1,ok\n2,"never closed\n3,x\n'),
      expected: {
        status: 'processed',
        summary: counts(1, 1, 1, 0),
        quarantine: [[3, 'unterminated quoted field at end of input']],
      },
    },
    // Awkward keys.
    {
      name: 'a key with spaces, plus signs, percent signs and non-ASCII',
      key: `${DAY}/50% off+more/café münchen (1).CSV`,
      body: text(ORDERS),
      expected: { status: 'processed', summary: counts(3, 0, 1, 0) },
    },
    {
      name: 'a key so long that its output key is hashed: the hash stays in its day (dt=D/_long/)',
      key: OVERLONG_KEY,
      body: text(ORDERS),
      expected: { status: 'processed', summary: counts(3, 0, 1, 0) },
    },
    {
      name: 'a folder marker',
      key: `${DAY}/folder/`,
      body: new Uint8Array(0),
      expected: { status: 'skipped', reason: /folder marker/ },
    },
  ];
}
