import { RerunError } from '../../src/errors.js';
import { type Day, partitionName } from '../../src/keys/partition.js';
import type { LineageEntry } from './lineage.js';
import { coverageProblem, type SummaryCoverage } from './summaryCoverage.js';
import { LineageKind } from './summaryLayout.js';

/** Identifies the document format; bump with the code version when the shape changes. */
export const DAILY_SUMMARY_SCHEMA = 'rerun.daily-summary/1';

/** Distinct field names tracked per day; further names are only counted (`fieldsOmitted`). */
export const MAX_SUMMARY_FIELDS = 100;
/** Distinct quarantine reasons tracked per day; further reasons are counted under `(other)`. */
export const MAX_QUARANTINE_REASONS = 50;

/** Aggregates of one field over a day's records. */
export interface FieldStats {
  /** Records where the field is present and not null. */
  present: number;
  /** Of those, values that are numbers or decimal strings (`"10.50"`). */
  numeric: number;
  /** Sum, minimum and maximum of the numeric values (absent when there are none). */
  sum?: number;
  min?: number;
  max?: number;
}

/**
 * The manifest every summary carries: exactly which outputs, at which ETags, and which code; and,
 * when the summarizer listed the day's inputs, which of them the summary covers and which it does not.
 */
export interface SummaryManifest {
  codeVersion: string;
  lineageHash: string;
  lineage: LineageEntry[];
  /** Absent when the summarizer was not given the inputs' rules (outputs only). */
  coverage?: SummaryCoverage;
}

/** A day's summary, computed only from the bytes of its lineage (no clock, no bucket names). */
export interface DailySummary {
  schema: typeof DAILY_SUMMARY_SCHEMA;
  partition: string;
  /** Normalized outputs of the day. */
  files: number;
  /** NDJSON records in them. */
  records: number;
  /** Their total size in bytes. */
  bytes: number;
  /** Quarantined rows of the day (lines of its quarantine objects). */
  quarantined: number;
  quarantineReasons: Record<string, number>;
  fields: Record<string, FieldStats>;
  /** Distinct field names seen beyond {@link MAX_SUMMARY_FIELDS}. */
  fieldsOmitted: number;
  manifest: SummaryManifest;
}

/**
 * A normalized output of the window is not NDJSON of objects: the summary cannot be computed until it
 * is fixed (rebuild it by rerunning normalize for its input). Not retryable.
 */
export class SummaryInputInvalidError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'SummaryInputInvalidError';
  }
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Folds a day's lines into a {@link DailySummary}. Pure and order-sensitive only through the order
 * of its calls, which the caller fixes (sorted lineage, then line order), so the same inputs give
 * the same bytes on every run.
 *
 * @example
 * const acc = new SummaryAccumulator();
 * acc.startFile({ kind: 'normalized', path: 'dt=2026-01-05/a.csv.ndjson', etag: 'e1' }, 120);
 * acc.addLine('{"id":"1","amount":"10.50"}');
 * const summary = acc.finish({ day: '2026-01-05', codeVersion: 'summarize@1', lineageHash: 'ab..', lineage });
 */
export class SummaryAccumulator {
  private files = 0;
  private records = 0;
  private bytes = 0;
  private quarantined = 0;
  private readonly reasons = new Map<string, number>();
  private readonly fields = new Map<string, FieldStats>();
  private readonly omitted = new Set<string>();
  private current: { entry: LineageEntry; line: number } | undefined;

  /** Starts the lines of one lineage object of `bytes` bytes. */
  startFile(entry: LineageEntry, bytes: number): void {
    this.current = { entry, line: 0 };
    if (entry.kind === LineageKind.NORMALIZED) {
      this.files++;
      this.bytes += bytes;
    }
  }

  /** Adds one line (without its terminator) of the current object; blank lines are ignored. */
  addLine(line: string): void {
    const current = this.current;
    if (!current) throw new Error('SummaryAccumulator.addLine before startFile');
    current.line++;
    if (line.trim() === '') return;
    if (current.entry.kind === LineageKind.QUARANTINE) {
      this.addQuarantined(line);
      return;
    }
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      record = undefined;
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new SummaryInputInvalidError(
        `${current.entry.kind}/${current.entry.path} line ${current.line} is not a JSON object: ` +
          'the normalized output is corrupt; rerun normalize for its input, then redrive or backfill this day',
      );
    }
    this.records++;
    for (const [name, value] of Object.entries(record as Record<string, unknown>)) this.addField(name, value);
  }

  /** The summary of everything added. */
  finish(manifest: {
    day: Day;
    codeVersion: string;
    lineageHash: string;
    lineage: readonly LineageEntry[];
    coverage?: SummaryCoverage;
  }): DailySummary {
    return {
      schema: DAILY_SUMMARY_SCHEMA,
      partition: partitionName(manifest.day),
      files: this.files,
      records: this.records,
      bytes: this.bytes,
      quarantined: this.quarantined,
      quarantineReasons: Object.fromEntries(this.reasons),
      fields: Object.fromEntries(this.fields),
      fieldsOmitted: this.omitted.size,
      manifest: {
        codeVersion: manifest.codeVersion,
        lineageHash: manifest.lineageHash,
        lineage: manifest.lineage.map((e) => ({ kind: e.kind, path: e.path, etag: e.etag })),
        ...(manifest.coverage ? { coverage: manifest.coverage } : {}),
      },
    };
  }

  private addQuarantined(line: string): void {
    this.quarantined++;
    let reason = '(unreadable quarantine line)';
    try {
      const entry = JSON.parse(line) as { reason?: unknown };
      if (typeof entry.reason === 'string') reason = entry.reason;
    } catch {
      // counted under the placeholder reason
    }
    if (!this.reasons.has(reason) && this.reasons.size >= MAX_QUARANTINE_REASONS) reason = '(other)';
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
  }

  private addField(name: string, value: unknown): void {
    let stats = this.fields.get(name);
    if (!stats) {
      if (this.fields.size >= MAX_SUMMARY_FIELDS) {
        this.omitted.add(name);
        return;
      }
      stats = { present: 0, numeric: 0 };
      this.fields.set(name, stats);
    }
    if (value === null || value === undefined) return;
    stats.present++;
    const n =
      typeof value === 'number' ? value : typeof value === 'string' && DECIMAL.test(value.trim()) ? Number(value) : NaN;
    if (!Number.isFinite(n)) return;
    stats.numeric++;
    stats.sum = (stats.sum ?? 0) + n;
    stats.min = stats.min === undefined ? n : Math.min(stats.min, n);
    stats.max = stats.max === undefined ? n : Math.max(stats.max, n);
  }
}

/**
 * The canonical bytes of a summary: JSON with object keys sorted at every level, arrays in order,
 * one trailing newline. Equal summaries give equal bytes (and so equal ETags and checksums).
 *
 * @example
 * const bytes = serializeSummary(summary);
 */
export function serializeSummary(summary: DailySummary): Buffer {
  return Buffer.from(`${JSON.stringify(canonical(summary))}\n`, 'utf8');
}

/**
 * Parses summary bytes and checks them against what they must be: the document shape, the
 * partition, the lineage hash and code version of its manifest, and counts consistent with the
 * manifest. Returns the summary, or the reason it is invalid.
 *
 * @example
 * const checked = parseSummary(bytes, { day: '2026-01-05', lineageHash, codeVersion: 'summarize@1' });
 * if (!checked.ok) throw new Error(checked.reason);
 */
export function parseSummary(
  bytes: Uint8Array,
  expected: { day: Day; lineageHash?: string; codeVersion?: string },
): { ok: true; summary: DailySummary } | { ok: false; reason: string } {
  let doc: Partial<DailySummary>;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString('utf8')) as Partial<DailySummary>;
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (doc === null || typeof doc !== 'object') return { ok: false, reason: 'not a JSON object' };
  if (doc.schema !== DAILY_SUMMARY_SCHEMA) return { ok: false, reason: `schema is ${String(doc.schema)}` };
  if (doc.partition !== partitionName(expected.day)) {
    return { ok: false, reason: `partition is ${String(doc.partition)}, expected ${partitionName(expected.day)}` };
  }
  for (const field of ['files', 'records', 'bytes', 'quarantined', 'fieldsOmitted'] as const) {
    const value = doc[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      return { ok: false, reason: `${field} is not a count` };
    }
  }
  const manifest = doc.manifest;
  if (!manifest || typeof manifest.lineageHash !== 'string' || !Array.isArray(manifest.lineage)) {
    return { ok: false, reason: 'manifest missing or incomplete' };
  }
  if (expected.lineageHash !== undefined && manifest.lineageHash !== expected.lineageHash) {
    return { ok: false, reason: `manifest lineage hash ${manifest.lineageHash} differs from ${expected.lineageHash}` };
  }
  if (expected.codeVersion !== undefined && manifest.codeVersion !== expected.codeVersion) {
    return { ok: false, reason: `manifest code version ${manifest.codeVersion} differs from ${expected.codeVersion}` };
  }
  if (manifest.coverage !== undefined) {
    const problem = coverageProblem(manifest.coverage);
    if (problem) return { ok: false, reason: `manifest ${problem}` };
  }
  const normalizedInputs = manifest.lineage.filter((e) => e?.kind === LineageKind.NORMALIZED).length;
  if (normalizedInputs !== doc.files) {
    return { ok: false, reason: `files is ${doc.files} but the manifest lists ${normalizedInputs} normalized inputs` };
  }
  return { ok: true, summary: doc as DailySummary };
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
