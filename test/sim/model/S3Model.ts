import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { SimServiceError } from './serviceError.js';

/**
 * An in-memory S3 with the semantics AWS documents for the operations rerun uses, one request at a
 * time (each request is atomic, as S3 applies a conditional write atomically per key):
 *
 * - conditional PutObject and CompleteMultipartUpload: `If-None-Match: *` answers 412 when the key
 *   exists, `If-Match` 412 on another ETag and 404 NoSuchKey on a missing key (S3 User Guide,
 *   "Conditional writes"); a failed condition leaves a multipart upload in place, to be completed
 *   again or aborted;
 * - UploadPartCopy with `x-amz-copy-source-if-match` (412 on another ETag, 404 on a missing source)
 *   and `x-amz-copy-source-range`; the copied part's SHA-256 is computed and returned when the
 *   upload was created with SHA-256 (CopyPartResult API reference);
 * - the bucket policy RerunPipeline attaches (src/cdk/conditionalWritePolicy.ts), when given:
 *   under its prefixes, a PutObject or CompleteMultipartUpload without `If-None-Match` or
 *   `If-Match`, and a DeleteObject without `If-Match`, is denied (403 AccessDenied);
 * - DeleteObject with `If-Match`: 412 on another ETag, 404 on a missing key; without it, 204;
 * - ETags: the MD5 of the bytes for one PutObject, the MD5 of the parts' MD5s with `-N` for a
 *   multipart upload; SHA-256 checksums verified on upload (400 BadDigest), stored, and returned by
 *   HeadObject with `ChecksumMode: ENABLED` (a multipart object's is the composite, `-N`);
 * - multipart: parts below the minimum part size (but the last) refused at completion (400
 *   EntityTooSmall), unknown or completed uploads 404 NoSuchUpload, an upload created with a checksum
 *   algorithm needs each part's checksum at completion (400 InvalidRequest);
 * - user metadata lower-cased, 2 KB at most (400 MetadataTooLarge); strong read-after-write;
 * - GetObject `If-Match` answers 412 on another ETag, `If-None-Match` 304 on the same ETag; HeadObject 404 is `NotFound`, GetObject's
 *   `NoSuchKey`; a missing bucket is 404 NoSuchBucket;
 * - ListObjectsV2 in UTF-8 binary key order, with Prefix, StartAfter, ContinuationToken, MaxKeys and
 *   Delimiter;
 * - with `conditionalConflicts`: a conditional CompleteMultipartUpload answers 409
 *   ConditionalRequestConflict when a delete of its key succeeded after the upload was created (S3
 *   User Guide, "How to prevent object overwrites with conditional writes": a 409 "in the case of
 *   multipart uploads if a delete request to an object succeeds before a conditional write operation
 *   on that object completes"; CompleteMultipartUpload API reference: "If a conflicting operation
 *   occurs during the upload S3 returns a 409 ConditionalRequestConflict response. On a 409 failure
 *   you should re-initiate the multipart upload with CreateMultipartUpload and re-upload each part").
 *   The upload stays in place, to be aborted;
 * - with `putConflicts`: a conditional PutObject is two steps, its upload beginning and ending
 *   ({@link S3Model.changesOf} then `handle` with the count it returned), and answers 409
 *   ConditionalRequestConflict when another write or delete of its key succeeded in between
 *   (PutObject API reference, its If-Match and If-None-Match headers: a conflicting operation during
 *   the upload answers 409, and the upload is to be retried). The write that ended first stands;
 *   the one it overtook leaves nothing.
 *   Without it each request is atomic, and a conditional PutObject is never in flight while another
 *   write arrives.
 *
 * Event notifications are not sent from here: the simulation's S3 notifier turns a write into the
 * event S3 would send ({@link S3Model.onWrite}).
 */
export class S3Model {
  private readonly buckets = new Map<string, Map<string, StoredObject>>();
  private readonly uploads = new Map<string, Upload>();
  private readonly uploadCounters = new Map<string, number>();
  /** Successful deletes per `bucket/key` (with conditionalConflicts): what a completion compares. */
  private readonly deletes = new Map<string, number>();
  /** Successful writes and deletes per `bucket/key` (with putConflicts): what a PutObject's end compares. */
  private readonly changes = new Map<string, number>();
  /** Called after every successful write or delete, with what S3 would describe in its event. */
  onWrite?: (change: ObjectChange) => void;

  constructor(
    private readonly options: {
      minPartBytes?: number;
      /** Bucket to the key prefixes under which writes and deletes must be conditional (the stack's policy). */
      conditionalPrefixes?: Readonly<Record<string, readonly string[]>>;
      /** A conditional completion overtaken by a delete of its key answers 409 (see above). @default false */
      conditionalConflicts?: boolean;
      /** A conditional PutObject overtaken by another write of its key answers 409 (see above). @default false */
      putConflicts?: boolean;
    } = {},
  ) {}

  /** The smallest part S3 accepts (every part but the last): 5 MiB on AWS. */
  get minPartBytes(): number {
    return this.options.minPartBytes ?? 5 * 1024 * 1024;
  }

  createBucket(name: string): void {
    if (!this.buckets.has(name)) this.buckets.set(name, new Map());
  }

  /** Direct read for checks (no request): the object at a key, or undefined. */
  peek(bucket: string, key: string): StoredObject | undefined {
    return this.buckets.get(bucket)?.get(key);
  }

  /** Direct listing for checks: every key of a bucket, in S3's order. */
  keys(bucket: string): string[] {
    return [...(this.buckets.get(bucket)?.keys() ?? [])].sort(compareKeys);
  }

  /** Multipart uploads in progress (never completed or aborted). */
  openUploads(): { bucket: string; key: string; uploadId: string }[] {
    return [...this.uploads.values()].map((u) => ({ bucket: u.bucket, key: u.key, uploadId: u.uploadId }));
  }

  /** Whether a PutObject with `input` is two steps, its upload in flight between them (putConflicts). */
  putInFlight(input: Record<string, unknown>): boolean {
    return this.options.putConflicts === true && (input.IfMatch !== undefined || input.IfNoneMatch !== undefined);
  }

  /** The successful writes and deletes of a key so far (putConflicts): what a PutObject's upload begins with. */
  changesOf(bucket: string, key: string): number {
    return this.changes.get(`${bucket}/${key}`) ?? 0;
  }

  /** The state, as a string: equal strings, equal stores (for the explorer's state cache). */
  digest(): string {
    const objects = [...this.buckets].map(
      ([name, bucket]) =>
        `${name}{${[...bucket]
          .sort(([a], [b]) => compareKeys(a, b))
          .map(
            ([key, o]) =>
              `${key}=${o.etag};${JSON.stringify(o.metadata)};${o.checksum?.sha256 ?? ''};${o.lastModified}`,
          )
          .join(',')}}`,
    );
    const uploads = [...this.uploads.values()].map(
      (u) => `${u.uploadId}@${u.key}[${[...u.parts].map(([n, p]) => `${n}:${p.etag}`).join(',')}]`,
    );
    const deletes = [...this.deletes].sort().join(',');
    const changes = this.options.putConflicts ? `|${[...this.changes].sort().join(',')}` : '';
    return `${objects.join('')}|${uploads.sort().join(',')}|${[...this.uploadCounters].sort().join(',')}|${deletes}${changes}`;
  }

  /**
   * Answers one SDK request (`name` is the command name without `Command`); throws SimServiceError.
   * `begunAt`: for a PutObject in flight (putConflicts), what {@link S3Model.changesOf} said when its
   * upload began.
   */
  handle(
    name: string,
    input: Record<string, unknown>,
    now: number,
    caller = 'client',
    begunAt?: number,
  ): Record<string, unknown> {
    switch (name) {
      case 'HeadObject':
        return this.headObject(input);
      case 'GetObject':
        return this.getObject(input);
      case 'PutObject':
        return this.putObject(input, now, begunAt);
      case 'CreateMultipartUpload':
        return this.createMultipartUpload(input, caller);
      case 'UploadPart':
        return this.uploadPart(input);
      case 'CompleteMultipartUpload':
        return this.completeMultipartUpload(input, now);
      case 'AbortMultipartUpload':
        return this.abortMultipartUpload(input);
      case 'UploadPartCopy':
        return this.uploadPartCopy(input);
      case 'DeleteObject':
        return this.deleteObject(input);
      case 'ListObjectsV2':
        return this.listObjectsV2(input);
      default:
        throw new SimServiceError(501, 'NotImplemented', `the in-memory S3 does not implement ${name}`);
    }
  }

  /** What one request touches, for the explorer's independence relation. */
  footprint(name: string, input: Record<string, unknown>): Footprint {
    const bucket = String(input.Bucket);
    const object = `s3:${bucket}/${String(input.Key)}`;
    switch (name) {
      case 'HeadObject':
      case 'GetObject':
        return { reads: [object], writes: [] };
      case 'PutObject':
      case 'DeleteObject':
        return { reads: [], writes: [object] };
      case 'UploadPartCopy': {
        const [sourceBucket, ...rest] = String(input.CopySource).replace(/^\//, '').split('/');
        return {
          reads: [`s3:${sourceBucket}/${decodeURIComponent(rest.join('/'))}`],
          writes: [`s3upload:${String(input.UploadId)}`],
        };
      }
      case 'CreateMultipartUpload':
        // A new upload is seen by nobody until it is completed (its id is the caller's own); with
        // conditionalConflicts it reads the key's deletes, which its completion compares.
        return { reads: this.options.conditionalConflicts ? [object] : [], writes: [] };
      case 'UploadPart':
        return { reads: [], writes: [`s3upload:${String(input.UploadId)}`] };
      case 'CompleteMultipartUpload':
      case 'AbortMultipartUpload':
        return { reads: [], writes: [object, `s3upload:${String(input.UploadId)}`] };
      case 'ListObjectsV2':
        // A listing reads the keys under its prefix only: writes elsewhere in the bucket commute with it.
        return { reads: [`s3:${bucket}/${String(input.Prefix ?? '')}*`], writes: [] };
      default:
        return { reads: [], writes: [`s3:${bucket}/*`] };
    }
  }

  /** The stack's bucket policy: under its prefixes, object-creating writes and deletes carry their condition. */
  private checkPolicy(operation: string, bucket: string, key: string, input: Record<string, unknown>): void {
    const prefixes = this.options.conditionalPrefixes?.[bucket] ?? [];
    if (!prefixes.some((p) => key.startsWith(p))) return;
    const conditional =
      operation === 'DeleteObject'
        ? input.IfMatch !== undefined
        : input.IfMatch !== undefined || input.IfNoneMatch !== undefined;
    if (!conditional) {
      throw new SimServiceError(
        403,
        'AccessDenied',
        `${operation} without its condition is denied by the bucket policy`,
      );
    }
  }

  private bucket(name: unknown): Map<string, StoredObject> {
    const bucket = this.buckets.get(String(name));
    if (!bucket) throw new SimServiceError(404, 'NoSuchBucket', 'The specified bucket does not exist');
    return bucket;
  }

  private headObject(input: Record<string, unknown>): Record<string, unknown> {
    const object = this.bucket(input.Bucket).get(String(input.Key));
    if (!object) throw new SimServiceError(404, 'NotFound', 'Not Found');
    return describe(object, input.ChecksumMode === 'ENABLED');
  }

  private getObject(input: Record<string, unknown>): Record<string, unknown> {
    const object = this.bucket(input.Bucket).get(String(input.Key));
    if (!object) throw new SimServiceError(404, 'NoSuchKey', 'The specified key does not exist.');
    // GetObject API reference: If-Match returns the object only when its ETag is the one given,
    // otherwise 412 Precondition Failed (the reads a window task pins to its listed ETags).
    const ifMatch = input.IfMatch as string | undefined;
    if (ifMatch !== undefined && unquote(ifMatch) !== object.etag) {
      throw new SimServiceError(
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
      );
    }
    const ifNoneMatch = input.IfNoneMatch as string | undefined;
    if (ifNoneMatch !== undefined && unquote(ifNoneMatch) === object.etag) {
      throw new SimServiceError(304, 'NotModified', 'Not Modified');
    }
    return { ...describe(object, input.ChecksumMode === 'ENABLED'), Body: sdkBody(object.body) };
  }

  private putObject(input: Record<string, unknown>, now: number, begunAt?: number): Record<string, unknown> {
    const bucket = this.bucket(input.Bucket);
    const key = String(input.Key);
    const body = toBuffer(input.Body);
    const sha256 = createHash('sha256').update(body).digest('base64');
    if (input.ChecksumSHA256 !== undefined && input.ChecksumSHA256 !== sha256) {
      throw new SimServiceError(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
    }
    this.checkPolicy('PutObject', String(input.Bucket), key, input);
    if (begunAt !== undefined && this.changesOf(String(input.Bucket), key) !== begunAt) throw conflict();
    checkWriteConditions(bucket.get(key), input);
    const object: StoredObject = {
      body,
      etag: md5Hex(body),
      metadata: userMetadata(input.Metadata),
      contentType: String(input.ContentType ?? 'binary/octet-stream'),
      lastModified: now,
      ...(input.ChecksumSHA256 !== undefined || input.ChecksumAlgorithm === 'SHA256'
        ? { checksum: { sha256, type: 'FULL_OBJECT' as const } }
        : {}),
    };
    bucket.set(key, object);
    this.changed(String(input.Bucket), key);
    this.onWrite?.({ bucket: String(input.Bucket), key, kind: 'created', eventName: 'ObjectCreated:Put', object });
    return { ETag: quote(object.etag), ...(object.checksum ? { ChecksumSHA256: object.checksum.sha256 } : {}) };
  }

  private createMultipartUpload(input: Record<string, unknown>, caller: string): Record<string, unknown> {
    this.bucket(input.Bucket);
    // Numbered per caller, so that uploads created in any order by different callers get the same ids.
    const n = (this.uploadCounters.get(caller) ?? 0) + 1;
    this.uploadCounters.set(caller, n);
    const uploadId = `${caller}-upload-${n}`;
    this.uploads.set(uploadId, {
      uploadId,
      bucket: String(input.Bucket),
      key: String(input.Key),
      metadata: userMetadata(input.Metadata),
      contentType: String(input.ContentType ?? 'binary/octet-stream'),
      checksumSHA256: input.ChecksumAlgorithm === 'SHA256',
      parts: new Map(),
      deletesAtCreate: this.deletes.get(`${String(input.Bucket)}/${String(input.Key)}`) ?? 0,
    });
    return { Bucket: input.Bucket, Key: input.Key, UploadId: uploadId };
  }

  private upload(input: Record<string, unknown>): Upload {
    const upload = this.uploads.get(String(input.UploadId));
    if (!upload || upload.bucket !== String(input.Bucket) || upload.key !== String(input.Key)) {
      throw new SimServiceError(404, 'NoSuchUpload', 'The specified upload does not exist.');
    }
    return upload;
  }

  private uploadPart(input: Record<string, unknown>): Record<string, unknown> {
    const upload = this.upload(input);
    const body = toBuffer(input.Body);
    const sha256 = createHash('sha256').update(body).digest('base64');
    if (input.ChecksumSHA256 !== undefined && input.ChecksumSHA256 !== sha256) {
      throw new SimServiceError(400, 'BadDigest', 'The SHA256 you specified did not match the calculated checksum.');
    }
    const part = { body, etag: md5Hex(body), sha256 };
    upload.parts.set(Number(input.PartNumber), part);
    return { ETag: quote(part.etag), ...(upload.checksumSHA256 ? { ChecksumSHA256: sha256 } : {}) };
  }

  private completeMultipartUpload(input: Record<string, unknown>, now: number): Record<string, unknown> {
    const upload = this.upload(input);
    const bucket = this.bucket(input.Bucket);
    const listed = ((input.MultipartUpload as { Parts?: unknown[] } | undefined)?.Parts ?? []) as {
      PartNumber: number;
      ETag: string;
      ChecksumSHA256?: string;
    }[];
    const parts = listed.map((p, i) => {
      const part = upload.parts.get(p.PartNumber);
      const previous = listed[i - 1];
      // Parts must be listed in ascending order (400 InvalidPartOrder on S3; InvalidPart here).
      if (!part || unquote(p.ETag) !== part.etag || (previous !== undefined && p.PartNumber <= previous.PartNumber)) {
        throw new SimServiceError(400, 'InvalidPart', 'One or more of the specified parts could not be found.');
      }
      if (upload.checksumSHA256 && p.ChecksumSHA256 !== part.sha256) {
        throw new SimServiceError(
          400,
          'InvalidRequest',
          `The upload was created using a sha256 checksum. The complete request must include the checksum for each part. It was missing for part ${p.PartNumber} in the request.`,
        );
      }
      return part;
    });
    if (parts.length === 0) throw new SimServiceError(400, 'MalformedXML', 'The XML you provided was not well-formed.');
    parts.forEach((part, i) => {
      if (i < parts.length - 1 && part.body.byteLength < this.minPartBytes) {
        throw new SimServiceError(
          400,
          'EntityTooSmall',
          'Your proposed upload is smaller than the minimum allowed size',
        );
      }
    });
    this.checkPolicy('CompleteMultipartUpload', upload.bucket, upload.key, input);
    const conditional = input.IfMatch !== undefined || input.IfNoneMatch !== undefined;
    if (
      this.options.conditionalConflicts &&
      conditional &&
      (this.deletes.get(`${upload.bucket}/${upload.key}`) ?? 0) !== upload.deletesAtCreate
    ) {
      throw conflict();
    }
    checkWriteConditions(bucket.get(upload.key), input);
    const body = Buffer.concat(parts.map((p) => p.body));
    const etag = `${md5Hex(Buffer.concat(parts.map((p) => Buffer.from(p.etag, 'hex'))))}-${parts.length}`;
    const object: StoredObject = {
      body,
      etag,
      metadata: upload.metadata,
      contentType: upload.contentType,
      lastModified: now,
      ...(upload.checksumSHA256
        ? {
            checksum: {
              sha256: `${createHash('sha256')
                .update(Buffer.concat(parts.map((p) => Buffer.from(p.sha256, 'base64'))))
                .digest('base64')}-${parts.length}`,
              type: 'COMPOSITE' as const,
            },
          }
        : {}),
    };
    bucket.set(upload.key, object);
    this.changed(upload.bucket, upload.key);
    this.uploads.delete(upload.uploadId);
    this.onWrite?.({
      bucket: upload.bucket,
      key: upload.key,
      kind: 'created',
      eventName: 'ObjectCreated:CompleteMultipartUpload',
      object,
    });
    return {
      Bucket: upload.bucket,
      Key: upload.key,
      ETag: quote(etag),
      ...(object.checksum ? { ChecksumSHA256: object.checksum.sha256, ChecksumType: object.checksum.type } : {}),
    };
  }

  private abortMultipartUpload(input: Record<string, unknown>): Record<string, unknown> {
    const upload = this.upload(input);
    this.uploads.delete(upload.uploadId);
    return {};
  }

  private uploadPartCopy(input: Record<string, unknown>): Record<string, unknown> {
    const upload = this.upload(input);
    const [sourceBucketName, ...rest] = String(input.CopySource).replace(/^\//, '').split('/');
    const source = this.bucket(sourceBucketName).get(decodeURIComponent(rest.join('/')));
    if (!source) throw new SimServiceError(404, 'NoSuchKey', 'The specified key does not exist.');
    const sourceIfMatch = input.CopySourceIfMatch as string | undefined;
    if (sourceIfMatch !== undefined && unquote(sourceIfMatch) !== source.etag) {
      throw new SimServiceError(
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
      );
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(String(input.CopySourceRange ?? ''));
    const body = range ? source.body.subarray(Number(range[1]), Number(range[2]) + 1) : source.body;
    const sha256 = createHash('sha256').update(body).digest('base64');
    const part = { body: Buffer.from(body), etag: md5Hex(body), sha256 };
    upload.parts.set(Number(input.PartNumber), part);
    return { CopyPartResult: { ETag: quote(part.etag), ...(upload.checksumSHA256 ? { ChecksumSHA256: sha256 } : {}) } };
  }

  private deleteObject(input: Record<string, unknown>): Record<string, unknown> {
    const bucket = this.bucket(input.Bucket);
    const key = String(input.Key);
    const existing = bucket.get(key);
    const ifMatch = input.IfMatch as string | undefined;
    this.checkPolicy('DeleteObject', String(input.Bucket), key, input);
    if (ifMatch !== undefined) {
      if (!existing) throw new SimServiceError(404, 'NoSuchKey', 'The specified key does not exist.');
      if (unquote(ifMatch) !== '*' && unquote(ifMatch) !== existing.etag) {
        throw new SimServiceError(
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
        );
      }
    }
    if (existing) {
      bucket.delete(key);
      if (this.options.conditionalConflicts) {
        const at = `${String(input.Bucket)}/${key}`;
        this.deletes.set(at, (this.deletes.get(at) ?? 0) + 1);
      }
      this.changed(String(input.Bucket), key);
      this.onWrite?.({ bucket: String(input.Bucket), key, kind: 'removed', eventName: 'ObjectRemoved:Delete' });
    }
    return {};
  }

  /** Counts a successful write or delete of a key (putConflicts). */
  private changed(bucket: string, key: string): void {
    if (!this.options.putConflicts) return;
    const at = `${bucket}/${key}`;
    this.changes.set(at, (this.changes.get(at) ?? 0) + 1);
  }

  private listObjectsV2(input: Record<string, unknown>): Record<string, unknown> {
    const bucket = this.bucket(input.Bucket);
    const prefix = String(input.Prefix ?? '');
    const delimiter = input.Delimiter as string | undefined;
    const maxKeys = Number(input.MaxKeys ?? 1000);
    const after = (input.ContinuationToken as string | undefined) ?? (input.StartAfter as string | undefined) ?? '';
    const contents: Record<string, unknown>[] = [];
    const commonPrefixes: string[] = [];
    let last: string | undefined;
    let truncated = false;
    for (const key of [...bucket.keys()].sort(compareKeys)) {
      if (!key.startsWith(prefix) || (after !== '' && compareKeys(key, after) <= 0)) continue;
      if (contents.length + commonPrefixes.length >= maxKeys) {
        truncated = true;
        break;
      }
      const at = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
      if (delimiter && at >= 0) {
        const common = key.slice(0, at + delimiter.length);
        if (commonPrefixes[commonPrefixes.length - 1] !== common) commonPrefixes.push(common);
        last = key;
        continue;
      }
      const object = bucket.get(key) as StoredObject;
      contents.push({
        Key: key,
        ETag: quote(object.etag),
        Size: object.body.byteLength,
        LastModified: new Date(object.lastModified),
      });
      last = key;
    }
    return {
      KeyCount: contents.length + commonPrefixes.length,
      IsTruncated: truncated,
      ...(contents.length > 0 ? { Contents: contents } : {}),
      ...(commonPrefixes.length > 0 ? { CommonPrefixes: commonPrefixes.map((Prefix) => ({ Prefix })) } : {}),
      ...(truncated && last !== undefined ? { NextContinuationToken: last } : {}),
    };
  }
}

/** One object as S3 stores it. */
export interface StoredObject {
  readonly body: Buffer;
  /** Without quotes. */
  readonly etag: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly lastModified: number;
  readonly checksum?: { readonly sha256: string; readonly type: 'FULL_OBJECT' | 'COMPOSITE' };
}

/** A write or a delete, as S3 would describe it in an event notification. */
export interface ObjectChange {
  readonly bucket: string;
  readonly key: string;
  readonly kind: 'created' | 'removed';
  readonly eventName: string;
  readonly object?: StoredObject;
}

/** What a request reads and writes, by resource name. */
export interface Footprint {
  readonly reads: readonly string[];
  readonly writes: readonly string[];
}

interface Upload {
  readonly uploadId: string;
  readonly bucket: string;
  readonly key: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly contentType: string;
  readonly checksumSHA256: boolean;
  readonly parts: Map<number, { body: Buffer; etag: string; sha256: string }>;
  /** The key's successful deletes when the upload was created (conditionalConflicts). */
  readonly deletesAtCreate: number;
}

/** S3's 409 ConditionalRequestConflict: a conflicting operation on the key during the write. */
function conflict(): SimServiceError {
  return new SimServiceError(
    409,
    'ConditionalRequestConflict',
    'A conflicting conditional operation is currently in progress against this resource. Please try again.',
  );
}

function checkWriteConditions(existing: StoredObject | undefined, input: Record<string, unknown>): void {
  const ifNoneMatch = input.IfNoneMatch as string | undefined;
  const ifMatch = input.IfMatch as string | undefined;
  if (ifNoneMatch !== undefined && existing) {
    throw new SimServiceError(
      412,
      'PreconditionFailed',
      'At least one of the pre-conditions you specified did not hold',
    );
  }
  if (ifMatch !== undefined) {
    if (!existing) throw new SimServiceError(404, 'NoSuchKey', 'The specified key does not exist.');
    if (unquote(ifMatch) !== existing.etag) {
      throw new SimServiceError(
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
      );
    }
  }
}

function describe(object: StoredObject, withChecksum: boolean): Record<string, unknown> {
  return {
    ETag: quote(object.etag),
    ContentLength: object.body.byteLength,
    ContentType: object.contentType,
    LastModified: new Date(object.lastModified),
    Metadata: { ...object.metadata },
    ...(withChecksum && object.checksum
      ? { ChecksumSHA256: object.checksum.sha256, ChecksumType: object.checksum.type }
      : {}),
  };
}

const MAX_METADATA_BYTES = 2048;

function userMetadata(metadata: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  let bytes = 0;
  for (const [name, value] of Object.entries((metadata ?? {}) as Record<string, string>)) {
    out[name.toLowerCase()] = String(value);
    bytes += Buffer.byteLength(name) + Buffer.byteLength(String(value));
  }
  if (bytes > MAX_METADATA_BYTES) {
    throw new SimServiceError(
      400,
      'MetadataTooLarge',
      'Your metadata headers exceed the maximum allowed metadata size',
    );
  }
  return out;
}

function toBuffer(body: unknown): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (Buffer.isBuffer(body)) return Buffer.from(body);
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  throw new SimServiceError(400, 'InvalidArgument', 'the in-memory S3 takes string and byte bodies only');
}

/** S3 lists keys in the binary order of their UTF-8 bytes. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function md5Hex(bytes: Buffer): string {
  return createHash('md5').update(bytes).digest('hex');
}

function quote(etag: string): string {
  return `"${etag}"`;
}

function unquote(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}

/**
 * A GetObject body as the SDK answers it: a Node Readable with the SDK's stream mixin
 * (`transformToByteArray`, `transformToString`), which readers of small objects use.
 */
function sdkBody(bytes: Buffer): Readable {
  const body = Readable.from([bytes]);
  return Object.assign(body, {
    transformToByteArray: async () => new Uint8Array(bytes),
    transformToString: async (encoding: BufferEncoding = 'utf8') => bytes.toString(encoding),
  });
}
