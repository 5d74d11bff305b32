import type { S3Client } from '@aws-sdk/client-s3';
import { S3Model } from '../sim/model/S3Model.js';

/** One request the in-memory client answered: the command's name without `Command`, and its input. */
export interface MemoryRequest {
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/**
 * An S3 client answered in process by the simulation tier's S3 model (test/sim/model/S3Model.ts,
 * held to moto's answers by test/sim/conformance): conditional writes, 304s, 404s and multipart
 * uploads as S3 gives them, with no emulator to start. Unit tests of the worker's rounds use it
 * where they run once per mutant (vitest.mutation.config.ts). `before` runs ahead of each request:
 * a test that needs another writer to act at a given step acts there.
 *
 * @example
 * const s3 = new MemoryS3(['in', 'out']);
 * const store = new S3ObjectStore(s3.client);
 */
export class MemoryS3 {
  readonly model: S3Model;
  /** Every request answered, in order. */
  readonly requests: MemoryRequest[] = [];
  /** Called before each request is answered (awaited); requests it makes itself are logged too. */
  before?: (request: MemoryRequest) => void | Promise<void>;
  readonly client: S3Client;
  private now = 0;

  /** `minPartBytes`: the smallest part the model accepts (small, so a test's multipart output stays small). */
  constructor(buckets: readonly string[], options: { minPartBytes?: number } = {}) {
    this.model = new S3Model(options);
    for (const bucket of buckets) this.model.createBucket(bucket);
    const send = async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const request = { name: command.constructor.name.replace(/Command$/, ''), input: command.input };
      await this.before?.(request);
      this.requests.push(request);
      return this.model.handle(request.name, request.input, ++this.now);
    };
    this.client = { send } as unknown as S3Client;
  }

  /** The request names answered since the last clear, e.g. `['HeadObject', 'GetObject']`. */
  names(): string[] {
    return this.requests.map((r) => r.name);
  }

  /** Forgets the requests answered so far. */
  clear(): void {
    this.requests.length = 0;
  }

  /** Writes an object directly (no request logged, no hook): what another client uploads. Returns its ETag. */
  write(bucket: string, key: string, body: string): string {
    this.model.handle('PutObject', { Bucket: bucket, Key: key, Body: body }, ++this.now);
    return this.etag(bucket, key) ?? '';
  }

  /** Deletes an object directly (no request logged, no hook). */
  remove(bucket: string, key: string): void {
    this.model.handle('DeleteObject', { Bucket: bucket, Key: key }, ++this.now);
  }

  /** The ETag of the object at a key, or undefined. */
  etag(bucket: string, key: string): string | undefined {
    return this.model.peek(bucket, key)?.etag;
  }

  /** The text of the object at a key, or undefined. */
  text(bucket: string, key: string): string | undefined {
    return this.model.peek(bucket, key)?.body.toString('utf8');
  }

  /** Every key of a bucket. */
  keys(bucket: string): string[] {
    return this.model.keys(bucket);
  }
}
