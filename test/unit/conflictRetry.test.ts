import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { fullJitterDelay } from '../../src/s3/conflictRetry.js';
import { S3ObjectStore, WriteStatus } from '../../src/s3/S3ObjectStore.js';

/** An S3 client whose PutObject answers 409 ConditionalRequestConflict `conflicts` times, then 200. */
function conflictingClient(conflicts: number) {
  const sent: string[] = [];
  const client = {
    async send(command: { constructor: { name: string } }) {
      sent.push(command.constructor.name);
      if (sent.length <= conflicts) {
        throw Object.assign(new Error('conflict'), {
          name: 'ConditionalRequestConflict',
          $metadata: { httpStatusCode: 409 },
        });
      }
      return { ETag: '"e1"' };
    },
  };
  return { client: client as unknown as S3Client, sent };
}

const put = (store: S3ObjectStore) =>
  store.put('out', 'k', new Uint8Array([1]), { condition: { ifNoneMatch: '*' }, metadata: {}, sha256Base64: 'x' });

describe('the S3 adapter retries a 409 ConditionalRequestConflict, with full jitter', () => {
  it('sleeps random() * min(cap, base * 2^n) before retry n, then returns the write', async () => {
    const { client, sent } = conflictingClient(3);
    const slept: number[] = [];
    const draws = [0.5, 0.25, 1 - Number.EPSILON];
    const store = new S3ObjectStore(client, {
      conflictRetry: {
        baseMs: 100,
        capMs: 300,
        random: () => draws.shift() ?? 0,
        sleep: async (ms) => {
          slept.push(ms);
        },
      },
    });
    expect(await put(store)).toEqual({ status: WriteStatus.WRITTEN, etag: 'e1' });
    expect(sent).toEqual(['PutObjectCommand', 'PutObjectCommand', 'PutObjectCommand', 'PutObjectCommand']);
    // Bounds 100, 200, then 400 capped at 300; each delay is a draw of [0, bound).
    expect(slept).toEqual([50, 50, 300 * (1 - Number.EPSILON)]);
  });

  it('returns the conflict after its retries (3 by default), without sleeping after the last attempt', async () => {
    const { client, sent } = conflictingClient(10);
    const slept: number[] = [];
    const store = new S3ObjectStore(client, {
      conflictRetry: { random: () => 1, sleep: async (ms) => void slept.push(ms) },
    });
    expect(await put(store)).toEqual({ status: WriteStatus.CONFLICT });
    expect(sent).toHaveLength(4);
    expect(slept).toEqual([50, 100, 200]);
  });

  it('draws a different delay for each writer: no two retry in step', () => {
    expect(fullJitterDelay(0, { baseMs: 50, capMs: 1000 }, () => 0)).toBe(0);
    expect(fullJitterDelay(10, { baseMs: 50, capMs: 1000 }, () => 0.5)).toBe(500);
    expect(fullJitterDelay(1, { baseMs: 50, capMs: 1000 }, () => 0.1)).toBeCloseTo(10);
  });

  it('does not retry a 409 on CompleteMultipartUpload: AWS advises a new upload', async () => {
    const { client, sent } = conflictingClient(1);
    const store = new S3ObjectStore(client, { conflictRetry: { sleep: async () => {} } });
    const result = await store.completeMultipartUpload('out', 'k', {
      uploadId: 'u',
      parts: [],
      condition: { ifNoneMatch: '*' },
    });
    expect(result).toEqual({ status: WriteStatus.CONFLICT });
    expect(sent).toEqual(['CompleteMultipartUploadCommand']);
  });
});
