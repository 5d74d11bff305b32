import { createHash } from 'node:crypto';
import { WorkerConfigurationError } from '../errors.js';
import { formatIntegrity, type Integrity } from './integrity.js';

/**
 * What every output carries in its S3 user metadata (`x-amz-meta-*`) so that a done-check can tell
 * a finished, current output from a missing, partial, corrupt, stale or old-code one with a HEAD.
 * S3 limits user metadata to 2 KB and to US-ASCII, hence the encodings below.
 */
export const MetadataKey = {
  /** The logical input: `bucket/urlencoded-key`, or `sha256:<hex>` of it when too long. */
  SOURCE: 'rerun-source',
  /** ETag (without quotes) of the input content the output was built from. */
  SOURCE_ETAG: 'rerun-source-etag',
  /** Version id of that input, when the input bucket is versioned. */
  SOURCE_VERSION: 'rerun-source-version',
  /** The worker's code/schema version: outputs of another version are rebuilt. */
  CODE_VERSION: 'rerun-code-version',
  /**
   * How to verify the content: `sha256:<base64 digest>:<byte length>` for single-part outputs (S3
   * stores the same SHA-256, sent with the upload, and returns it on HEAD with ChecksumMode), or
   * `sha256-composite` for multipart outputs (each part's SHA-256 verified by S3 at upload).
   */
  INTEGRITY: 'rerun-integrity',
  /**
   * Side outputs published with this output and the ETag each had (`quarantine=<etag>`,
   * comma-separated, or `none`). The main output is the commit point: a side object whose ETag is
   * not the listed one is not part of it (a concurrent writer of other content changed it), and the
   * done-check rebuilds. A replacement also learns which side objects of the older content exist.
   * Single-part outputs only: multipart metadata is written before the side outputs are known.
   */
  SIDE_OUTPUTS: 'rerun-side-outputs',
  /**
   * Who created a multipart upload: the SQS message id of the delivery that wrote it (the batch
   * handler's), on an unsealed output only (the seal's metadata does not carry it). A later receive
   * of that same message knows the writer that left it unsealed is over (src/done/sealInProgress.ts).
   */
  WRITER: 'rerun-writer',
} as const;

/** Prefix of the transform's own summary fields in metadata, e.g. `rerun-x-records`. */
export const SUMMARY_PREFIX = 'rerun-x-';

const MAX_READABLE_SOURCE = 512;

/** The input content an output is built from. */
export interface SourceIdentity {
  readonly bucket: string;
  readonly key: string;
  /** ETag without quotes. */
  readonly etag: string;
  readonly versionId?: string;
}

export type { Integrity } from './integrity.js';

/**
 * Encodes the logical input so it fits S3 metadata (ASCII, 2 KB in total).
 *
 * @example
 * encodeSource({ bucket: 'in', key: 'incoming/café.csv' }); // 'in/incoming%2Fcaf%C3%A9.csv'
 */
export function encodeSource(source: { bucket: string; key: string }): string {
  const readable = `${source.bucket}/${encodeURIComponent(source.key)}`;
  if (readable.length <= MAX_READABLE_SOURCE) return readable;
  return `sha256:${createHash('sha256').update(`${source.bucket}/${source.key}`, 'utf8').digest('hex')}`;
}

/**
 * Builds the user metadata of an output.
 *
 * @example
 * buildOutputMetadata({ source, codeVersion: 'normalize@1', integrity: { kind: 'sha256-composite' } });
 */
export function buildOutputMetadata(options: {
  source: SourceIdentity;
  codeVersion: string;
  integrity: Integrity;
  summary?: Readonly<Record<string, string | number>>;
  /** Side outputs published with it: name to ETag. */
  sideOutputs?: Readonly<Record<string, string>>;
  /** Who writes it ({@link MetadataKey.WRITER}): an unsealed multipart output only. */
  writer?: string;
}): Record<string, string> {
  const { source, codeVersion, integrity, summary = {}, sideOutputs, writer } = options;
  const metadata: Record<string, string> = {
    [MetadataKey.SOURCE]: encodeSource(source),
    [MetadataKey.SOURCE_ETAG]: source.etag,
    [MetadataKey.CODE_VERSION]: codeVersion,
    [MetadataKey.INTEGRITY]: formatIntegrity(integrity),
  };
  if (source.versionId) metadata[MetadataKey.SOURCE_VERSION] = source.versionId;
  if (writer) metadata[MetadataKey.WRITER] = writer;
  if (sideOutputs) {
    const listed = Object.entries(sideOutputs).map(([name, etag]) => `${name}=${etag}`);
    metadata[MetadataKey.SIDE_OUTPUTS] = listed.length > 0 ? listed.join(',') : 'none';
  }
  for (const [name, value] of Object.entries(summary)) {
    if (!/^[a-z0-9-]+$/.test(name)) {
      // The worker's transform returns it: every input would fail the same way, so it is not retried.
      throw new WorkerConfigurationError(`summary field "${name}" must be lower-case letters, digits, '-'`);
    }
    metadata[`${SUMMARY_PREFIX}${name}`] = String(value);
  }
  return metadata;
}

/**
 * The side outputs an output's metadata says were published with it, name to ETag (an empty ETag
 * when the metadata names the side output only, as earlier builds wrote it); undefined when it
 * does not say (multipart outputs): then any of them may exist.
 *
 * @example
 * publishedSideOutputs({ 'rerun-side-outputs': 'quarantine=9b2cf5' }); // Map { 'quarantine' => '9b2cf5' }
 */
export function publishedSideOutputs(metadata: Readonly<Record<string, string>>): Map<string, string> | undefined {
  const listed = metadata[MetadataKey.SIDE_OUTPUTS];
  if (listed === undefined) return undefined;
  if (listed === 'none' || listed === '') return new Map();
  return new Map(
    listed.split(',').map((entry) => {
      const at = entry.indexOf('=');
      return at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
    }),
  );
}

/**
 * Reads the transform's summary fields back from an output's metadata.
 *
 * @example
 * readSummary(head.metadata); // { records: '12', quarantined: '2' }
 */
export function readSummary(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const summary: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata)) {
    if (name.startsWith(SUMMARY_PREFIX)) summary[name.slice(SUMMARY_PREFIX.length)] = value;
  }
  return summary;
}
