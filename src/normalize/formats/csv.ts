import { type CsvHeader, compileCsvHeader } from '../csvHeader.js';
import { type CsvRecord, CsvRecordReader } from '../csvParser.js';
import { CsvRowBytes } from '../csvRowBytes.js';
import {
  type FormatEnd,
  type FormatReader,
  failedRecordReason,
  type InputFormatDefinition,
  type RecordEmitter,
} from '../formatRegistry.js';
import type { RecordLimits } from '../recordLimits.js';

/**
 * CSV (RFC 4180; dialect details on {@link CsvRecordReader}) into NDJSON: the first non-blank record
 * is the header; each data record becomes one JSON object with keys in header order (see
 * normalizeRecords for the rules and the quarantine reasons).
 *
 * @example
 * new FormatRegistry([csvFormat]).formatOfKey('in/a.CSV.gz'); // 'csv'
 */
export const csvFormat: InputFormatDefinition = {
  name: 'csv',
  extensions: ['.csv'],
  open: (limits, emit) => new CsvFormatReader(limits, emit, false),
  openBytes: (limits, emit) => new CsvFormatReader(limits, emit, true),
};

class CsvFormatReader implements FormatReader {
  private readonly reader: CsvRecordReader;
  private header: CsvHeader | undefined;
  private unusableHeader: string | undefined;

  constructor(
    limits: RecordLimits,
    private readonly emit: RecordEmitter,
    private readonly byteStrings: boolean,
  ) {
    this.reader = new CsvRecordReader(limits, { byteStrings });
  }

  async push(text: string): Promise<void> {
    this.reader.push(text);
    await this.drain();
  }

  async end(): Promise<FormatEnd> {
    this.reader.end();
    await this.drain();
    return this.ending();
  }

  abandon(): FormatEnd & { readonly line: number } {
    return { line: this.reader.abandon(), ...this.ending() };
  }

  /** The blank records skipped and the rows written as bytes, counted once at the end, and the header's verdict. */
  private ending(): FormatEnd {
    this.emit.count('blank', this.reader.blankRecords);
    this.emit.count('output', this.reader.rowsWrittenAsBytes);
    return this.unusableHeader === undefined ? {} : { unusableHeader: this.unusableHeader };
  }

  private async drain(): Promise<void> {
    for (;;) {
      const record = this.reader.nextRecord();
      if (record === undefined) {
        if (!this.reader.waitsForSend) return;
        // The rows written as bytes filled their batch: sent, the reader goes on.
        await this.emit.lineBytes?.flush();
        continue;
      }
      const pending = this.handle(record);
      if (pending !== undefined) await pending;
    }
  }

  private handle(record: CsvRecord): Promise<void> | undefined {
    const header = this.header;
    if (header !== undefined) {
      if (record.problem !== undefined) return this.reject(record, record.problem);
      if (record.fields.length !== header.keys.length) {
        return this.reject(record, `expected ${header.keys.length} fields, got ${record.fields.length}`);
      }
      // One record's failure stays that record's: only the computation is guarded, never the sink's write
      // (an S3 error there is the file's, and worth a retry).
      let json: string;
      try {
        json = header.toJson(record.fields, record.escapeFree);
      } catch (error) {
        return this.reject(record, failedRecordReason(error));
      }
      return this.emit.output(json);
    }
    if (this.unusableHeader !== undefined) return this.reject(record, this.unusableHeader);
    // First non-blank record: the header.
    if (record.problem !== undefined) {
      this.unusableHeader = `unusable header: ${record.problem}`;
      return this.reject(record, this.unusableHeader);
    }
    this.emit.count('header');
    const compiled = compileCsvHeader(record.fields, { byteStrings: this.byteStrings });
    if (compiled.ok) {
      this.header = compiled;
      const lines = this.emit.lineBytes;
      if (this.byteStrings && lines !== undefined)
        this.reader.writeRowsAsBytes(new CsvRowBytes(compiled.keyPrefixes, lines));
    } else this.unusableHeader = `unusable header: ${compiled.reason}`;
    return undefined;
  }

  private reject(record: CsvRecord, reason: string): Promise<void> | undefined {
    return this.emit.quarantine(record.line, reason, record.raw, record.rawTruncated);
  }
}
