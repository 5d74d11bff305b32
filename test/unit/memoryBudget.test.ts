import { describe, expect, it } from 'vitest';
import { MemoryBudget, RUNTIME_RESERVE_MIB } from '../../src/batch/MemoryBudget.js';

const MIB = 1024 * 1024;

describe('MemoryBudget: transforms admitted by input size, not by count', () => {
  it('derives from the function memory size, less the runtime reserve, at least 16 MiB', () => {
    expect(MemoryBudget.forFunction(512).budgetBytes).toBe((512 - RUNTIME_RESERVE_MIB) * MIB);
    expect(MemoryBudget.forFunction('1024').budgetBytes).toBe((1024 - RUNTIME_RESERVE_MIB) * MIB);
    expect(MemoryBudget.forFunction(128).budgetBytes).toBe((128 - RUNTIME_RESERVE_MIB) * MIB);
    expect(MemoryBudget.forFunction(64).budgetBytes).toBe(16 * MIB);
  });

  it('ten small files are admitted together', async () => {
    const budget = MemoryBudget.forFunction(512);
    const releases = await Promise.all(Array.from({ length: 10 }, () => budget.acquire(100 * 1024)));
    expect(budget.reservedBytes).toBe(10 * (2 * 100 * 1024 + MIB));
    for (const release of releases) release();
    expect(budget.reservedBytes).toBe(0);
  });

  it('a 1 GiB file runs alone: it waits for the running ones and the ones after it wait for it', async () => {
    const budget = MemoryBudget.forFunction(512);
    const small = budget.tryAcquire(MIB);
    expect(small).toBeDefined();
    const order: string[] = [];
    const big = budget.acquire(1024 * MIB).then((release) => {
      order.push('big');
      return release;
    });
    const after = budget.acquire(MIB).then((release) => {
      order.push('after');
      return release;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(budget.tryAcquire(1024)).toBeUndefined(); // someone waits: no overtaking
    small?.();
    const releaseBig = await big;
    expect(order).toEqual(['big']);
    expect(budget.reservedBytes).toBe(budget.budgetBytes);
    releaseBig();
    (await after)();
    expect(order).toEqual(['big', 'after']);
    expect(budget.reservedBytes).toBe(0);
  });

  it('an input of unknown size reserves the whole budget; a release twice gives back once', async () => {
    const budget = new MemoryBudget(32 * MIB);
    expect(budget.reservationFor(undefined)).toBe(32 * MIB);
    const release = await budget.acquire(undefined);
    release();
    release();
    expect(budget.reservedBytes).toBe(0);
  });
});
