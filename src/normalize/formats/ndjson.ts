import {
  type FormatEnd,
  type FormatReader,
  failedRecordReason,
  type InputFormatDefinition,
  type RecordEmitter,
} from '../formatRegistry.js';
import { classifyJsonLine, JsonLineForm } from '../jsonLineForm.js';
import { LineReader, type TextLine } from '../lineReader.js';
import { exceedsNestingDepth, excerpt, oversizeReason, type RecordLimits } from '../recordLimits.js';

/**
 * NDJSON (`.ndjson`, `.jsonl`): each non-blank line must be a JSON object, re-serialized with
 * `JSON.stringify` (see normalizeRecords for the rules and the quarantine reasons).
 *
 * @example
 * new FormatRegistry([ndjsonFormat]).formatOfKey('in/events.jsonl'); // 'ndjson'
 */
export const ndjsonFormat: InputFormatDefinition = {
  name: 'ndjson',
  extensions: ['.ndjson', '.jsonl'],
  open: (limits, emit) => new NdjsonFormatReader(limits, emit),
};

/** Why a line that is not JSON is quarantined (the engine's message is left out: see normalizeRecords). */
const INVALID_JSON_REASON = 'invalid JSON';

class NdjsonFormatReader implements FormatReader {
  private readonly reader: LineReader;
  private readonly oversize: string;

  constructor(
    private readonly limits: RecordLimits,
    private readonly emit: RecordEmitter,
  ) {
    this.reader = new LineReader(limits);
    this.oversize = oversizeReason(limits.maxRecordBytes);
  }

  async push(text: string): Promise<void> {
    this.reader.push(text);
    await this.drain();
  }

  async end(): Promise<FormatEnd> {
    this.reader.end();
    await this.drain();
    return {};
  }

  abandon(): FormatEnd & { readonly line: number } {
    return { line: this.reader.abandon() };
  }

  private async drain(): Promise<void> {
    for (let line = this.reader.nextLine(); line !== undefined; line = this.reader.nextLine()) {
      const pending = this.handle(line);
      if (pending !== undefined) await pending;
    }
  }

  private handle(line: TextLine): Promise<void> | undefined {
    if (line.oversized) return this.reject(line, this.oversize);
    const text = line.text;
    // Cheap pre-check: almost every line starts with `{`; only others may be blank.
    if (text.charCodeAt(0) !== 0x7b && text.trim() === '') {
      this.emit.count('blank');
      return undefined;
    }
    const maxDepth = this.limits.maxNestingDepth;
    // Most lines are already what parse-and-stringify would write: output them as they are. A line
    // cut short is invalid JSON whatever follows, and needs no exception to say so.
    const form = classifyJsonLine(text, maxDepth);
    if (form === JsonLineForm.CANONICAL) return this.emit.output(text);
    if (form === JsonLineForm.CUT_SHORT) return this.reject(line, INVALID_JSON_REASON);
    if (exceedsNestingDepth(text, maxDepth)) return this.reject(line, `nested deeper than ${maxDepth} levels`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.reject(line, INVALID_JSON_REASON);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return this.reject(line, `expected a JSON object, got ${kindOf(value)}`);
    }
    // Guards the serialization only (see the CSV reader): one record's failure stays that record's.
    let json: string;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      return this.reject(line, failedRecordReason(error));
    }
    return this.emit.output(json);
  }

  private reject(line: TextLine, reason: string): Promise<void> | undefined {
    const { raw, truncated } = excerpt(line.text, line.chars, this.limits.maxRawChars);
    return this.emit.quarantine(line.line, reason, raw, truncated);
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
