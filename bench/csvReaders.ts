import { parse } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { CsvRecordReader } from '../src/normalize/csvParser.js';

/** rerun's CSV reader against csv-parse, the reader most Node.js projects take, on the same text. */
export interface CsvReaderComparison {
  readonly inputBytes: number;
  readonly records: number;
  /** Median MiB of input per CPU second (user + system) of `CsvRecordReader`. */
  readonly rerunMibPerCpuSecond: number;
  /** The same for csv-parse's streaming parser (`parse()`, default options, text pushed in 64 KiB pieces). */
  readonly csvParseMibPerCpuSecond: number;
  /** rerun / csv-parse. */
  readonly speedup: number;
  /**
   * What each reader returns for {@link BAD_THEN_VALID}: rerun quarantines the bad record and keeps the
   * valid ones after it; csv-parse throws, and with `skip_records_with_error` drops the valid rows too.
   */
  readonly validRowsKept: { readonly rerun: number; readonly csvParse: number; readonly expected: number };
}

/** A record with text after its closing quote, then two valid records. */
export const BAD_THEN_VALID = 'id,name\n1,"Smith"x\n2,Lee\n3,Kim\n';

const PIECE_CHARS = 64 * 1024;

/**
 * Parses the same generated CSV (about `bytes` bytes, quoted fields with commas, every 50th row short)
 * with both readers, `repeats` times each, alternating, and takes the median CPU throughput of each.
 *
 * @example
 * const comparison = await compareCsvReaders({ bytes: 32 * 1024 ** 2, repeats: 5 });
 */
export async function compareCsvReaders(options: {
  readonly bytes: number;
  readonly repeats: number;
  readonly log?: (line: string) => void;
}): Promise<CsvReaderComparison> {
  const text = generateCsv(options.bytes);
  const inputBytes = Buffer.byteLength(text);
  const pieces: string[] = [];
  for (let offset = 0; offset < text.length; offset += PIECE_CHARS)
    pieces.push(text.slice(offset, offset + PIECE_CHARS));
  const rerunRuns: number[] = [];
  const csvParseRuns: number[] = [];
  let records = 0;
  for (let i = 0; i < options.repeats; i++) {
    const rerun = await cpuSeconds(async () => readWithRerun(pieces));
    const theirs = await cpuSeconds(async () => readWithCsvParse(pieces));
    if (rerun.value !== theirs.value) {
      throw new Error(`csv readers disagree on the record count: rerun ${rerun.value}, csv-parse ${theirs.value}`);
    }
    records = rerun.value;
    rerunRuns.push(inputBytes / 1024 ** 2 / rerun.seconds);
    csvParseRuns.push(inputBytes / 1024 ** 2 / theirs.seconds);
  }
  const rerunMibPerCpuSecond = round(median(rerunRuns));
  const csvParseMibPerCpuSecond = round(median(csvParseRuns));
  const result: CsvReaderComparison = {
    inputBytes,
    records,
    rerunMibPerCpuSecond,
    csvParseMibPerCpuSecond,
    speedup: round(rerunMibPerCpuSecond / csvParseMibPerCpuSecond),
    validRowsKept: {
      rerun: validRowsWithRerun(BAD_THEN_VALID),
      csvParse: validRowsWithCsvParse(BAD_THEN_VALID),
      expected: 2,
    },
  };
  options.log?.(
    `csv: rerun ${result.rerunMibPerCpuSecond} MiB/CPU s, csv-parse ${result.csvParseMibPerCpuSecond} MiB/CPU s (${result.speedup}x); valid rows kept after a bad one: rerun ${result.validRowsKept.rerun}, csv-parse ${result.validRowsKept.csvParse} of ${result.validRowsKept.expected}`,
  );
  return result;
}

/** Valid data rows (not the header) that `CsvRecordReader` returns for `text`. */
export function validRowsWithRerun(text: string): number {
  const reader = new CsvRecordReader();
  reader.push(text);
  reader.end();
  let valid = 0;
  for (let record = reader.nextRecord(), index = 0; record; record = reader.nextRecord(), index++) {
    if (index > 0 && record.problem === undefined) valid++;
  }
  return valid;
}

/** Valid data rows csv-parse returns for `text`: it throws by default, so with `skip_records_with_error`. */
export function validRowsWithCsvParse(text: string): number {
  return parseSync(text, { skip_records_with_error: true }).length - 1;
}

function readWithRerun(pieces: readonly string[]): number {
  const reader = new CsvRecordReader();
  let count = 0;
  for (const piece of pieces) {
    reader.push(piece);
    while (reader.nextRecord()) count++;
  }
  reader.end();
  while (reader.nextRecord()) count++;
  return count;
}

function readWithCsvParse(pieces: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let count = 0;
    const parser = parse({ relax_column_count: true });
    parser.on('readable', () => {
      while (parser.read() !== null) count++;
    });
    parser.on('error', reject);
    parser.on('end', () => resolve(count));
    for (const piece of pieces) parser.write(piece);
    parser.end();
  });
}

async function cpuSeconds<T>(run: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = process.cpuUsage();
  const value = await run();
  const used = process.cpuUsage(started);
  return { value, seconds: (used.user + used.system) / 1e6 };
}

function generateCsv(bytes: number): string {
  const lines = ['id,name,city,amount,note'];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 50 === 49
        ? `${i},short row`
        : `${i},Customer ${i},${i % 7 === 0 ? 'München' : 'Lyon'},${(i * 1.25).toFixed(2)},"note, with comma ${i}"`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
