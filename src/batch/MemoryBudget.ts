/** Gives back what {@link MemoryBudget.acquire} reserved (idempotent). */
export type ReleaseMemory = () => void;

const MIB = 1024 * 1024;

/**
 * What the runtime itself holds before any transform runs (Node, the bundled SDK, the handler's
 * module scope): taken off the function's memory size. Measured idle RSS of the bundled worker is
 * about 70 MiB (bench section `rss`, "the same process over an empty queue").
 */
export const RUNTIME_RESERVE_MIB = 80;

/** The smallest budget, so that a function sized at Lambda's 128 MB still admits small files together. */
const MIN_BUDGET_BYTES = 16 * MIB;

/**
 * A memory budget that admits transforms by the size of their input, so that the done-checks of a
 * batch all run at once while transforms run as many at a time as memory allows: ten small files
 * run together, and an input whose reservation is the whole budget (a 1 GiB file) runs alone.
 *
 * A reservation is `2 x ContentLength + 1 MiB` (a single-part output is buffered whole until its
 * PUT, and NDJSON is larger than its CSV), capped at the budget: streaming keeps a large input's
 * real footprint near two multipart parts, so a capped reservation is always safe, and one that
 * fills the budget is admitted when nothing else runs. Waiters are admitted in arrival order, so a
 * large input is never starved by a stream of small ones.
 *
 * @example
 * const budget = MemoryBudget.forFunction(context.memoryLimitInMB);
 * const release = await budget.acquire(object.size);
 * try { await transform(); } finally { release(); }
 */
export class MemoryBudget {
  private inUse = 0;
  private readonly waiters: { bytes: number; admit: (release: ReleaseMemory) => void }[] = [];

  constructor(readonly budgetBytes: number) {
    if (!Number.isFinite(budgetBytes) || budgetBytes <= 0) throw new RangeError('budgetBytes must be positive');
  }

  /**
   * The budget of a function of `memoryLimitInMB` (Lambda's `context.memoryLimitInMB`): its memory
   * less {@link RUNTIME_RESERVE_MIB}, at least 16 MiB.
   *
   * @example
   * MemoryBudget.forFunction(512).budgetBytes; // 432 MiB
   */
  static forFunction(memoryLimitInMB: number | string): MemoryBudget {
    const mib = Number(memoryLimitInMB);
    const bytes = Number.isFinite(mib) && mib > 0 ? (mib - RUNTIME_RESERVE_MIB) * MIB : 0;
    return new MemoryBudget(Math.max(MIN_BUDGET_BYTES, bytes));
  }

  /** Bytes reserved for a transform of an input of `contentLength` bytes (unknown: the whole budget). */
  reservationFor(contentLength: number | undefined): number {
    if (contentLength === undefined || !Number.isFinite(contentLength) || contentLength < 0) return this.budgetBytes;
    return Math.min(this.budgetBytes, 2 * contentLength + MIB);
  }

  /** Bytes reserved now. */
  get reservedBytes(): number {
    return this.inUse;
  }

  /** Reserves at once when the budget allows (and nobody waits before), else returns undefined. */
  tryAcquire(contentLength: number | undefined): ReleaseMemory | undefined {
    const bytes = this.reservationFor(contentLength);
    if (this.waiters.length > 0 || !this.fits(bytes)) return undefined;
    return this.take(bytes);
  }

  /** Waits until the budget admits the transform of an input of `contentLength` bytes. */
  async acquire(contentLength: number | undefined): Promise<ReleaseMemory> {
    const now = this.tryAcquire(contentLength);
    if (now) return now;
    const bytes = this.reservationFor(contentLength);
    return new Promise<ReleaseMemory>((admit) => this.waiters.push({ bytes, admit }));
  }

  private fits(bytes: number): boolean {
    return this.inUse === 0 || this.inUse + bytes <= this.budgetBytes;
  }

  private take(bytes: number): ReleaseMemory {
    this.inUse += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse -= bytes;
      this.admitWaiters();
    };
  }

  private admitWaiters(): void {
    // In arrival order: the head waits until it fits, the ones behind it wait for it.
    while (this.waiters.length > 0) {
      const head = this.waiters[0];
      if (!head || !this.fits(head.bytes)) return;
      this.waiters.shift();
      head.admit(this.take(head.bytes));
    }
  }
}
