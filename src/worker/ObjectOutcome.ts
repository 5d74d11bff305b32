import type { SourceIdentity } from '../done/outputMetadata.js';

/**
 * A valid, current output, described only by what S3 stores (so a run that wrote it and a later run
 * that found it describe it identically, which keeps side-effect payloads stable).
 */
export interface OutputDescription {
  readonly bucket: string;
  readonly key: string;
  readonly etag: string;
  /** The SHA-256 of the content's bytes (base64), as its metadata records it and S3's checksum confirms. */
  readonly sha256: string;
  /** The transform's summary as stored in metadata. */
  readonly summary: Readonly<Record<string, string>>;
  /** ETag of the input content the output was built from. */
  readonly sourceEtag: string;
}

/** How one object ended (failures are thrown). */
export interface ObjectOutcome {
  readonly status: 'processed' | 'skipped';
  readonly reason: string;
  readonly outputKey?: string;
  /** The input content the output now reflects (when known). */
  readonly source?: SourceIdentity;
  /** The transform's summary, when this run produced the output. */
  readonly summary?: Readonly<Record<string, string | number>>;
  /** ETag of the output as published or found. */
  readonly outputEtag?: string;
  /** The valid, current output, when there is one (written now or found done). */
  readonly output?: OutputDescription;
  /** Publish races (412) this call lost before it published or found the output done. */
  readonly publishRacesLost?: number;
  /**
   * A removal's objects left in place, each for a reason (replaced meanwhile by a rebuild, or not
   * this input's output). Absent when none was: a removal that found its outputs already gone kept nothing.
   */
  readonly kept?: number;
}
