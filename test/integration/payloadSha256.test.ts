import { createHash, createHmac } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

const MIB = 1024 * 1024;

/** The largest single update() the SDK's SHA-256 received: the signer hashing a body shows here. */
const hashed: number[] = [];

/** The SDK's hash constructor (SigV4 signing and checksums), counting what it is fed. */
class CountingSha256 {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    const bytes = toBytes(data);
    hashed.push(bytes.byteLength);
    this.hash.update(bytes);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

describe('writes are signed with the SHA-256 rerun computed of the body', () => {
  const { s3 } = testClients();
  const client = new S3Client({
    endpoint: awsEndpoint(),
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    sha256: CountingSha256,
  });
  const store = new S3ObjectStore(client);
  const body = Buffer.alloc(2 * MIB, 'rerun ');
  const sha256Base64 = createHash('sha256').update(body).digest('base64');
  let bucket: string;

  beforeAll(async () => {
    bucket = await createBucket(s3, uniqueName('sha-out'));
  });

  it('a PutObject and an UploadPart: the SDK never hashes the body a second time, and S3 stores the digest', async () => {
    hashed.length = 0;
    const put = await store.put(bucket, 'single.ndjson', body, {
      condition: { ifNoneMatch: '*' },
      metadata: {},
      sha256Base64,
    });
    expect(put.status).toBe('written');
    const uploadId = await store.createMultipartUpload(bucket, 'multi.ndjson', { metadata: {} });
    const part = await store.uploadPart(bucket, 'multi.ndjson', { uploadId, partNumber: 1, body, sha256Base64 });
    const done = await store.completeMultipartUpload(bucket, 'multi.ndjson', {
      uploadId,
      parts: [part],
      condition: { ifNoneMatch: '*' },
    });
    expect(done.status).toBe('written');
    // The signer hashed its canonical request and keys (small strings), never the 2 MiB body.
    expect(hashed.length).toBeGreaterThan(0);
    expect(Math.max(...hashed)).toBeLessThan(64 * 1024);
    expect((await store.head(bucket, 'single.ndjson'))?.checksumSHA256).toBe(sha256Base64);
  });
});
