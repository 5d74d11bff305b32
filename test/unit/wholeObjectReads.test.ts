import { Readable } from 'node:stream';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { readWholeObject, WHOLE_OBJECT_READ_ATTEMPTS } from '../../src/s3/readWholeObject.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { defineWindowTask } from '../../src/window/defineWindowTask.js';
import { MemoryS3 } from '../support/memoryS3.js';

/**
 * A connection dropped after GetObject's 200, mid-body: the SDK hands the body over once the headers
 * are in, so none of its retries covers it. A whole-object read (a window's staging read-back, a
 * failure record) sends the GET again; a window input cut off starts the round over.
 */

const BUCKET = 'data';

/** A GetObject body that yields a few bytes, then fails as Node's http does when the connection drops. */
function cutBody(): Readable {
  const body = new Readable({
    read() {
      this.push(Buffer.from('{"partial'));
      this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    },
  });
  return Object.assign(body, {
    transformToByteArray: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      return new Uint8Array(Buffer.concat(chunks));
    },
  });
}

/** An in-memory S3 whose GetObject bodies of keys `cut` matches break mid-read, `times` times. */
function cuttingS3(cut: (key: string) => boolean, times: number) {
  const memory = new MemoryS3([BUCKET]);
  let left = times;
  const gets: string[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const isGet = command.constructor.name === 'GetObjectCommand';
      const key = String(command.input.Key);
      if (isGet) gets.push(key);
      const out = (await memory.client.send(command as never)) as unknown as Record<string, unknown>;
      if (!isGet) return out;
      if (!cut(key) || left <= 0) return out;
      left--;
      return { ...out, Body: cutBody() };
    },
  } as unknown as S3Client;
  return { memory, client, gets };
}

function dailyLines() {
  return defineWindowTask({
    name: 'daily-lines',
    codeVersion: 'daily-lines@1',
    partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
    inputs: [
      {
        name: 'hourly',
        prefix: 'events/',
        partitions: { kind: 'time', grain: 'hourly', template: 'hour={yyyy}-{MM}-{dd}T{HH}' },
      },
    ],
    output: { bucket: BUCKET, prefix: 'daily/', fileName: 'lines.json', contentType: 'application/json' },
    async build(inputs, writer, context) {
      let bytes = 0;
      for await (const input of inputs) {
        for await (const chunk of input.body) bytes += (chunk as Buffer).byteLength;
      }
      writer.write(JSON.stringify({ window: context.window.name, bytes }));
      return { bytes };
    },
    validate: (bytes) => (JSON.parse(Buffer.from(bytes).toString('utf8')).bytes === 24 ? undefined : 'wrong count'),
  });
}

async function seed(memory: MemoryS3) {
  for (const hour of ['00', '13']) {
    // 12 bytes each: 24 in all.
    const put = { Bucket: BUCKET, Key: `events/hour=2026-12-05T${hour}/a.txt`, Body: Buffer.from('twelve bytes') };
    await memory.client.send(new PutObjectCommand(put));
  }
}

describe('a body cut off mid-read', () => {
  it("a window's staging read-back cut off once is read again, and the window is published in one round", async () => {
    const { memory, client, gets } = cuttingS3((key) => key.startsWith('daily/_staging/'), 1);
    await seed(memory);
    const task = dailyLines();
    const outcome = await task.run('2026-12-05', {
      store: new S3ObjectStore(client),
      reader: new S3PartitionStore(client),
    });
    expect(outcome).toMatchObject({ status: 'processed', result: { bytes: 24 } });
    // Two inputs read once each, the staged copy twice (cut, then whole): no second round.
    expect(gets.filter((k) => k.startsWith('events/'))).toHaveLength(2);
    expect(gets.filter((k) => k.startsWith('daily/_staging/'))).toHaveLength(2);
    expect(memory.model.keys(BUCKET).filter((k) => k.startsWith('daily/_staging/'))).toEqual([]);
  });

  it('an input cut off mid-read starts the round over, and the window is published from whole reads', async () => {
    const { memory, client, gets } = cuttingS3((key) => key.startsWith('events/'), 1);
    await seed(memory);
    const outcome = await dailyLines().run('2026-12-05', {
      store: new S3ObjectStore(client),
      reader: new S3PartitionStore(client),
    });
    expect(outcome).toMatchObject({ status: 'processed', result: { bytes: 24 } });
    // The first input cut in round 1 (the second already read ahead of the build); round 2 reads both again.
    expect(gets.filter((k) => k.startsWith('events/'))).toHaveLength(4);
  });

  it(`gives up after ${WHOLE_OBJECT_READ_ATTEMPTS} cut bodies with the connection's own error, and throws a request's error at once`, async () => {
    const { memory, client, gets } = cuttingS3(() => true, WHOLE_OBJECT_READ_ATTEMPTS);
    await memory.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'record.json', Body: '{}' }));
    await expect(readWholeObject(client, { Bucket: BUCKET, Key: 'record.json' })).rejects.toThrow('aborted');
    expect(gets).toHaveLength(WHOLE_OBJECT_READ_ATTEMPTS);
    // The cuts used up: the next read is whole, in one GET.
    expect((await readWholeObject(client, { Bucket: BUCKET, Key: 'record.json' })).bytes.toString()).toBe('{}');
    expect(gets).toHaveLength(WHOLE_OBJECT_READ_ATTEMPTS + 1);
    await expect(readWholeObject(client, { Bucket: BUCKET, Key: 'absent.json' })).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    });
    expect(gets).toHaveLength(WHOLE_OBJECT_READ_ATTEMPTS + 2);
  });
});
