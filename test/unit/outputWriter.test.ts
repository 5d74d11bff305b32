import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UNSEALED_INTEGRITY } from '../../src/done/integrity.js';
import { MetadataKey } from '../../src/done/outputMetadata.js';
import { WorkerConfigurationError } from '../../src/errors.js';
import { MAX_PARTS, MIN_PART_BYTES, OutputWriter } from '../../src/publish/OutputWriter.js';
import { SealDigests } from '../../src/publish/sealDigests.js';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';

const MIB = 1024 * 1024;

interface UploadedPart {
  readonly partNumber: number;
  /** The bytes as they were when the upload was answered (a reused buffer overwritten early would show here). */
  readonly bytes: Buffer;
  /** The ArrayBuffer the body lives in: how many distinct ones the writer used. */
  readonly backing: ArrayBufferLike;
  readonly sha256Base64: string;
}

/** A multipart-only store whose UploadPart reads its body after a delay, as a slow network would. */
function slowMultipartStore(delayMs = 2) {
  const parts: UploadedPart[] = [];
  const created: Record<string, string>[] = [];
  const seals: {
    etag: string;
    metadata: Record<string, string>;
    contentType?: string;
    ranges?: readonly { start: number; end: number; sha256Base64: string }[];
  }[] = [];
  const store = {
    minPartBytes: MIN_PART_BYTES,
    createMultipartUpload: async (_bucket: string, _key: string, options: { metadata: Record<string, string> }) => {
      created.push(options.metadata);
      return 'upload-1';
    },
    uploadPart: async (
      _bucket: string,
      _key: string,
      part: { uploadId: string; partNumber: number; body: Uint8Array; sha256Base64: string },
    ) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      parts.push({
        partNumber: part.partNumber,
        bytes: Buffer.from(part.body),
        backing: part.body.buffer,
        sha256Base64: part.sha256Base64,
      });
      return { partNumber: part.partNumber, etag: `"etag-${part.partNumber}"`, sha256Base64: part.sha256Base64 };
    },
    completeMultipartUpload: async () => ({ status: 'written' as const, etag: 'final-3' }),
    sealInPlace: async (_bucket: string, _key: string, seal: (typeof seals)[number]) => {
      seals.push(seal);
      return { status: 'written' as const, etag: 'sealed' };
    },
    abortMultipartUpload: async () => {},
    put: async () => ({ status: 'written' as const, etag: 'single' }),
  };
  return { store: store as unknown as S3ObjectStore, parts, created, seals };
}

function writer(store: S3ObjectStore, partBytes = MIN_PART_BYTES): OutputWriter {
  return new OutputWriter({
    store,
    bucket: 'out',
    key: 'normalized/a.ndjson',
    source: { bucket: 'in', key: 'incoming/a.csv', etag: 'abc' },
    codeVersion: '1',
    partBytes,
  });
}

describe('OutputWriter: multipart parts from two reused buffers', () => {
  it('cuts parts of exactly partBytes (the last one shorter), whatever the sizes of the writes', async () => {
    const { store, parts } = slowMultipartStore();
    const out = writer(store);
    for (let i = 0; i < 3; i++) await out.write(Buffer.alloc(4 * MIB, 97 + i));
    await out.publish({ ifNoneMatch: '*' });
    expect(parts.map((p) => p.bytes.byteLength)).toEqual([5 * MIB, 5 * MIB, 2 * MIB]);
    expect(
      Buffer.concat(parts.map((p) => p.bytes)).equals(
        Buffer.concat([0, 1, 2].map((i) => Buffer.alloc(4 * MIB, 97 + i))),
      ),
    ).toBe(true);
  });

  it('streams a large output through two part buffers, never overwriting a part before its upload is answered', async () => {
    const { store, parts } = slowMultipartStore();
    const out = writer(store);
    const lines: string[] = [];
    let text = '';
    // ~31 MiB of distinct lines in ~64 KiB writes, as the normalizer's line batcher sends them.
    for (let row = 0; text.length < 31 * MIB; row++) {
      lines.push(`{"id":"${row}","payload":"row ${row} ${'x'.repeat(row % 200)}"}`);
      if (lines.length === 1000) {
        const chunk = `${lines.join('\n')}\n`;
        lines.length = 0;
        text += chunk;
        await out.write(chunk);
      }
    }
    const result = await out.publish({ ifNoneMatch: '*' });
    expect(result.status).toBe('written');
    const expected = Buffer.from(text, 'utf8');
    expect(parts.map((p) => p.partNumber)).toEqual(parts.map((_, i) => i + 1));
    expect(Buffer.concat(parts.map((p) => p.bytes)).equals(expected)).toBe(true);
    for (const part of parts) {
      expect(part.sha256Base64).toBe(createHash('sha256').update(part.bytes).digest('base64'));
    }
    expect(parts.length).toBe(Math.ceil(expected.byteLength / MIN_PART_BYTES));
    // One buffer fills while the other uploads: no allocation per part.
    expect(new Set(parts.map((p) => p.backing)).size).toBe(2);
    expect(out.bytesWritten).toBe(expected.byteLength);
  });

  it('splits a multi-byte character across two parts and keeps every byte', async () => {
    const { store, parts } = slowMultipartStore();
    const out = writer(store);
    // 3-byte and 4-byte UTF-8 characters, in writes whose boundaries never line up with a part's.
    const chunk = `${'é€😀'.repeat(7_001)}\n`;
    const chunks: string[] = [];
    for (let bytes = 0; bytes < 12 * MIB; bytes += Buffer.byteLength(chunk)) {
      chunks.push(chunk);
      await out.write(chunk);
    }
    await out.publish({ ifNoneMatch: '*' });
    const expected = Buffer.from(chunks.join(''), 'utf8');
    expect(parts.slice(0, -1).every((p) => p.bytes.byteLength === MIN_PART_BYTES)).toBe(true);
    expect(Buffer.concat(parts.map((p) => p.bytes)).equals(expected)).toBe(true);
  });

  it('seals a completed upload with the digest of the whole content, the counts and the side outputs', async () => {
    const { store, parts, created, seals } = slowMultipartStore(0);
    const out = writer(store);
    const content = Buffer.alloc(11 * MIB, 120);
    await out.write(content);
    const result = await out.publish({ ifNoneMatch: '*' }, { records: 7, quarantined: 2 }, { quarantine: 'q1' });
    // Until the seal, the upload says it is not done.
    expect(created[0]?.[MetadataKey.INTEGRITY]).toBe(UNSEALED_INTEGRITY);
    expect(result).toEqual({ status: 'written', etag: 'sealed' });
    expect(seals).toHaveLength(1);
    const seal = seals[0] as (typeof seals)[number];
    expect(seal.etag).toBe('final-3');
    expect(seal.contentType).toBe('application/x-ndjson');
    expect(parts).toHaveLength(3);
    const whole = createHash('sha256').update(content);
    const wholeBase64 = whole.copy().digest('base64');
    // Up to 5 GiB the seal copies the whole object as one part: S3 then stores the SHA-256 of that
    // part's SHA-256, with the count 1.
    expect(seal.ranges).toEqual([{ start: 0, end: content.byteLength - 1, sha256Base64: wholeBase64 }]);
    const composite = createHash('sha256').update(whole.digest()).digest('base64');
    expect(seal.metadata[MetadataKey.INTEGRITY]).toBe(
      `sha256-parts:${wholeBase64}:${composite}-1:${content.byteLength}`,
    );
    expect(seal.metadata[MetadataKey.SIDE_OUTPUTS]).toBe('quarantine=q1');
    expect(seal.metadata['rerun-x-records']).toBe('7');
    expect(seal.metadata['rerun-x-quarantined']).toBe('2');
    expect(out.contentChecksum).toBe(wholeBase64);
  });

  it('records who writes a multipart upload (writerId) until its seal, which drops it; without one, nothing', async () => {
    const named = slowMultipartStore(0);
    const out = new OutputWriter({
      store: named.store,
      bucket: 'out',
      key: 'normalized/a.ndjson',
      source: { bucket: 'in', key: 'incoming/a.csv', etag: 'abc' },
      codeVersion: '1',
      writerId: 'message-1',
    });
    await out.write(Buffer.alloc(6 * MIB, 120));
    await out.publish({ ifNoneMatch: '*' });
    expect(named.created[0]?.[MetadataKey.WRITER]).toBe('message-1');
    expect(named.seals[0]?.metadata[MetadataKey.WRITER]).toBeUndefined();

    const anonymous = slowMultipartStore(0);
    const plain = writer(anonymous.store);
    await plain.write(Buffer.alloc(6 * MIB, 120));
    await plain.publish({ ifNoneMatch: '*' });
    expect(anonymous.created[0]).not.toHaveProperty(MetadataKey.WRITER);
  });

  it('reports a seal that lost to another writer as a lost race, and completes nothing twice', async () => {
    const { store, seals } = slowMultipartStore(0);
    (store as unknown as { sealInPlace: () => Promise<unknown> }).sealInPlace = async () => {
      seals.push({ etag: 'x', metadata: {} });
      return { status: 'precondition-failed' };
    };
    const out = writer(store);
    await out.write(Buffer.alloc(6 * MIB, 1));
    let completions = 0;
    const complete = store.completeMultipartUpload.bind(store);
    (store as unknown as { completeMultipartUpload: typeof complete }).completeMultipartUpload = async (...args) => {
      completions++;
      return complete(...args);
    };
    expect(await out.publish({ ifNoneMatch: '*' })).toEqual({ status: 'precondition-failed' });
    expect(seals).toHaveLength(1);
    // The upload is completed: a second publish is refused instead of completing it again.
    expect(out.needsNewUpload).toBe(true);
    await expect(out.publish({ ifMatch: '"other"' })).rejects.toThrow();
    expect(completions).toBe(1);
  });

  it('cuts the seal into copy ranges of whole parts, at most 5 GiB each, and digests each', () => {
    // 5 GiB holds 1,024 parts of S3's minimum.
    expect(new SealDigests(MIN_PART_BYTES).rangeBytes).toBe(1024 * MIN_PART_BYTES);
    expect(new SealDigests(7 * MIB).rangeBytes).toBe(731 * 7 * MIB);
    // The same rule with ranges of at most 10 parts, over 22 parts and a short last one.
    const partBytes = 64;
    const digests = new SealDigests(partBytes, 10.5 * partBytes);
    const part = Buffer.alloc(partBytes, 7);
    const last = Buffer.alloc(5, 9);
    for (let i = 0; i < 22; i++) digests.add(part);
    digests.add(last);
    const plan = digests.finish();
    expect(plan.ranges.map((r) => [r.start, r.end])).toEqual([
      [0, 10 * partBytes - 1],
      [10 * partBytes, 20 * partBytes - 1],
      [20 * partBytes, 22 * partBytes + 5 - 1],
    ]);
    const digestOf = (n: number, tail?: Buffer) => {
      const h = createHash('sha256');
      for (let i = 0; i < n; i++) h.update(part);
      if (tail) h.update(tail);
      return h.digest('base64');
    };
    expect(plan.ranges.map((r) => r.sha256Base64)).toEqual([digestOf(10), digestOf(10), digestOf(2, last)]);
    expect(plan.sha256Base64).toBe(digestOf(22, last));
    const composite = createHash('sha256');
    for (const r of plan.ranges) composite.update(Buffer.from(r.sha256Base64, 'base64'));
    expect(plan.compositeBase64).toBe(composite.digest('base64'));
  });
});

describe('OutputWriter: what cannot be published', () => {
  it('refuses a misspelt option by name, with the nearest known name, as a configuration error', () => {
    const { store } = slowMultipartStore(0);
    const options = { store, bucket: 'out', key: 'k', source: { bucket: 'in', key: 'a', etag: 'e' }, codeVersion: '1' };
    const misspelt = () => new OutputWriter({ ...options, partByte: MIN_PART_BYTES } as never);
    expect(misspelt).toThrow(WorkerConfigurationError);
    expect(misspelt).toThrow(/^OutputWriter: unknown option 'partByte'; did you mean 'partBytes'\?/);
    expect(() => new OutputWriter(options)).not.toThrow();
  });

  it("refuses a part past S3's 10,000-part limit, naming the output and the option to raise", async () => {
    const { store } = slowMultipartStore(0);
    // A store whose minimum part is 1 byte, so 10,001 bytes in parts of 1 byte pass the limit; its
    // UploadPart answers at once (10,000 timers would make the test slow, not stricter).
    let uploaded = 0;
    Object.assign(store, {
      minPartBytes: 1,
      uploadPart: async (_bucket: string, _key: string, part: { partNumber: number; sha256Base64: string }) => {
        uploaded += 1;
        return { partNumber: part.partNumber, etag: `"etag-${part.partNumber}"`, sha256Base64: part.sha256Base64 };
      },
    });
    const out = writer(store, 1);
    await out.write(Buffer.alloc(MAX_PARTS, 1));
    await expect(out.write(Buffer.alloc(1, 2))).rejects.toThrow(
      `output s3://out/normalized/a.ndjson needs more than ${MAX_PARTS} parts of 1 bytes (S3's limit): raise the worker's partBytes`,
    );
    // The 10,001st part was never sent.
    expect(uploaded).toBe(MAX_PARTS);
  });

  it('after a 409 on the completion, refuses to complete the same upload again and says to write anew', async () => {
    const { store } = slowMultipartStore(0);
    let completions = 0;
    (store as unknown as { completeMultipartUpload: () => Promise<unknown> }).completeMultipartUpload = async () => {
      completions += 1;
      return { status: 'conflict' };
    };
    const out = writer(store);
    await out.write(Buffer.alloc(6 * MIB, 1));
    expect(await out.publish({ ifNoneMatch: '*' })).toEqual({ status: 'conflict' });
    expect(out.needsNewUpload).toBe(true);
    await expect(out.publish({ ifNoneMatch: '*' })).rejects.toThrow(
      'multipart upload upload-1 of s3://out/normalized/a.ndjson met a 409 ConditionalRequestConflict: ' +
        'it cannot be completed again; abort it and write the output anew',
    );
    expect(completions).toBe(1);
  });

  it('plans no copy range for a seal of no parts (S3 refuses an empty range)', () => {
    const plan = new SealDigests(64).finish();
    expect(plan.ranges).toEqual([]);
    expect(plan.sha256Base64).toBe(createHash('sha256').digest('base64'));
  });
});

describe('OutputWriter: edges of writing and publishing', () => {
  it('ignores an empty write and refuses a write after publish, naming the output', async () => {
    const { store } = slowMultipartStore(0);
    const out = writer(store);
    await out.write('');
    await out.write(Buffer.alloc(0));
    expect(out.bytesWritten).toBe(0);
    await out.write('a\n');
    await out.publish({ ifNoneMatch: '*' });
    await expect(out.write('b\n')).rejects.toThrow('output s3://out/normalized/a.ndjson is already published');
  });

  it("raises a part size under the store's minimum to that minimum, and keeps one above it", async () => {
    // A store whose minimum part is 4 bytes, so that parts stay small here.
    const tiny = () => {
      const made = slowMultipartStore(0);
      (made.store as unknown as { minPartBytes: number }).minPartBytes = 4;
      return made;
    };
    const under = tiny();
    const raised = writer(under.store, 2);
    await raised.write('abcdefghij');
    await raised.publish({ ifNoneMatch: '*' });
    expect(under.parts.map((p) => p.bytes.toString())).toEqual(['abcd', 'efgh', 'ij']);
    const over = tiny();
    const kept = writer(over.store, 6);
    await kept.write('abcdefghij');
    await kept.publish({ ifNoneMatch: '*' });
    expect(over.parts.map((p) => p.bytes.toString())).toEqual(['abcdef', 'ghij']);
  });

  it('starts a multipart upload once the content reaches one part, not only past it', async () => {
    const { store, parts, created } = slowMultipartStore(0);
    (store as unknown as { minPartBytes: number }).minPartBytes = 4;
    const out = writer(store, 4);
    await out.write('abcd');
    await out.publish({ ifNoneMatch: '*' });
    expect(created).toHaveLength(1);
    expect(parts.map((p) => p.bytes.toString())).toEqual(['abcd']);
  });

  it('sends no empty last part when the content ends on a part boundary', async () => {
    const { store, parts } = slowMultipartStore(0);
    const out = writer(store);
    await out.write(Buffer.alloc(2 * MIN_PART_BYTES, 5));
    await out.publish({ ifNoneMatch: '*' });
    expect(parts.map((p) => p.bytes.byteLength)).toEqual([MIN_PART_BYTES, MIN_PART_BYTES]);
  });

  it('after a 412 on the completion, completes the same upload under another condition without re-sending parts', async () => {
    const { store, parts } = slowMultipartStore(0);
    const completions: { uploadId: string; parts: readonly unknown[]; condition: unknown }[] = [];
    (store as unknown as { completeMultipartUpload: unknown }).completeMultipartUpload = async (
      _bucket: string,
      _key: string,
      request: { uploadId: string; parts: readonly unknown[]; condition: unknown },
    ) => {
      completions.push({ ...request, parts: [...request.parts] });
      return completions.length === 1 ? { status: 'precondition-failed' } : { status: 'written', etag: 'final-2' };
    };
    const out = writer(store);
    await out.write(Buffer.alloc(MIN_PART_BYTES + 7, 3));
    expect(await out.publish({ ifNoneMatch: '*' })).toEqual({ status: 'precondition-failed' });
    expect(out.needsNewUpload).toBe(false);
    expect(await out.publish({ ifMatch: '"old"' })).toEqual({ status: 'written', etag: 'sealed' });
    expect(parts).toHaveLength(2);
    expect(completions.map((c) => c.condition)).toEqual([{ ifNoneMatch: '*' }, { ifMatch: '"old"' }]);
    expect(completions[1]?.parts).toEqual(completions[0]?.parts);
    expect(completions.every((c) => c.uploadId === 'upload-1')).toBe(true);
  });

  it("gives a single-part output's checksum as the SHA-256 of its body once published", async () => {
    const { store } = slowMultipartStore(0);
    const out = writer(store);
    await out.write('{"a":1}\n');
    // Not before it is published: the content may still grow.
    expect(out.contentChecksum).toBeUndefined();
    await out.publish({ ifNoneMatch: '*' });
    expect(out.contentChecksum).toBe(createHash('sha256').update('{"a":1}\n').digest('base64'));
  });

  it('abort aborts a multipart upload at the store once its part in flight is answered, and refuses later writes', async () => {
    const { store, parts } = slowMultipartStore(5);
    const aborted: string[] = [];
    (store as unknown as { abortMultipartUpload: unknown }).abortMultipartUpload = async (
      _bucket: string,
      _key: string,
      uploadId: string,
    ) => {
      aborted.push(`${uploadId} after ${parts.length} part(s)`);
    };
    const out = writer(store);
    await out.write(Buffer.alloc(MIN_PART_BYTES + 1, 4));
    await out.abort();
    expect(aborted).toEqual(['upload-1 after 1 part(s)']);
    await expect(out.write('x')).rejects.toThrow('is already published');
    // A single-part output has no upload to abort.
    const single = writer(store);
    await single.write('a\n');
    await single.abort();
    expect(aborted).toHaveLength(1);
  });
});
