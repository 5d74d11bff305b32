import { expect } from 'vitest';
import { fromByteString, toByteString } from '../../src/normalize/byteStrings.js';
import { defaultFormats } from '../../src/normalize/inputFormat.js';
import { LineBytes } from '../../src/normalize/lineBytes.js';
import {
  type InputFormat,
  type NormalizeOptions,
  type NormalizeResult,
  normalizeRecords,
  type QuarantineEntry,
} from '../../src/normalize/normalizeRecords.js';

/** One in-memory run of the normalizer: its result, output lines and parsed quarantine entries. */
export interface NormalizeRun {
  readonly result: NormalizeResult;
  readonly output: string[];
  readonly quarantine: QuarantineEntry[];
  /** The quarantine lines as the sink received them. */
  readonly quarantineLines: string[];
}

/**
 * Runs `normalizeRecords` over in-memory chunks with collecting sinks.
 *
 * @example
 * const run = await normalizeChunks([Buffer.from('id\n1\n')], 'csv');
 */
export async function normalizeChunks(
  chunks: Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string>,
  format: InputFormat,
  options?: NormalizeOptions,
): Promise<NormalizeRun> {
  const output: string[] = [];
  const quarantineLines: string[] = [];
  const result = await normalizeRecords(
    chunks,
    format,
    {
      output: { write: (line) => void output.push(line) },
      quarantine: { write: (line) => void quarantineLines.push(line) },
    },
    options,
  );
  // Every test of a byte input in a format that reads byte strings also proves that mode the same.
  const formats = options?.formats ?? defaultFormats;
  const bytesOnly = Array.isArray(chunks) && chunks.every((chunk) => typeof chunk !== 'string');
  if (bytesOnly && !options?.byteStrings && formats.get(format)?.openBytes) {
    const bytes = await normalizeChunks(chunks, format, { ...options, byteStrings: true });
    expect(bytes.result, 'byteStrings: the same result').toEqual(result);
    expect(bytes.output.map(fromByteString), 'byteStrings: the same output bytes').toEqual(output);
    expect(bytes.output, 'byteStrings: lines of bytes').toEqual(output.map(toByteString));
    expect(bytes.quarantineLines, 'byteStrings: the same quarantine bytes').toEqual(quarantineLines.map(toByteString));
    // And with the output gathered in a LineBytes, where the CSV reader writes rows as bytes
    // (csvRowBytes.ts): a buffer of the worker's size, and one so small that rows keep not fitting.
    const expected = Buffer.from(output.map((line) => `${line}\n`).join(''), 'utf8');
    for (const size of [{}, { flushAt: 24, capacity: 64 }]) {
      const inPlace = await normalizeIntoLineBytes(chunks, format, { ...options, byteStrings: true }, size);
      expect(inPlace.result, `rows as bytes ${JSON.stringify(size)}: the same result`).toEqual(result);
      expect(inPlace.output.toString('latin1'), `rows as bytes ${JSON.stringify(size)}: the same output bytes`).toBe(
        expected.toString('latin1'),
      );
    }
  }
  const quarantine = quarantineLines.map((line) => JSON.parse(line) as QuarantineEntry);
  return { result, output, quarantine, quarantineLines };
}

/** `data` cut into pieces of `size` bytes (the last one shorter). */
export function chunksOf(data: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < data.length; i += size) chunks.push(data.subarray(i, i + size));
  return chunks;
}

/** Every way to cut `data` in two (the empty halves included). */
export function everySplit(data: Uint8Array): Uint8Array[][] {
  const all: Uint8Array[][] = [];
  for (let i = 0; i <= data.length; i++) all.push([data.subarray(0, i), data.subarray(i)]);
  return all;
}

/** The invariant of recordAccounting.ts, restated for tests: the four counts add up. */
export function accountedRecords(result: NormalizeResult): number {
  return result.records + result.quarantined + result.header + result.blank;
}

/** normalizeRecords with its output gathered by a LineBytes of `size` (the normalize worker's sink). */
export async function normalizeIntoLineBytes(
  chunks: Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string>,
  format: InputFormat,
  options: NormalizeOptions,
  size: { readonly flushAt?: number; readonly capacity?: number } = {},
): Promise<{ result: NormalizeResult; output: Buffer }> {
  const sent: Buffer[] = [];
  const lines = new LineBytes({ write: async (bytes) => void sent.push(Buffer.from(bytes)) }, size);
  const result = await normalizeRecords(
    chunks,
    format,
    { output: lines, quarantine: { write: () => undefined } },
    options,
  );
  await lines.flush();
  return { result, output: Buffer.concat(sent) };
}
