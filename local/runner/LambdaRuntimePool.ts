import { randomBytes } from 'node:crypto';
import { LambdaRuntimeSlotError } from './errors.js';
import type { FunctionInvoker, InvocationRequest, InvocationResult } from './FunctionInvoker.js';
import { type LambdaFunctionSettings, LambdaRuntimeSlot } from './LambdaRuntimeSlot.js';
import { lambdaLogStreamName } from './lambdaContext.js';
import type { LambdaRuntimeTools } from './lambdaRuntimeTools.js';

/** Options of `LambdaRuntimePool`. */
export interface LambdaRuntimePoolOptions {
  readonly tools: LambdaRuntimeTools;
  readonly function: LambdaFunctionSettings;
  /** Every line the emulators and the function write (see {@link LambdaRuntimeSlot}). @default dropped */
  readonly onOutput?: (line: string) => void;
  /** Called with each slot once it has started (tests use it to reach the runtime processes). */
  readonly onSlot?: (slot: LambdaRuntimeSlot) => void;
}

/**
 * The execution environments of one function: a {@link FunctionInvoker} for `LocalRunner` that runs
 * each invocation in a {@link LambdaRuntimeSlot} (the deployed bundle under the Lambda Runtime
 * Interface Emulator, on the runtime's Node). A slot serves one invocation at a time and stays warm
 * for the next, as a Lambda execution environment does; a new slot starts only when every started
 * one is busy, so the runner's `maxConcurrency` bounds the slots. A slot whose emulator died is
 * dropped and replaced on demand.
 *
 * @example
 * const pool = new LambdaRuntimePool({ tools: locateLambdaRuntimeTools('.'), function: settings });
 * const runner = new LocalRunner({ sqs, queueUrl, invoker: pool, timeoutSeconds: settings.timeoutSeconds,
 *   batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 4 });
 * await runner.runUntilDrained();
 * await pool.close();
 */
export class LambdaRuntimePool implements FunctionInvoker {
  private readonly options: LambdaRuntimePoolOptions;
  private readonly idle: LambdaRuntimeSlot[] = [];
  private readonly all = new Set<LambdaRuntimeSlot>();
  private closed = false;

  constructor(options: LambdaRuntimePoolOptions) {
    this.options = options;
  }

  /** Slots started and not dropped (idle or busy). */
  get size(): number {
    return this.all.size;
  }

  async invoke(request: InvocationRequest): Promise<InvocationResult> {
    const slot = await this.acquire();
    try {
      return await slot.invoke(request.event, request.requestId);
    } catch (error) {
      // The emulator itself is gone: the invocation failed as a crashed sandbox fails it.
      if (error instanceof LambdaRuntimeSlotError) return { kind: 'threw', error: error.message };
      throw error;
    } finally {
      this.release(slot);
    }
  }

  /** Kills every slot (emulators and runtimes) and waits for them to exit. Later invocations are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(slots.map((slot) => slot.stop()));
  }

  private async acquire(): Promise<LambdaRuntimeSlot> {
    if (this.closed) throw new LambdaRuntimeSlotError('The Lambda runtime pool is closed.');
    for (let slot = this.idle.pop(); slot; slot = this.idle.pop()) {
      if (slot.alive) return slot;
      this.all.delete(slot);
    }
    const slot = await LambdaRuntimeSlot.start({
      tools: this.options.tools,
      function: this.options.function,
      // One log stream per execution environment, as in Lambda.
      logStreamName: lambdaLogStreamName(new Date(), randomBytes(16).toString('hex')),
      ...(this.options.onOutput ? { onOutput: this.options.onOutput } : {}),
    });
    if (this.closed) {
      await slot.stop();
      throw new LambdaRuntimeSlotError('The Lambda runtime pool was closed while a slot started.');
    }
    this.all.add(slot);
    this.options.onSlot?.(slot);
    return slot;
  }

  private release(slot: LambdaRuntimeSlot): void {
    if (!this.all.has(slot)) return;
    if (slot.alive && !this.closed) this.idle.push(slot);
    else this.all.delete(slot);
  }
}
