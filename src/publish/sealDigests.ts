import { createHash, type Hash } from 'node:crypto';

/** The most bytes one UploadPartCopy copies (S3's largest part): 5 GiB. */
export const MAX_COPY_PART_BYTES = 5 * 1024 ** 3;

/** A byte range of the completed upload that one UploadPartCopy of the seal copies, with its SHA-256. */
export interface SealRange {
  /** First byte, inclusive. */
  readonly start: number;
  /** Last byte, inclusive. */
  readonly end: number;
  readonly sha256Base64: string;
}

/** What {@link SealDigests.finish} knows once the last part went through. */
export interface SealPlan {
  /** The SHA-256 of the whole content (base64). */
  readonly sha256Base64: string;
  /** The ranges the seal copies, in order (one for any output up to 5 GiB). */
  readonly ranges: readonly SealRange[];
  /** The checksum S3 stores for the sealed object: the SHA-256 of the ranges' digests (base64, without `-N`). */
  readonly compositeBase64: string;
}

/**
 * The digests a multipart output's seal needs, computed as its parts stream past (the parts
 * themselves are gone by then): the SHA-256 of the whole content, and one per copy range. The seal
 * copies the completed upload onto itself in ranges of at most 5 GiB, each a whole number of parts
 * (src/publish/OutputWriter.ts), so S3's checksum of the sealed object is known in advance: the
 * SHA-256 of the ranges' SHA-256s. Up to 5 GiB the whole content is one range, and one hash serves
 * both; past it, the whole-content hash and the range hash both read the bytes.
 *
 * @example
 * const digests = new SealDigests(5 * 1024 * 1024);
 * for (const part of parts) digests.add(part);
 * const { ranges, compositeBase64 } = digests.finish();
 */
export class SealDigests {
  /** Bytes per copy range: the most whole parts that fit in 5 GiB. */
  readonly rangeBytes: number;
  private readonly whole: Hash = createHash('sha256');
  /** The hash of the range being read; the whole-content hash itself while that is the first range. */
  private range: Hash = this.whole;
  private rangeStart = 0;
  private total = 0;
  private readonly done: SealRange[] = [];

  /** `maxRangeBytes`: the most one copy range may hold (S3's largest part; smaller only in tests). */
  constructor(partBytes: number, maxRangeBytes = MAX_COPY_PART_BYTES) {
    this.rangeBytes = Math.max(partBytes, Math.floor(maxRangeBytes / partBytes) * partBytes);
  }

  /** Reads the next part (parts arrive whole and in order; only the last may be shorter). */
  add(part: Uint8Array): void {
    if (this.total > this.rangeStart && this.total - this.rangeStart >= this.rangeBytes) this.closeRange();
    this.range.update(part);
    if (this.range !== this.whole) this.whole.update(part);
    this.total += part.byteLength;
  }

  finish(): SealPlan {
    this.closeRange();
    const sha256Base64 = this.whole.digest('base64');
    const composite = createHash('sha256');
    for (const r of this.done) composite.update(Buffer.from(r.sha256Base64, 'base64'));
    return { sha256Base64, ranges: this.done, compositeBase64: composite.digest('base64') };
  }

  private closeRange(): void {
    if (this.total === this.rangeStart) return;
    // The first range shares the whole-content hash: read its digest from a copy.
    const digest = (this.range === this.whole ? this.whole.copy() : this.range).digest('base64');
    this.done.push({ start: this.rangeStart, end: this.total - 1, sha256Base64: digest });
    this.rangeStart = this.total;
    this.range = createHash('sha256');
  }
}
