import { normalizeRecords } from '../src/normalize/normalizeRecords.js';
import { type BenchFormat, generatedRows } from './generatedRows.js';

/** MiB/s of the reference normalizer for one input format, in process (no S3, no SQS). */
export interface NormalizerThroughput {
  readonly format: BenchFormat;
  readonly inputBytes: number;
  readonly records: number;
  /** Median of `runs`, MiB of input per second of wall time. */
  readonly mibPerSecond: number;
  readonly runs: readonly number[];
  /**
   * Median MiB of input per second of this process's CPU time (user + system). On a machine shared
   * with other work, wall time swings with the neighbours' load; CPU time much less, so compare this.
   */
  readonly mibPerCpuSecond: number;
  readonly cpuRuns: readonly number[];
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Runs `normalizeRecords` over generated CSV and NDJSON inputs (byte chunks of 64 KiB, as S3's body
 * stream delivers them), with sinks that only count, so the figure is the normalizer's own CPU cost:
 * the emulator's request costs, which dominate the `side` section, are left out. Every 50th CSV row
 * and NDJSON line is bad, so the quarantine path is exercised too (generatedRows.ts).
 *
 * @example
 * const [csv, ndjson] = await measureNormalizerThroughput({ bytes: 64 * 1024 ** 2, repeats: 5 });
 */
export async function measureNormalizerThroughput(options: {
  readonly bytes: number;
  readonly repeats: number;
  readonly log?: (line: string) => void;
}): Promise<NormalizerThroughput[]> {
  const results: NormalizerThroughput[] = [];
  for (const format of ['csv', 'ndjson'] as const) {
    const chunks = generate(format, options.bytes);
    const inputBytes = chunks.reduce((sum, c) => sum + c.length, 0);
    const runs: number[] = [];
    const cpuRuns: number[] = [];
    let records = 0;
    for (let i = 0; i < options.repeats; i++) {
      let written = 0;
      const sink = {
        write: (line: string) => {
          written += line.length;
        },
      };
      const started = process.hrtime.bigint();
      const cpuStarted = process.cpuUsage();
      const result = await normalizeRecords(chunks, format, { output: sink, quarantine: sink });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpu = process.cpuUsage(cpuStarted);
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      records = result.records;
      runs.push(Math.round((inputBytes / 1024 ** 2 / seconds) * 10) / 10);
      cpuRuns.push(Math.round((inputBytes / 1024 ** 2 / cpuSeconds) * 10) / 10);
      if (written === 0) throw new Error(`normalizer bench: ${format} produced no output`);
    }
    const mibPerSecond = median(runs);
    const mibPerCpuSecond = median(cpuRuns);
    options.log?.(`normalizer: ${format} ${mibPerSecond} MiB/s, ${mibPerCpuSecond} MiB per CPU second`);
    results.push({ format, inputBytes, records, mibPerSecond, runs, mibPerCpuSecond, cpuRuns });
  }
  return results;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Deterministic input of about `bytes` bytes (generatedRows.ts), cut into CHUNK_BYTES pieces. */
function generate(format: BenchFormat, bytes: number): Uint8Array[] {
  const buffer = Buffer.from(generatedRows(format, 0, bytes).text, 'utf8');
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < buffer.length; offset += CHUNK_BYTES) {
    chunks.push(buffer.subarray(offset, offset + CHUNK_BYTES));
  }
  return chunks;
}
