import { Readable } from 'node:stream';
import { DeadlineNearError } from '../errors.js';
import type { GetExactResult, S3PartitionStore } from '../s3/S3PartitionStore.js';
import { WindowTaskConfigurationError, WindowTooLargeError } from './errors.js';
import type { CompiledWindowTask, WindowDeadline, WindowInput } from './WindowTaskDefinition.js';
import type { WindowLineageEntry } from './windowLineage.js';

/**
 * The inputs of a window as its build reads them: each GET pinned to the ETag its lineage lists
 * (`If-Match`), so the output is exactly the function of the lineage it records. An input replaced
 * or removed since the listing ends the round (the engine starts over with a fresh listing); a body
 * that fails mid-read is noted, so the engine can tell a dropped connection from a build's own error.
 */

/** What the engine learns from a round's reads. */
export interface InputReads {
  readonly inputs: AsyncGenerator<WindowInput>;
  /** The error a body failed with mid-read, if one did (a dropped connection). */
  bodyError(): unknown;
  /** Whether an input was replaced or removed since it was listed (the round must start over). */
  changed(): boolean;
  /** Checks the time left against the inputs read so far. */
  checkDeadline(): void;
}

/**
 * GETs a window has in flight by default: the input its build reads and the 7 after it (the
 * `readAhead` option; 1 reads one input after the other). The hang of a summary task seen once with 8
 * in the chaos suite was a body cut off while it waited its turn, to which node:readline then
 * attached: its iterator never ends on a stream that closed before it listened. Such a body is now
 * read again at its turn, and the build reads through {@link handedBody}.
 */
export const DEFAULT_WINDOW_READ_AHEAD = 8;

/**
 * The reads of one round over `lineage`, with the time guard of `deadline`. Up to `readAhead` GETs
 * are in flight ahead of the input the build is reading (their bodies wait, unread, until the build
 * asks for them), so a window's pace is not one round trip per input; the build still sees every
 * input in the lineage's order, one at a time. A read ahead of a failure, a changed input or the
 * deadline is destroyed unread.
 *
 * @example
 * const reads = readWindowInputs(task, label, lineage, reader, deadline);
 * for await (const input of reads.inputs) input.body.resume();
 */
export function readWindowInputs(
  task: CompiledWindowTask<unknown, unknown>,
  label: string,
  lineage: readonly WindowLineageEntry[],
  reader: S3PartitionStore,
  deadline: WindowDeadline | undefined,
  readAhead = DEFAULT_WINDOW_READ_AHEAD,
): InputReads {
  if (!Number.isInteger(readAhead) || readAhead < 1) {
    throw new WindowTaskConfigurationError(
      task.definition.name,
      `readAhead must be a whole number of GETs, at least 1 (got ${String(readAhead)})`,
    );
  }
  let done = 0;
  let failed: unknown;
  let changed = false;
  const guard = timeGuard(task, label, lineage.length, deadline);
  const sources = new Map(task.sources.map((s) => [s.source.name, s]));
  const keyOf = (entry: WindowLineageEntry): { bucket: string; key: string } => {
    const source = sources.get(entry.source);
    if (!source) throw new Error(`lineage entry of unknown source ${entry.source}`);
    return { bucket: source.bucket, key: `${source.source.prefix}${entry.path}` };
  };
  // Reads started and not yet handed to the build, by lineage index.
  const started = new Map<number, Promise<GetExactResult>>();
  const get = (entry: WindowLineageEntry) => {
    const { bucket, key } = keyOf(entry);
    const read = reader.getExact(bucket, key, entry.etag);
    // Awaited when its turn comes; until then a failure must not be an unhandled rejection, and a body
    // cut off while it waits must not be an unhandled 'error' event (it is read again at its turn).
    read.then(
      (r) => {
        if (r.status === 'ok') r.body.on('error', () => {});
      },
      () => {},
    );
    return read;
  };
  const start = (index: number) => {
    const entry = lineage[index];
    if (entry === undefined || started.has(index)) return;
    started.set(index, get(entry));
  };
  const discardStarted = () => {
    for (const read of started.values()) {
      read.then((r) => (r.status === 'ok' ? r.body.destroy() : undefined)).catch(() => {});
    }
    started.clear();
  };
  /**
   * The read of `index` as the build may take it. A body cut off while it waited its turn (a dropped
   * connection, or the client's idle timeout behind a slow build) is read again now, pinned to the
   * same ETag, so the round goes on instead of starting over. A body that fails once the build has it
   * is the round's body error (the round starts over).
   */
  const takeTurn = async (index: number, entry: WindowLineageEntry): Promise<GetExactResult> => {
    let read = (await started.get(index)) as GetExactResult;
    started.delete(index);
    if (read.status === 'ok' && (read.body.destroyed || read.body.errored)) {
      read.body.destroy();
      read = await get(entry);
    }
    if (read.status === 'ok') {
      read.body.on('error', (error) => {
        failed ??= error;
      });
    }
    return read;
  };
  async function* inputs(): AsyncGenerator<WindowInput> {
    try {
      for (const [index, entry] of lineage.entries()) {
        done = index;
        guard(done);
        for (let ahead = index; ahead < Math.min(lineage.length, index + readAhead); ahead++) start(ahead);
        const read = await takeTurn(index, entry);
        const { bucket, key } = keyOf(entry);
        if (read.status !== 'ok') {
          changed = true;
          // Thrown through the build, which cannot go on without this input; the engine starts over.
          throw new Error(`the input ${key} changed since it was listed`);
        }
        const body = handedBody(read.body);
        try {
          yield { ...entry, bucket, key, contentLength: read.contentLength, body };
        } finally {
          body.destroy();
          read.body.destroy();
        }
      }
      done = lineage.length;
    } finally {
      discardStarted();
    }
  }
  return { inputs: inputs(), bodyError: () => failed, changed: () => changed, checkDeadline: () => guard(done) };
}

/**
 * The body as the build gets it: a stream that reads the response only once the build reads it. A
 * response cut after the hand-over but before the build's first read (a build that awaits something
 * first) then fails that read. Attached to the response itself, node:readline would wait forever on
 * a stream that closed before it listened. An error after the build is done with it is nobody's.
 */
function handedBody(response: Readable): Readable {
  const body = Readable.from(response, { objectMode: false });
  body.on('error', () => {});
  return body;
}

/**
 * Checks the time left while a window is read (`done` inputs of `total` so far): throws before the
 * timeout, which would return the task with no outcome until the DLQ says "crashed or timed out".
 * A task whose pace cannot read the window within a whole invocation is too large; one that only
 * started late is retried (an output is built whole, so an invocation that started fresh is the
 * only measure).
 */
function timeGuard(
  task: CompiledWindowTask<unknown, unknown>,
  label: string,
  total: number,
  deadline: WindowDeadline | undefined,
): (done: number) => void {
  if (!deadline) return () => {};
  const { words } = task;
  const startedAt = deadline.now();
  return (done) => {
    if (deadline.remainingTimeMs() >= deadline.marginMs) return;
    const elapsedMs = Math.max(0, deadline.now() - startedAt);
    const budgetMs = deadline.timeLimitMs - deadline.marginMs;
    const read = `read ${done} of ${total} inputs in ${(elapsedMs / 1000).toFixed(1)} s`;
    if (done > 0 && (elapsedMs * total) / done > budgetMs) {
      throw new WindowTooLargeError(
        `${label} cannot be ${words.built} within the function's time: it ${read}, which projects ` +
          `${((elapsedMs * total) / done / 1000).toFixed(0)} s for the ${words.window}, above the ${(budgetMs / 1000).toFixed(0)} s an ` +
          `invocation has; stopped before the timeout, nothing was written; raise the ${words.functionName}'s timeout ` +
          'and memory (or build the window from windows of a finer grain), then redrive this task',
      );
    }
    throw new DeadlineNearError(
      `stopped: the function deadline came near (less than ${deadline.marginMs} ms left) after it ${read}; ` +
        `the ${words.window} fits a fresh invocation, so the task will be retried`,
    );
  };
}
