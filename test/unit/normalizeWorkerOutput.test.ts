import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import type { OutputStream } from '../../src/worker/defineWorker.js';
import { createTransformInput } from '../../src/worker/transformInput.js';

/** An output that keeps a copy of every write (the worker may reuse the bytes it wrote once a write resolves). */
function collected(): { stream: OutputStream; text: () => string } {
  const chunks: Buffer[] = [];
  return {
    stream: {
      write: async (chunk) => {
        chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
      },
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

async function transformed(key: string, content: string, chunkBytes: number) {
  const worker = createNormalizeWorker({ outputBucket: 'out' });
  const bytes = Buffer.from(content, 'utf8');
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkBytes) pieces.push(bytes.subarray(i, i + chunkBytes));
  const output = collected();
  const quarantine = collected();
  const summary = await worker.transform(
    createTransformInput({
      source: { bucket: 'in', key, etag: 'e' },
      body: Readable.from(pieces),
      contentLength: bytes.length,
    }),
    { output: output.stream, side: () => quarantine.stream },
  );
  return { summary, output: output.text(), quarantine: quarantine.text() };
}

describe('the normalize worker writes UTF-8 output and quarantine lines, whatever the characters', () => {
  it('writes a CSV with non-ASCII names, values and a bad row as the UTF-8 of its JSON lines', async () => {
    const csv = 'Größe,温度\n München ,à\n"Zoë, 😀",x\nnur eins\n';
    for (const chunkBytes of [1, 2, 3, 7, 1024]) {
      const { summary, output, quarantine } = await transformed('incoming/a.csv', csv, chunkBytes);
      expect(summary).toMatchObject({ records: 2, quarantined: 1, format: 'csv', encoding: 'utf-8' });
      expect(output).toBe('{"größe":"München","温度":"à"}\n{"größe":"Zoë, 😀","温度":"x"}\n');
      expect(quarantine).toBe('{"line":4,"reason":"expected 2 fields, got 1","raw":"nur eins","truncated":false}\n');
    }
  });

  it('writes a line longer than its batch whole', async () => {
    const long = 'é'.repeat(40_000);
    const { output } = await transformed('incoming/a.csv', `v\n${long}\nb\n`, 4096);
    expect(output).toBe(`{"v":"${long}"}\n{"v":"b"}\n`);
  });

  it('writes NDJSON, which it reads as text, the same way', async () => {
    const { output } = await transformed('incoming/a.ndjson', '{"city":"München","t":"温度"}\n', 5);
    expect(output).toBe('{"city":"München","t":"温度"}\n');
  });
});
