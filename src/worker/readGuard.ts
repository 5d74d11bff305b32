import { DeadlineNearError, InputTooLargeError } from '../errors.js';

/**
 * The invocation's time as a read judges it. The batch handler builds one per invocation from the
 * Lambda context; tests pass their own clock.
 */
export interface ReadDeadline {
  /** Time left in the invocation, ms (`context.getRemainingTimeInMillis()`). */
  remainingTimeMs(): number;
  /** A read stops when less than this is left, so its record ends (and is reported) before the timeout. */
  readonly marginMs: number;
  /** The invocation's whole time when it started: at most the function's timeout. */
  readonly timeLimitMs: number;
  /** The clock (epoch ms) that measures how long the read has run. */
  now(): number;
  /**
   * The reads of this invocation, shared by all of them (each guard counts itself in and out):
   * `active` reading now, `started` ever. A read that shared the CPU with another, before, during
   * or after its own start, is slower than alone, so its pace does not prove the input too large.
   * @default none: every read is taken as alone
   */
  readonly reads?: { active: number; started: number };
}

/** Options of {@link ReadGuard}. */
export interface ReadGuardOptions {
  readonly object: { readonly bucket: string; readonly key: string };
  /** The input's stored size (the GET's ContentLength): how far the read has come. */
  readonly storedBytes: number;
  /** The worker's limit (MAX_INPUT_BYTES), also on decoded bytes. @default no limit */
  readonly maxInputBytes?: number;
  /** @default none: no time guard */
  readonly deadline?: ReadDeadline;
}

/**
 * Watches one input while its transform reads it, so that an input too large for the function
 * stops with a classified outcome instead of running into the timeout (which returns the whole
 * batch and, after maxReceiveCount receives, dead-letters it as "crashed or timed out"):
 *
 * - **Decoded size.** The stored size passed MAX_INPUT_BYTES already (processObject refuses it
 *   before reading); a compressed input can still decode to far more. The transform reports its
 *   decoded bytes ({@link countDecoded}); past the limit the read stops with a non-retryable
 *   InputTooLargeError.
 * - **Time.** On every chunk, when less than the deadline's margin is left, the read stops. If it
 *   read alone and its pace projects a whole read longer than the invocation's entire time, even a
 *   fresh invocation cannot finish it: non-retryable InputTooLargeError. Otherwise it only started
 *   late or shared the CPU with a crowded batch: a retryable DeadlineNearError, and the batch
 *   handler returns its message to the queue without counting it as a failure of the input.
 *
 * @example
 * const guard = new ReadGuard({ object, storedBytes: 1024, maxInputBytes: 4096 });
 * guard.countDecoded(8192); // throws InputTooLargeError: decompresses past the limit
 */
export class ReadGuard {
  private raw = 0;
  private decoded = 0;
  private crowded = false;
  private readonly startedAt: number | undefined;
  private counted = false;
  /** `reads.started` once this read started: a higher count later means another read began meanwhile. */
  private readonly serial: number = 0;

  constructor(private readonly options: ReadGuardOptions) {
    const reads = options.deadline?.reads;
    if (reads) {
      reads.active++;
      reads.started++;
      this.serial = reads.started;
      this.counted = true;
      if (reads.active > 1) this.crowded = true;
    }
    this.startedAt = options.deadline?.now();
  }

  /** Whether the guard has anything to watch (a limit or a deadline). */
  get active(): boolean {
    return this.options.maxInputBytes !== undefined || this.options.deadline !== undefined;
  }

  /** Counts stored bytes read; throws when the deadline is near (see the class). */
  countRaw(bytes: number): void {
    this.raw += bytes;
    this.checkTime();
  }

  /** Counts decoded bytes the transform produced; throws past the limit or near the deadline. */
  countDecoded(bytes: number): void {
    this.decoded += bytes;
    const max = this.options.maxInputBytes;
    if (max !== undefined && this.decoded > max) {
      const { bucket, key } = this.options.object;
      throw new InputTooLargeError(
        `s3://${bucket}/${key} decompresses past the limit of ${formatSize(max)} (MAX_INPUT_BYTES ${max}, ` +
          `the largest input one invocation finishes at the function's memory and timeout): stopped after ` +
          `${this.decoded} decoded bytes from ${this.raw} of its ${this.options.storedBytes} stored bytes, and nothing was written; ` +
          'raise the function memory and timeout (maxInputBytes in the stack sizes both, src/sizing/sizeWorker.ts) ' +
          'or split the input before compressing it, then redrive this message',
      );
    }
    this.checkTime();
  }

  /** The read ended (finished or not): it no longer counts among the invocation's reads. */
  end(): void {
    if (!this.counted) return;
    this.counted = false;
    const reads = this.options.deadline?.reads;
    if (reads) reads.active--;
  }

  private checkTime(): void {
    const deadline = this.options.deadline;
    if (!deadline || this.startedAt === undefined) return;
    const reads = deadline.reads;
    if (reads && (reads.active > 1 || reads.started > this.serial)) this.crowded = true;
    const remaining = deadline.remainingTimeMs();
    if (remaining >= deadline.marginMs) return;
    const { bucket, key } = this.options.object;
    const stored = this.options.storedBytes;
    const elapsedMs = Math.max(0, deadline.now() - this.startedAt);
    const fraction = stored > 0 ? Math.min(1, this.raw / stored) : 0;
    const read = `${(fraction * 100).toFixed(1)} % of its ${stored} stored bytes in ${(elapsedMs / 1000).toFixed(1)} s`;
    const budgetMs = deadline.timeLimitMs - deadline.marginMs;
    const projectedMs = fraction > 0 ? elapsedMs / fraction : Number.POSITIVE_INFINITY;
    if (!this.crowded && fraction > 0 && projectedMs > budgetMs) {
      throw new InputTooLargeError(
        `s3://${bucket}/${key} is too large for this function: reading alone, it read ${read}, ` +
          `which projects ${(projectedMs / 1000).toFixed(0)} s for the whole input, above the ${(budgetMs / 1000).toFixed(0)} s ` +
          'an invocation has; stopped before the timeout, and nothing was written; raise the function memory and ' +
          'timeout (maxInputBytes in the stack sizes both) or split the input, then redrive this message',
      );
    }
    throw new DeadlineNearError(
      `stopped: the function deadline came near (less than ${deadline.marginMs} ms left) after reading ${read}` +
        `${this.crowded ? ', sharing the function with other transforms' : ', having started late in the invocation'}; ` +
        'the input fits a fresh invocation, so its message goes back to the queue',
    );
  }
}

/**
 * A byte count for people: KiB below 1 MiB (so a small limit never reads "0.0 MiB"), else MiB.
 *
 * @example
 * formatSize(2048); // '2.0 KiB'
 */
export function formatSize(bytes: number): string {
  return bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
