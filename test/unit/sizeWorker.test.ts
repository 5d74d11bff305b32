import { describe, expect, it } from 'vitest';
import {
  LAMBDA_MAX_TIMEOUT_SECONDS,
  maxInputBytesFor,
  NORMALIZE_MIB_PER_CPU_SECOND,
  NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT,
  planningMibPerCpuSecond,
  sizeWorker,
} from '../../src/sizing/sizeWorker.js';

const GIB = 1024 ** 3;

describe('sizeWorker: memory and timeout from the largest input', () => {
  it('a 1 GiB input gets the memory and timeout to finish it twice over', () => {
    const sizing = sizeWorker({ maxInputBytes: GIB, mibPerCpuSecond: 60, minMemoryMiB: 128 });
    expect(sizing.timeoutSeconds).toBeLessThanOrEqual(LAMBDA_MAX_TIMEOUT_SECONDS);
    expect(sizing.timeoutSeconds).toBeGreaterThanOrEqual(sizing.transformSeconds * 2 + 10);
    // The input it derives fits the input it was sized for.
    expect(maxInputBytesFor({ ...sizing, mibPerCpuSecond: 60 })).toBeGreaterThanOrEqual(GIB * 0.99);
  });

  it('small inputs keep the worker at its minimum memory', () => {
    expect(sizeWorker({ maxInputBytes: 10 * 1024 ** 2, mibPerCpuSecond: 60, minMemoryMiB: 256 }).memoryMiB).toBe(256);
  });

  it('an input that cannot finish at one vCPU within 900 s is refused, naming the setting and the largest that fits', () => {
    expect(() => sizeWorker({ maxInputBytes: 100 * GIB, mibPerCpuSecond: 60, minMemoryMiB: 128 })).toThrow(
      /maxInputBytes .* cannot finish in one invocation.*lower maxInputBytes to at most \d+/,
    );
  });

  it('the largest input of the stack as it is (512 MB, 60 s) at 23 MiB/s is 166 MiB (with the margin of 2 and 10 s of overhead)', () => {
    const bytes = maxInputBytesFor({ memoryMiB: 512, timeoutSeconds: 60, mibPerCpuSecond: 23 });
    expect(Math.round(bytes / 1024 ** 2)).toBe(166);
  });
});

describe('planningMibPerCpuSecond: the figure for the formats a worker declares', () => {
  it('plans with the slowest declared format, and with the slowest of all when none is declared', () => {
    expect(planningMibPerCpuSecond(['ndjson'])).toBe(NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT.ndjson);
    expect(planningMibPerCpuSecond(['csv'])).toBe(NORMALIZE_MIB_PER_CPU_SECOND);
    expect(planningMibPerCpuSecond(['ndjson', 'csv'])).toBe(NORMALIZE_MIB_PER_CPU_SECOND);
    expect(planningMibPerCpuSecond()).toBe(Math.min(...Object.values(NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT)));
    expect(planningMibPerCpuSecond([])).toBe(planningMibPerCpuSecond());
  });

  it("an NDJSON-only worker at the reference stack's 512 MB and 60 s accepts 38/35 of the CSV limit", () => {
    const at = (mibPerCpuSecond: number) => maxInputBytesFor({ memoryMiB: 512, timeoutSeconds: 60, mibPerCpuSecond });
    const ratio = at(planningMibPerCpuSecond(['ndjson'])) / at(planningMibPerCpuSecond(['csv']));
    expect(ratio).toBeCloseTo(38 / 35, 3);
    expect(Math.round(at(planningMibPerCpuSecond(['ndjson'])) / 1024 ** 2)).toBe(275);
  });
});
