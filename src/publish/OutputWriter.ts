import { createHash } from 'node:crypto';
import { buildOutputMetadata, type SourceIdentity } from '../done/outputMetadata.js';
import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { type S3ObjectStore, type WriteCondition, type WriteResult, WriteStatus } from '../s3/S3ObjectStore.js';
import { S3_MIN_PART_BYTES } from '../s3/s3ObjectStoreOptions.js';
import { SealDigests } from './sealDigests.js';

/** S3's minimum size of every multipart part but the last. */
export const MIN_PART_BYTES = S3_MIN_PART_BYTES;
/** S3's largest part number: an output holds at most this many parts. */
export const MAX_PARTS = 10_000;
/**
 * The default part size: S3's minimum. Memory is two parts (one filling, one uploading), so the
 * smallest part keeps a large output within Lambda's smallest memory size; it caps an output at
 * {@link MAX_PARTS} parts, 48.8 GiB, far above what one invocation can normalize.
 */
export const DEFAULT_PART_BYTES = MIN_PART_BYTES;

/** Options for {@link OutputWriter}. */
export interface OutputWriterOptions {
  readonly store: S3ObjectStore;
  readonly bucket: string;
  readonly key: string;
  readonly source: SourceIdentity;
  readonly codeVersion: string;
  /**
   * Size of a multipart part. An output up to this size is sent as one PutObject; a larger one is
   * streamed as a multipart upload in parts of exactly this size (the last one shorter), so memory
   * stays at two part buffers whatever the output's size, and an output holds at most
   * `10,000 x partBytes` bytes (S3's part limit).
   * @default 5 MiB (S3's minimum; the store's `minPartBytes` is the smallest allowed)
   */
  readonly partBytes?: number;
  /** @default 'application/x-ndjson' */
  readonly contentType?: string;
  /**
   * Who writes the output (the batch handler's writers pass the SQS message id of their delivery):
   * a multipart upload records it until its seal (`rerun-writer`), so that a later receive of the
   * same message knows the writer that left the upload unsealed is over (src/done/sealInProgress.ts).
   * @default not recorded
   */
  readonly writerId?: string;
}

/** The names of {@link OutputWriterOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const OUTPUT_WRITER_OPTION_NAMES = {
  bucket: true,
  codeVersion: true,
  contentType: true,
  key: true,
  partBytes: true,
  source: true,
  store: true,
  writerId: true,
} as const satisfies OptionNames<OutputWriterOptions>;

/**
 * Streams one output to S3 and publishes it with a conditional write, never a blind overwrite.
 *
 * Nothing is visible at the key until {@link publish} succeeds: a small output is one conditional
 * PutObject; a large one is uploaded as parts and becomes visible atomically at a conditional
 * CompleteMultipartUpload. A crash at any point leaves either the previous object or the new one,
 * never a torn one (an abandoned multipart upload is invisible; the stack's lifecycle rule aborts it).
 *
 * A multipart upload's metadata is fixed at CreateMultipartUpload, before the content, its counts
 * and its side outputs exist, so a completed upload says it is unsealed (src/done/integrity.ts),
 * which every done-check reads as "not done". {@link publish} then seals it: it copies the object
 * onto itself as a new multipart upload that carries the same metadata a single PutObject carries
 * (the SHA-256 of the whole content, the counts, the side outputs), on the completed upload's ETag
 * (S3ObjectStore.sealInPlace). Every output, whatever its size, thus records all of it. A delivery
 * that finds it completed but not sealed waits for the seal while its writer may be alive, and
 * rebuilds it only once that writer must be dead (src/worker/sealWait.ts).
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
  /** Content of a single-part output so far (until it reaches partBytes and goes multipart). */
  private chunks: Buffer[] = [];
  private buffered = 0;
  private total = 0;
  private uploadId: string | undefined;
  private readonly parts: { partNumber: number; etag: string; sha256Base64: string }[] = [];
  private inFlight: Promise<void> | undefined;
  /**
   * Multipart: the part being filled, and the buffer of the part uploaded last, reused once its
   * upload is answered. Two buffers for the whole output: no allocation (or garbage) per part.
   */
  private fill: Buffer | undefined;
  private filled = 0;
  private spare: Buffer | undefined;
  private single: { body: Buffer; sha256Base64: string } | undefined;
  private finished = false;
  /** Why the content cannot be published again by this writer (a new one must write it), if so. */
  private spent: string | undefined;
  /** Multipart: the digests of the whole content and of the seal's copy ranges, fed part by part in order. */
  private digests: SealDigests | undefined;
  private wholeDigest: string | undefined;

  constructor(private readonly options: OutputWriterOptions) {
    checkOptions('OutputWriter', options, OUTPUT_WRITER_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
    this.partBytes = Math.max(options.partBytes ?? DEFAULT_PART_BYTES, options.store.minPartBytes);
  }

  /**
   * The SHA-256 of the content's bytes (base64), for a single-part and a multipart output alike.
   * Known once {@link publish} has sent it (for a multipart output, once completed).
   */
  get contentChecksum(): string | undefined {
    if (!this.finished) return undefined;
    return this.single ? this.single.sha256Base64 : this.wholeDigest;
  }

  /** Bytes written so far. */
  get bytesWritten(): number {
    return this.total;
  }

  /**
   * Whether the content went to a multipart upload (it reached `partBytes`); a single-part output is
   * held in memory until it is published, and after a 412 can be published again from there.
   */
  get multipart(): boolean {
    return this.uploadId !== undefined;
  }

  /** Appends content. Resolves once it is safe to write more (backpressure on part uploads). */
  async write(chunk: string | Uint8Array): Promise<void> {
    if (this.finished) throw new Error(`output s3://${this.options.bucket}/${this.options.key} is already published`);
    if (chunk.length === 0) return;
    const fill = this.fill;
    if (fill !== undefined && typeof chunk === 'string') {
      // Encoded straight into the part (no intermediate Buffer) when it surely fits: a UTF-16 code
      // unit is at most 3 UTF-8 bytes.
      const room = fill.byteLength - this.filled;
      if (chunk.length * 3 <= room || Buffer.byteLength(chunk, 'utf8') <= room) {
        const bytes = fill.write(chunk, this.filled, 'utf8');
        this.filled += bytes;
        this.total += bytes;
        if (this.filled === fill.byteLength) await this.flushPart();
        return;
      }
    }
    if (fill !== undefined) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      this.total += bytes.byteLength;
      return this.append(bytes);
    }
    // A copy: the caller may reuse its bytes once the write resolves.
    const copy = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk);
    this.chunks.push(copy);
    this.buffered += copy.byteLength;
    this.total += copy.byteLength;
    if (this.buffered < this.partBytes) return;
    // Large enough for a multipart upload: from now on the content goes into part buffers.
    const pending = this.chunks;
    this.chunks = [];
    this.buffered = 0;
    this.fill = Buffer.allocUnsafeSlow(this.partBytes);
    for (const bytes of pending) await this.append(bytes);
  }

  /** Copies bytes into the part being filled, uploading each part as it becomes full. */
  private async append(bytes: Uint8Array): Promise<void> {
    for (let offset = 0; offset < bytes.byteLength; ) {
      const fill = this.fill as Buffer;
      const n = Math.min(fill.byteLength - this.filled, bytes.byteLength - offset);
      fill.set(bytes.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === fill.byteLength) await this.flushPart();
    }
  }

  /**
   * Publishes the output under `condition`. `summary` (the transform's counts) and the side
   * outputs published with it (name to ETag) go into its metadata: with the PutObject of a
   * single-part output, with the seal of a multipart one. A 412 on the seal means another writer
   * replaced the completed upload before it was sealed: the race is lost, as on the completion.
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
      this.finished = true;
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
    if (this.spent) {
      throw new Error(
        `multipart upload ${this.uploadId} of s3://${bucket}/${key} ${this.spent}: ` +
          'it cannot be completed again; abort it and write the output anew (a new upload, its parts re-uploaded)',
      );
    }
    if (!this.finished) {
      if (this.filled > 0) await this.flushPart(true);
      await this.inFlight;
      this.finished = true;
      this.fill = undefined;
      this.spare = undefined;
    }
    const completed = await store.completeMultipartUpload(bucket, key, {
      uploadId: this.uploadId,
      parts: this.parts,
      condition,
    });
    // S3 conditional writes: a 409 on CompleteMultipartUpload means "start a new multipart upload
    // and re-upload the parts", not "complete the same UploadId again". The parts streamed past
    // (memory stays near two parts), so the caller writes the output anew.
    if (completed.status === WriteStatus.CONFLICT) this.spent = 'met a 409 ConditionalRequestConflict';
    if (completed.status !== WriteStatus.WRITTEN) return completed;
    // Completed: the upload is gone, and a seal that loses leaves nothing to complete again.
    this.spent = 'was completed, and another writer replaced or removed it before its seal';
    const plan = (this.digests as SealDigests).finish();
    this.wholeDigest = plan.sha256Base64;
    const metadata = buildOutputMetadata({
      source,
      codeVersion,
      integrity: {
        kind: 'sha256-parts',
        sha256Base64: plan.sha256Base64,
        compositeBase64: plan.compositeBase64,
        parts: plan.ranges.length,
        bytes: this.total,
      },
      summary,
      ...(sideOutputs ? { sideOutputs } : {}),
    });
    return store.sealInPlace(bucket, key, {
      etag: completed.etag,
      metadata,
      contentType: this.contentType,
      ranges: plan.ranges,
    });
  }

  /**
   * Whether a publish that did not succeed left nothing this writer can publish again: a 409 on the
   * completion (a multipart upload cannot be completed again), or a completed upload whose seal lost
   * to another writer. The caller writes the output anew with a fresh writer (a new round). A
   * single-part writer keeps its content and can always publish again under another condition.
   */
  get needsNewUpload(): boolean {
    return this.spent !== undefined;
  }

  /** Abandons a multipart upload in progress (no-op for single-part outputs). */
  async abort(): Promise<void> {
    this.finished = true;
    this.chunks = [];
    this.fill = undefined;
    this.spare = undefined;
    const uploadId = this.uploadId;
    if (uploadId === undefined) return;
    await this.inFlight?.catch(() => {});
    await this.options.store.abortMultipartUpload(this.options.bucket, this.options.key, uploadId);
  }

  private get contentType(): string {
    return this.options.contentType ?? 'application/x-ndjson';
  }

  /** Uploads the part being filled (after the previous part's upload is answered) and starts the next. */
  private async flushPart(last = false): Promise<void> {
    const { store, bucket, key, source, codeVersion, writerId } = this.options;
    const buffer = this.fill as Buffer;
    const body = buffer.subarray(0, this.filled);
    // At most one part uploads while the next one fills: memory stays at two part buffers.
    await this.inFlight;
    const partNumber = this.parts.length + 1;
    if (partNumber > MAX_PARTS) {
      throw new Error(
        `output s3://${bucket}/${key} needs more than ${MAX_PARTS} parts of ${this.partBytes} bytes (S3's limit): ` +
          "raise the worker's partBytes",
      );
    }
    if (this.uploadId === undefined) {
      this.uploadId = await store.createMultipartUpload(bucket, key, {
        // Until the seal replaces it: "unsealed", which no done-check calls done.
        metadata: buildOutputMetadata({
          source,
          codeVersion,
          integrity: { kind: 'unsealed' },
          ...(writerId ? { writer: writerId } : {}),
        }),
        contentType: this.contentType,
      });
      this.digests = new SealDigests(this.partBytes);
    }
    const uploadId = this.uploadId;
    const sha256Base64 = createHash('sha256').update(body).digest('base64');
    // Parts are flushed one at a time and in order, so the seal's digests follow them.
    this.digests?.add(body);
    // The buffer of the part answered last is free again: fill it while this one uploads. (The
    // SDK holds a body only until its request is answered, retries included.)
    this.fill = last ? undefined : (this.spare ?? Buffer.allocUnsafeSlow(this.partBytes));
    this.spare = undefined;
    this.filled = 0;
    this.inFlight = store.uploadPart(bucket, key, { uploadId, partNumber, body, sha256Base64 }).then((part) => {
      this.parts.push(part);
      this.spare = buffer;
    });
    // Surface an upload failure on the next write or publish, not as an unhandled rejection.
    this.inFlight.catch(() => {});
  }
}
