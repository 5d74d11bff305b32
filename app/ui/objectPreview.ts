import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { isMissingKey } from '../../src/s3/errors.js';

/** An object's HEAD as the console shows it. */
export interface ObjectHeadInfo {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
  /** Epoch ms. */
  readonly lastModified: number;
  readonly contentType?: string;
  /** User metadata (source ETag, code version, counts, side outputs...). */
  readonly metadata: Readonly<Record<string, string>>;
}

/**
 * HeadObject, or undefined when the key does not exist.
 *
 * @example
 * const head = await headObject(s3, 'rerun-output', 'normalized/rerun-input/dt=2026-01-05/a.csv.ndjson');
 */
export async function headObject(s3: S3Client, bucket: string, key: string): Promise<ObjectHeadInfo | undefined> {
  try {
    const out = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return {
      key,
      etag: (out.ETag ?? '').replace(/"/g, ''),
      size: out.ContentLength ?? 0,
      lastModified: out.LastModified?.getTime() ?? 0,
      ...(out.ContentType ? { contentType: out.ContentType } : {}),
      metadata: out.Metadata ?? {},
    };
  } catch (error) {
    if (isMissingKey(error)) return undefined;
    throw error;
  }
}

/** The first lines of an object and whether there is more. */
export interface ObjectPreview {
  readonly head: ObjectHeadInfo;
  readonly lines: readonly string[];
  /** The object continues past the lines shown. */
  readonly truncated: boolean;
}

/**
 * An object's metadata and its first `maxLines` lines, read with one ranged GET of at most
 * `maxBytes` (an output of gigabytes costs the same as a small one).
 *
 * @example
 * const preview = await previewObject(s3, 'rerun-output', key, { maxLines: 10 });
 */
export async function previewObject(
  s3: S3Client,
  bucket: string,
  key: string,
  options: { readonly maxLines?: number; readonly maxBytes?: number } = {},
): Promise<ObjectPreview | undefined> {
  const head = await headObject(s3, bucket, key);
  if (!head) return undefined;
  const maxBytes = options.maxBytes ?? 16 * 1024;
  const maxLines = options.maxLines ?? 10;
  if (head.size === 0) return { head, lines: [], truncated: false };
  let text: string;
  try {
    // IfMatch: the lines belong to the object whose metadata is shown, not to one written since.
    const out = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=0-${maxBytes - 1}`, IfMatch: `"${head.etag}"` }),
    );
    text = Buffer.from((await out.Body?.transformToByteArray()) ?? new Uint8Array()).toString('utf8');
  } catch (error) {
    if (isMissingKey(error)) return undefined;
    throw error;
  }
  const all = text.split('\n');
  // A range that cuts a line leaves a partial last line: drop it unless it is the object's end.
  const complete =
    head.size <= maxBytes ? all.filter((line, i) => line !== '' || i < all.length - 1) : all.slice(0, -1);
  return { head, lines: complete.slice(0, maxLines), truncated: head.size > maxBytes || complete.length > maxLines };
}
