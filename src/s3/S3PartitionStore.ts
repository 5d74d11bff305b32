import type { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { WorkerConfigurationError } from '../errors.js';
import { stripQuotes } from '../intake/parseS3Event.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { classifyS3Error, httpStatus, isMissingKey } from './errors.js';
import { readWholeObject } from './readWholeObject.js';

/** One listed object. */
export interface ListedObject {
  readonly key: string;
  /** ETag without quotes. */
  readonly etag: string;
  readonly size: number;
  /** S3's LastModified (epoch ms), when listed. */
  readonly lastModified?: number;
}

/** Options of {@link S3PartitionStore.list}. */
export interface ListOptions {
  readonly prefix: string;
  /**
   * List keys after this one only (ListObjectsV2 `StartAfter`).
   * @default from the start of the prefix
   */
  readonly startAfter?: string;
  /**
   * Stop (without requesting further pages) once a key makes this return true. Keys come in S3's
   * lexicographic order, so a window's end is found without listing the rest of the prefix.
   * @default never: list the whole prefix
   */
  readonly stopAt?: (key: string) => boolean;
}

/** The names of {@link ListOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const LIST_OPTION_NAMES = {
  prefix: true,
  startAfter: true,
  stopAt: true,
} as const satisfies OptionNames<ListOptions>;

/** Result of a GET that must read exactly one version of an object. */
export type GetExactResult =
  | { readonly status: 'ok'; readonly body: Readable; readonly contentLength: number }
  /** 412: the object's ETag is no longer the one listed (it was overwritten since). */
  | { readonly status: 'changed' }
  | { readonly status: 'missing' };

/**
 * The reads a window task needs beyond S3ObjectStore's: listing with ETags (the lineage, the
 * bulk done-check) and GET pinned to a listed ETag. Thin: it classifies 404/412, reports
 * configuration failures (403, NoSuchBucket) as non-retryable errors (src/s3/errors.ts), and lets
 * every other error through.
 *
 * @example
 * const store = new S3PartitionStore(s3);
 * for await (const o of store.list('out', { prefix: 'normalized/in/dt=2026-01-05/' })) console.log(o.key, o.etag);
 */
export class S3PartitionStore {
  /** ListObjectsV2 requests sent (the cost of a plan, reported by status and backfill). */
  listRequests = 0;
  /** HeadObject requests sent by {@link headMetadata} (outputs whose listing disagrees with their input). */
  headRequests = 0;

  constructor(readonly client: S3Client) {}

  /** Lists keys with their ETags and sizes, page by page (1000 keys per request). */
  async *list(bucket: string, options: ListOptions): AsyncGenerator<ListedObject> {
    checkOptions('S3PartitionStore.list', options, LIST_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
    let token: string | undefined;
    do {
      this.listRequests++;
      const request = new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: options.prefix,
        ...(token ? { ContinuationToken: token } : options.startAfter ? { StartAfter: options.startAfter } : {}),
      });
      const page = await this.client.send(request).catch((error: unknown) => {
        throw classifyS3Error(error, { operation: 'ListObjectsV2', bucket }) ?? error;
      });
      for (const object of page.Contents ?? []) {
        if (!object.Key) continue;
        if (options.stopAt?.(object.Key)) return;
        yield {
          key: object.Key,
          etag: stripQuotes(object.ETag ?? ''),
          size: object.Size ?? 0,
          ...(object.LastModified ? { lastModified: object.LastModified.getTime() } : {}),
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** Every key of {@link list}, collected. */
  async listAll(bucket: string, options: ListOptions): Promise<ListedObject[]> {
    const objects: ListedObject[] = [];
    for await (const object of this.list(bucket, options)) objects.push(object);
    return objects;
  }

  /**
   * GetObject with `If-Match: <etag>`: reads the content the lineage names, or answers `changed`
   * (412) when the object was replaced since it was listed, so a summary never mixes versions.
   */
  async getExact(bucket: string, key: string, etag: string): Promise<GetExactResult> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, IfMatch: `"${etag}"` }));
      return { status: 'ok', body: out.Body as Readable, contentLength: out.ContentLength ?? 0 };
    } catch (error) {
      if (httpStatus(error) === 412) return { status: 'changed' };
      if (isMissingKey(error)) return { status: 'missing' };
      throw classifyS3Error(error, { operation: 'GetObject', bucket, key }) ?? error;
    }
  }

  /**
   * An object's user metadata (keys lower-case, without `x-amz-meta-`), or undefined on 404: what an
   * output records of the input it was built from (src/done/outputMetadata.ts). One HeadObject.
   */
  async headMetadata(bucket: string, key: string): Promise<Readonly<Record<string, string>> | undefined> {
    this.headRequests++;
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return out.Metadata ?? {};
    } catch (error) {
      if (isMissingKey(error)) return undefined;
      throw classifyS3Error(error, { operation: 'HeadObject', bucket, key }) ?? error;
    }
  }

  /**
   * The whole object as bytes (small objects only: summaries), or undefined on 404. A body cut off
   * mid-read is read again (src/s3/readWholeObject.ts).
   */
  async getBytes(bucket: string, key: string): Promise<Buffer | undefined> {
    try {
      return (await readWholeObject(this.client, { Bucket: bucket, Key: key })).bytes;
    } catch (error) {
      if (isMissingKey(error)) return undefined;
      throw classifyS3Error(error, { operation: 'GetObject', bucket, key }) ?? error;
    }
  }
}
