/**
 * The reference normalizer (`import ... from 'rerun-pipeline/normalize'`): a worker that turns CSV and NDJSON
 * uploads into NDJSON and quarantines bad rows with their line numbers and reasons, and its parts
 * (the streaming CSV reader, the line reader, the format sniffer, the record limits).
 *
 * @example
 * import { createSqsBatchHandler, S3ObjectStore } from 'rerun-pipeline';
 * import { createNormalizeWorker } from 'rerun-pipeline/normalize';
 * export const handler = createSqsBatchHandler({ worker: createNormalizeWorker({ outputBucket }), store, sqs });
 */

export { type CsvHeader, type CsvHeaderProblem, compileCsvHeader, normalizeHeaderName } from './csvHeader.js';
export { type CsvRecord, CsvRecordReader, UNTERMINATED_QUOTE_REASON } from './csvParser.js';
export { CsvRowBytes } from './csvRowBytes.js';
export {
  DEFAULT_MAX_INFLATE_RATIO,
  DEFAULT_MAX_INFLATED_BYTES,
  type DecodeLimits,
  type DecodeReport,
} from './decodeInput.js';
export {
  type FormatEnd,
  type FormatReader,
  FormatRegistry,
  type InputFormatDefinition,
  type RecordEmitter,
} from './formatRegistry.js';
export { csvFormat } from './formats/csv.js';
export { ndjsonFormat } from './formats/ndjson.js';
export { defaultFormats, formatOfKey, GZIP_EXTENSION, InputFormat, SupportedExtensions } from './inputFormat.js';
export { ContentKind, SNIFF_BYTES, type SniffResult, sniffContent, TextEncoding } from './inputSniffer.js';
export { type ByteTarget, LineBytes } from './lineBytes.js';
export { LineReader, type TextLine } from './lineReader.js';
export {
  type LineSink,
  type NormalizeOptions,
  type NormalizeResult,
  normalizeRecords,
} from './normalizeRecords.js';
export {
  createNormalizeWorker,
  NORMALIZE_CODE_VERSION,
  NORMALIZE_PREFIXES,
  type NormalizePrefixes,
  type NormalizeSummary,
  type NormalizeWorkerOptions,
} from './normalizeWorker.js';
export { formatQuarantineLine, type QuarantineEntry } from './quarantine.js';
export { type RecordCounts, RecordDisposition } from './recordAccounting.js';
export {
  DEFAULT_MAX_NESTING_DEPTH,
  DEFAULT_MAX_RAW_CHARS,
  DEFAULT_MAX_RECORD_BYTES,
  type RecordLimits,
} from './recordLimits.js';
