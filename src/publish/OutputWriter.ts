import { createHash } from 'node:crypto';
import { buildOutputMetadata, type SourceIdentity } from '../done/outputMetadata.js';
import { type S3ObjectStore, type WriteCondition, type WriteResult, WriteStatus } from '../s3/S3ObjectStore.js';

/** S3's minimum size of every multipart part but the last. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;

/** Options for {@link OutputWriter}. */
export interface OutputWriterOptions {
  readonly store: S3ObjectStore;
  readonly bucket: string;
  readonly key: string;
  readonly source: SourceIdentity;
  readonly codeVersion: string;
  /**
   * Size of a multipart part. An output up to this size is sent as one PutObject; a larger one is
   * streamed as a multipart upload, so memory stays around two parts whatever the output's size.
   * @default 8 MiB (minimum 5 MiB, S3's limit)
   */
  readonly partBytes?: number;
  /** @default 'application/x-ndjson' */
  readonly contentType?: string;
}

/**
 * Streams one output to S3 and publishes it with a conditional write, never a blind overwrite.
 *
 * Nothing is visible at the key until {@link publish} succeeds: a small output is one conditional
 * PutObject; a large one is uploaded as parts and becomes visible atomically at a conditional
 * CompleteMultipartUpload. A crash at any point leaves either the previous object or the new one,
 * never a torn one (an abandoned multipart upload is invisible; the stack's lifecycle rule aborts it).
 *
 * `publish` may be called again with another condition after a 412 (the content is kept), which
 * is how a writer replaces an invalid object it found after losing a create race.
 *
 * @example
 * const out = new OutputWriter({ store, bucket, key, source, codeVersion: '1' });
 * await out.write('{"a":1}\n');
 * const result = await out.publish({ ifNoneMatch: '*' }, { records: 1 });
 */
export class OutputWriter {
  readonly partBytes: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private total = 0;
  private uploadId: string | undefined;
  private readonly parts: { partNumber: number; etag: string; sha256Base64: string }[] = [];
  private inFlight: Promise<void> | undefined;
  private single: { body: Buffer; sha256Base64: string } | undefined;
  private sealed = false;
  private conflicted = false;

  constructor(private readonly options: OutputWriterOptions) {
    this.partBytes = Math.max(options.partBytes ?? 8 * 1024 * 1024, MIN_PART_BYTES);
  }

  /**
   * The SHA-256 S3 stores for this content, without the `-N` part-count suffix: the digest of the
   * bytes for a single-part output, the digest of the part digests for a multipart one. Known once
   * the content is sealed by {@link publish}; a deterministic function of the bytes and part size.
   */
  get contentChecksum(): string | undefined {
    if (!this.sealed) return undefined;
    if (this.single) return this.single.sha256Base64;
    const composite = createHash('sha256');
    for (const part of this.parts) composite.update(Buffer.from(part.sha256Base64, 'base64'));
    return composite.digest('base64');
  }

  /** Whether the summary passed to {@link publish} is stored in metadata (single-part outputs only). */
  get storesSummary(): boolean {
    return this.uploadId === undefined;
  }

  /** Bytes written so far. */
  get bytesWritten(): number {
    return this.total;
  }

  /** Appends content. Resolves once it is safe to write more (backpressure on part uploads). */
  async write(chunk: string | Uint8Array): Promise<void> {
    if (this.sealed) throw new Error(`output s3://${this.options.bucket}/${this.options.key} is already published`);
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
    if (buffer.byteLength === 0) return;
    this.chunks.push(buffer);
    this.buffered += buffer.byteLength;
    this.total += buffer.byteLength;
    if (this.buffered >= this.partBytes) await this.flushPart();
  }

  /**
   * Publishes the output under `condition`. `summary` (the transform's counts) and the side
   * outputs published with it (name to ETag) go into the metadata of single-part outputs;
   * multipart metadata is fixed when the upload starts.
   */
  async publish(
    condition: WriteCondition,
    summary: Readonly<Record<string, string | number>> = {},
    sideOutputs?: Readonly<Record<string, string>>,
  ): Promise<WriteResult> {
    const { store, bucket, key, source, codeVersion } = this.options;
    if (this.uploadId === undefined) {
      if (!this.single) {
        const body = Buffer.concat(this.chunks);
        this.chunks = [];
        this.single = { body, sha256Base64: createHash('sha256').update(body).digest('base64') };
      }
      this.sealed = true;
      const metadata = buildOutputMetadata({
        source,
        codeVersion,
        integrity: { kind: 'sha256', sha256Base64: this.single.sha256Base64, bytes: this.single.body.byteLength },
        summary,
        ...(sideOutputs ? { sideOutputs } : {}),
      });
      return store.put(bucket, key, this.single.body, {
        condition,
        metadata,
        sha256Base64: this.single.sha256Base64,
        contentType: this.contentType,
      });
    }
    if (this.conflicted) {
      throw new Error(
        `multipart upload ${this.uploadId} of s3://${bucket}/${key} met a 409 ConditionalRequestConflict: ` +
          'it cannot be completed again; abort it and write the output anew (a new upload, its parts re-uploaded)',
      );
    }
    if (!this.sealed) {
      if (this.buffered > 0) await this.flushPart();
      await this.inFlight;
      this.sealed = true;
    }
    const result = await store.completeMultipartUpload(bucket, key, {
      uploadId: this.uploadId,
      parts: this.parts,
      condition,
    });
    // AWS-SEMANTICS (S3 conditional writes): a 409 on CompleteMultipartUpload means "start a new
    // multipart upload and re-upload the parts", not "complete the same UploadId again". The parts
    // streamed past (memory stays near two parts), so the caller writes the output anew.
    if (result.status === WriteStatus.CONFLICT) this.conflicted = true;
    return result;
  }

  /**
   * Whether a publish met a 409 that a new write must answer (a multipart upload cannot be
   * completed again): the caller aborts this writer and writes the output with a fresh one.
   */
  get needsNewUpload(): boolean {
    return this.conflicted;
  }

  /** Abandons a multipart upload in progress (no-op for single-part outputs). */
  async abort(): Promise<void> {
    this.sealed = true;
    this.chunks = [];
    const uploadId = this.uploadId;
    if (uploadId === undefined) return;
    await this.inFlight?.catch(() => {});
    await this.options.store.abortMultipartUpload(this.options.bucket, this.options.key, uploadId);
  }

  private get contentType(): string {
    return this.options.contentType ?? 'application/x-ndjson';
  }

  private async flushPart(): Promise<void> {
    const { store, bucket, key, source, codeVersion } = this.options;
    const body = Buffer.concat(this.chunks);
    this.chunks = [];
    this.buffered = 0;
    // At most one part uploads while the next one fills: memory stays near two parts.
    await this.inFlight;
    if (this.uploadId === undefined) {
      this.uploadId = await store.createMultipartUpload(bucket, key, {
        metadata: buildOutputMetadata({ source, codeVersion, integrity: { kind: 'sha256-composite' } }),
        contentType: this.contentType,
      });
    }
    const uploadId = this.uploadId;
    const partNumber = this.parts.length + 1;
    const sha256Base64 = createHash('sha256').update(body).digest('base64');
    this.inFlight = store.uploadPart(bucket, key, { uploadId, partNumber, body, sha256Base64 }).then((part) => {
      this.parts.push(part);
    });
    // Surface an upload failure on the next write or publish, not as an unhandled rejection.
    this.inFlight.catch(() => {});
  }
}
