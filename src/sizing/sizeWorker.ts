/**
 * Sizing a worker function from the largest input it must finish in one invocation. Pure: the
 * stack calls it at synth time with a declared `maxInputBytes` and a measured throughput.
 */
import type { InputFormat } from '../normalize/inputFormat.js';

/**
 * The normalize worker's throughput per full core that sizing assumes, MiB of input per CPU second,
 * planned on its slowest input: the bench (section `rss`, x64, node 20, 2026-12-01) measured the
 * bundled handler at 37.9 to 43.0 over 1 GiB of short mixed CSV rows, 61.3 over NDJSON and about 160
 * over wide ASCII CSV rows. The stack deploys ARM64, so it plans with 35, below the slowest figure;
 * sizeWorker's margin of 2 comes on top.
 */
export const NORMALIZE_MIB_PER_CPU_SECOND = 35;

/**
 * The normalize worker's planning throughput per input format, MiB of input per CPU second, each
 * below the slowest figure the bench measured for that format (section `rss`, x64, node 20):
 * - `csv`: {@link NORMALIZE_MIB_PER_CPU_SECOND}, planned on short mixed rows (37.9 to 70.7
 *   measured); wide rows run faster (about 160) but a CSV's row width is not declared, so every CSV
 *   is planned as short rows;
 * - `ndjson`: 38. NDJSON ran 1.11 to 1.17 times as fast as the short CSV rows in the same runs
 *   (82.7 against 70.7 in the full run of 2026-12-01; 29.5 against 26.5 over 256 MiB each on
 *   2026-12-04, on a machine loaded well past its 2 cores), so it is planned at the csv figure
 *   times 1.09, below both ratios.
 *
 * The margin of 2 in {@link sizeWorker} comes on top, as for the single figure.
 */
export const NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT: Readonly<Record<InputFormat, number>> = {
  csv: NORMALIZE_MIB_PER_CPU_SECOND,
  ndjson: 38,
};

/**
 * The throughput to plan the normalize worker with when it reads only `formats`: the slowest of
 * their figures ({@link NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT}). Without a declaration, every
 * format may arrive, so the slowest of all.
 *
 * @example
 * planningMibPerCpuSecond(['ndjson']); // 38
 * planningMibPerCpuSecond(['csv', 'ndjson']); // 35
 * planningMibPerCpuSecond(); // 35
 */
export function planningMibPerCpuSecond(formats?: readonly InputFormat[]): number {
  const declared =
    formats && formats.length > 0 ? formats : (Object.keys(NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT) as InputFormat[]);
  return Math.min(...declared.map((format) => NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT[format]));
}

/** Lambda allocates CPU in proportion to memory: 1,769 MB is one vCPU (Lambda developer guide, "Memory and computing power"). */
export const MIB_PER_VCPU = 1769;
/** Lambda's memory limits, MB (128 MB to 10,240 MB). */
export const LAMBDA_MIN_MEMORY_MIB = 128;
export const LAMBDA_MAX_MEMORY_MIB = 10_240;
/** Lambda's longest function timeout, seconds. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;

/** What {@link sizeWorker} needs. */
export interface SizingInput {
  /** The largest input one invocation must finish, bytes. */
  readonly maxInputBytes: number;
  /**
   * Measured throughput of the transform on one full core, MiB of input per CPU second (bench
   * section `rss`: `normalize-mib-per-core`). The transform is single-threaded: more than one vCPU
   * does not speed it up.
   */
  readonly mibPerCpuSecond: number;
  /** Memory the worker needs whatever the input (its peak RSS over a large input), MB. */
  readonly minMemoryMiB: number;
  /**
   * Safety factor on the time a maximal input takes (slower CPU, S3 throughput, GC, retries).
   * @default 2
   */
  readonly margin?: number;
  /**
   * Time an invocation spends besides the transform (init, done-check, publish, the batch's other
   * records), seconds.
   * @default 10
   */
  readonly overheadSeconds?: number;
}

/** The derived function settings. */
export interface WorkerSizing {
  readonly memoryMiB: number;
  readonly timeoutSeconds: number;
  /** Seconds a maximal input takes at that memory (before the margin). */
  readonly transformSeconds: number;
}

/**
 * The smallest memory (at least `minMemoryMiB`) at which an input of `maxInputBytes` finishes,
 * with the margin, within Lambda's 900 s, and the timeout that leaves it that time. Memory buys CPU
 * up to one vCPU (1,769 MB); beyond that a single-threaded transform gains nothing, so an input
 * that cannot finish at one vCPU is refused here, at synth time, naming the setting to change.
 *
 * @example
 * sizeWorker({ maxInputBytes: 1024 ** 3, mibPerCpuSecond: 60, minMemoryMiB: 256 });
 * // { memoryMiB: 256, timeoutSeconds: 246, transformSeconds: 117.9 }: 1 GiB at 0.145 vCPU x 60 MiB/s, doubled, plus 10 s
 */
export function sizeWorker(input: SizingInput): WorkerSizing {
  const margin = input.margin ?? 2;
  const overhead = input.overheadSeconds ?? 10;
  if (!(input.maxInputBytes > 0) || !(input.mibPerCpuSecond > 0)) {
    throw new RangeError('maxInputBytes and mibPerCpuSecond must be positive');
  }
  const inputMiB = input.maxInputBytes / 1024 ** 2;
  const secondsAt = (memoryMiB: number) => inputMiB / (input.mibPerCpuSecond * Math.min(1, memoryMiB / MIB_PER_VCPU));
  const budget = LAMBDA_MAX_TIMEOUT_SECONDS - overhead;
  // The memory at which margin x transform time fits the longest timeout, rounded up to 64 MB.
  const needed = (MIB_PER_VCPU * inputMiB * margin) / (input.mibPerCpuSecond * budget);
  const memoryMiB = Math.min(
    LAMBDA_MAX_MEMORY_MIB,
    Math.max(LAMBDA_MIN_MEMORY_MIB, input.minMemoryMiB, Math.ceil(needed / 64) * 64),
  );
  const transformSeconds = secondsAt(memoryMiB);
  const timeoutSeconds = Math.ceil(transformSeconds * margin + overhead);
  if (timeoutSeconds > LAMBDA_MAX_TIMEOUT_SECONDS) {
    const largest = maxInputBytesFor({ ...input, memoryMiB: MIB_PER_VCPU, timeoutSeconds: LAMBDA_MAX_TIMEOUT_SECONDS });
    throw new RangeError(
      `maxInputBytes ${input.maxInputBytes} cannot finish in one invocation: at one vCPU and ${input.mibPerCpuSecond} MiB/s ` +
        `it takes ${Math.round(secondsAt(MIB_PER_VCPU) * margin)} s with the margin, above Lambda's ${LAMBDA_MAX_TIMEOUT_SECONDS} s; ` +
        `lower maxInputBytes to at most ${largest} or split such inputs before they reach the worker`,
    );
  }
  return { memoryMiB, timeoutSeconds, transformSeconds: Math.round(transformSeconds * 10) / 10 };
}

/**
 * The largest input a function of `memoryMiB` and `timeoutSeconds` finishes with the margin: what
 * the worker refuses above (see InputTooLargeError), so a too-large input fails at once instead of
 * timing out on every receive until the DLQ.
 *
 * @example
 * maxInputBytesFor({ memoryMiB: 512, timeoutSeconds: 60, mibPerCpuSecond: 35 }); // about 253 MiB
 */
export function maxInputBytesFor(input: {
  readonly memoryMiB: number;
  readonly timeoutSeconds: number;
  readonly mibPerCpuSecond: number;
  readonly margin?: number;
  readonly overheadSeconds?: number;
}): number {
  const margin = input.margin ?? 2;
  const overhead = input.overheadSeconds ?? 10;
  const seconds = Math.max(0, input.timeoutSeconds - overhead) / margin;
  const mibPerSecond = input.mibPerCpuSecond * Math.min(1, input.memoryMiB / MIB_PER_VCPU);
  return Math.floor(seconds * mibPerSecond * 1024 ** 2);
}
