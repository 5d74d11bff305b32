import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks } from '../../scripts/docPages.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import { createTransformInput } from '../../src/worker/transformInput.js';

const ROOT = new URL('../../', import.meta.url);
const EXPORTS = (
  JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as {
    exports: Record<string, { default: string } | string>;
  }
).exports;

/** `'rerun-pipeline'` or `'rerun-pipeline/<subpath>'` -> the source file of that entry, as the checkout's CLI resolves it. */
function librarySource(subpath: string): string {
  const target = EXPORTS[subpath === '' ? '.' : `.${subpath}`];
  const built = typeof target === 'string' ? target : target?.default;
  if (!built?.startsWith('./dist/'))
    throw new Error(`documentation example imports rerun-pipeline${subpath}, not in exports`);
  return pathToFileURL(fileURLToPath(new URL(`${built.slice('./dist/'.length, -'.js'.length)}.ts`, ROOT))).href;
}

/** Multi-byte text (2-, 3- and 4-byte UTF-8) with every line terminator. */
const INPUT = Buffer.from('héllo wörld 😀 温度\r\nzweite Zeile: ü\rdritte 𝄞\nend', 'utf8');

/** Every way to cut the input in two, and one byte per chunk. */
const splits: Buffer[][] = [
  Array.from(INPUT, (byte) => Buffer.from([byte])),
  ...Array.from({ length: INPUT.length + 1 }, (_, i) => [INPUT.subarray(0, i), INPUT.subarray(i)]),
];

async function runTransform(worker: WorkerDefinition, chunks: Buffer[]) {
  const written: string[] = [];
  const decoder = new TextDecoder();
  const summary = await worker.transform(
    createTransformInput({
      source: { bucket: 'in', key: 'incoming/example.txt', etag: 'e' },
      body: Readable.from(chunks),
      contentLength: INPUT.length,
    }),
    {
      output: {
        write: async (chunk) => {
          written.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk));
        },
      },
      side: (name) => {
        throw new Error(`documentation example used a side output "${name}" the test does not provide`);
      },
    },
  );
  return { output: written.join(''), summary };
}

const dir = mkdtempSync(join(tmpdir(), 'rerun-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** Every ```ts block of the README and the guides (scripts/docPages.ts), in order. */
const examples = codeBlocks('ts');

describe('the TypeScript examples of the README and the guides run, multi-byte safe at every chunk boundary', () => {
  it('the documentation has its worker examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
  });

  it.each(examples.map(({ page, code }, i) => [i + 1, page, code] as const))(
    'example %i (%s)',
    async (n, _page, code) => {
      process.env.OUTPUT_BUCKET ??= 'readme-example-output';
      // The examples import the library by its package name.
      const file = join(dir, `example-${n}.ts`);
      writeFileSync(
        file,
        code.replace(/'rerun-pipeline((?:\/[a-z-]+)?)'/g, (_, subpath: string) => `'${librarySource(subpath)}'`),
      );
      const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const workers = Object.values(module).filter(
        (value): value is WorkerDefinition =>
          typeof value === 'object' && value !== null && typeof (value as WorkerDefinition).transform === 'function',
      );
      expect(workers.length, 'each example exports its worker').toBeGreaterThanOrEqual(1);
      for (const worker of workers) {
        const whole = await runTransform(worker, [INPUT]);
        expect(whole.output).not.toContain('\ufffd');
        expect(whole.output.length).toBeGreaterThan(0);
        for (const chunks of splits) expect(await runTransform(worker, chunks)).toEqual(whole);
      }
    },
  );
});
