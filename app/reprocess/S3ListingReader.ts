import { ListObjectsV2Command, type ListObjectsV2CommandOutput, type S3Client } from '@aws-sdk/client-s3';
import { stripQuotes } from '../../src/intake/parseS3Event.js';
import type { ListedObject } from './planReprocess.js';
import { type ListPage, listSharded, type ShardedListingCounters } from './shardedListing.js';

/**
 * The listings a reprocess plans from: ListObjectsV2 page by page (1,000 keys per request, keys
 * in UTF-8 binary order) with ETag, size and LastModified, and the exact-key lookup the planner
 * uses for keys out of merge order. Counts its requests (the plan's cost).
 *
 * @example
 * const reader = new S3ListingReader(s3);
 * for await (const o of reader.list('in', 'incoming/')) console.log(o.key, o.lastModified);
 */
export class S3ListingReader {
  /** ListObjectsV2 requests of the listings. */
  listRequests = 0;
  /** ListObjectsV2 requests of exact-key lookups. */
  lookupRequests = 0;

  constructor(readonly client: S3Client) {}

  /**
   * Every object under `prefix`, page by page. The next page is requested as soon as a page
   * arrives (its continuation token is known), so a consumer never waits a full round trip per
   * page: at most two pages per listing are in memory.
   */
  async *list(bucket: string, prefix: string): AsyncGenerator<ListedObject> {
    let pending: Promise<ListObjectsV2CommandOutput> | undefined = this.page(bucket, prefix);
    while (pending) {
      const page: ListObjectsV2CommandOutput = await pending;
      const token = page.IsTruncated ? page.NextContinuationToken : undefined;
      pending = token ? this.page(bucket, prefix, token) : undefined;
      // A consumer that stops early leaves the prefetch unawaited: do not let it become unhandled.
      pending?.catch(() => {});
      for (const object of page.Contents ?? []) {
        if (object.Key) yield toListed(object);
      }
    }
  }

  /**
   * Every object under `prefix` in the same order as {@link list}, read as key ranges with up to
   * `shards` requests at once (app/reprocess/shardedListing.ts); `shards` 1 is {@link list}.
   * `pageSize` (MaxKeys, at most 1,000) exists for tests that split ranges over a few keys.
   */
  listSharded(
    bucket: string,
    prefix: string,
    shards: number,
    options: { readonly pageSize?: number; readonly counters?: ShardedListingCounters } = {},
  ): AsyncGenerator<ListedObject> {
    if (shards === 1) return this.list(bucket, prefix);
    const listPage: ListPage = async (input) => {
      this.listRequests++;
      const page = await this.client.send(
        new ListObjectsV2Command({ ...input, ...(options.pageSize ? { MaxKeys: options.pageSize } : {}) }),
      );
      return {
        objects: (page.Contents ?? []).filter((o) => o.Key !== undefined).map(toListed),
        nextToken: page.IsTruncated ? page.NextContinuationToken : undefined,
      };
    };
    return listSharded(listPage, bucket, prefix, {
      shards,
      ...(options.counters ? { counters: options.counters } : {}),
    });
  }

  private page(bucket: string, prefix: string, token?: string): Promise<ListObjectsV2CommandOutput> {
    this.listRequests++;
    return this.client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }),
    );
  }

  /**
   * The object at exactly `key`, or undefined: ListObjectsV2 with `Prefix` = the key and `MaxKeys`
   * 1 (the key itself sorts before every longer key it prefixes). A listing, not a HEAD, so its
   * LastModified has the same resolution as the listing it is compared with, and a missing key
   * costs no 403-versus-404 question.
   */
  async find(bucket: string, key: string): Promise<ListedObject | undefined> {
    this.lookupRequests++;
    const page = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, MaxKeys: 1 }));
    const first = page.Contents?.[0];
    return first?.Key === key ? toListed(first) : undefined;
  }
}

function toListed(object: { Key?: string; ETag?: string; Size?: number; LastModified?: Date }): ListedObject {
  return {
    key: object.Key as string,
    etag: stripQuotes(object.ETag ?? ''),
    size: object.Size ?? 0,
    lastModified: object.LastModified?.getTime() ?? 0,
  };
}
