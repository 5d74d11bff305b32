import { createHash } from 'node:crypto';
import { RerunError } from '../errors.js';
import type { PartitionWindow } from '../partitions/partitionScheme.js';
import { WindowTooLargeError } from './errors.js';
import type { OutputWrite } from './publishWindowOutput.js';
import { readWindowInputs } from './readWindowInputs.js';
import type {
  CompiledWindowTask,
  WindowBuildContext,
  WindowInput,
  WindowRunOptions,
  WindowWriter,
} from './WindowTaskDefinition.js';
import type { WindowLineageEntry } from './windowLineage.js';
import { buildWindowMetadata } from './windowMetadata.js';

/**
 * Step 3 of a window task (runWindowTask.ts): a build over one round's pinned reads, into memory, and
 * the write of its bytes with their metadata. The same two steps build a window's output from its
 * inputs, a part of a large window from the part's inputs, and the window from its parts
 * (buildFromParts.ts).
 */

/** Why a round starts over (an input changed, a read was cut off). */
export type Restart = string;

/** A build function: the task's `build`, or its parts' `combine`. */
export type WindowBuildFunction<Result, InputRecord> = (
  inputs: AsyncIterable<WindowInput>,
  writer: WindowWriter,
  context: WindowBuildContext<InputRecord>,
) => Promise<Result>;

/** One round of a build: the lineage it reads and the hash its output will record. */
export interface BuildRound<InputRecord> {
  readonly hash: string;
  readonly lineage: readonly WindowLineageEntry[];
  readonly record: InputRecord | undefined;
}

/**
 * Runs `build` over the round's reads into memory. A restart when an input changed since the listing
 * or a body failed mid-read (a dropped connection); a build's own non-retryable verdict (a corrupt
 * input) and any other failure are thrown. `task.sources` says where each lineage entry is read.
 *
 * @example
 * const built = await buildWindowBytes(task, task.definition.build, window, '2026-12-05', options, round);
 * if (typeof built === 'string') return built; // start over
 */
export async function buildWindowBytes<Result, InputRecord>(
  task: CompiledWindowTask<Result, InputRecord>,
  build: WindowBuildFunction<Result, InputRecord>,
  window: PartitionWindow,
  label: string,
  options: WindowRunOptions,
  round: BuildRound<InputRecord>,
): Promise<{ readonly result: Result; readonly bytes: Buffer } | Restart> {
  const chunks: Uint8Array[] = [];
  const writer = {
    write: (chunk: string | Uint8Array) => {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    },
  };
  const reads = readWindowInputs(
    task as never,
    label,
    round.lineage,
    options.reader,
    options.deadline,
    options.readAhead,
  );
  try {
    const result = await build(reads.inputs, writer, {
      window,
      partition: label,
      codeVersion: task.definition.codeVersion,
      lineageHash: round.hash,
      lineage: round.lineage,
      record: round.record,
      checkDeadline: reads.checkDeadline,
    });
    return { result, bytes: Buffer.concat(chunks) };
  } catch (error) {
    if (reads.changed()) return 'inputs changed while being read';
    // A build's own verdict that retrying cannot help (a corrupt input) stands; a connection that
    // dropped mid-body starts the round over with a fresh build.
    if (RerunError.isRerunError(error) && !error.retryable) throw error;
    const dropped = reads.bodyError();
    if (dropped !== undefined) {
      return `reading an input was interrupted (${dropped instanceof Error ? dropped.message : String(dropped)})`;
    }
    throw error;
  } finally {
    // A build that stopped before the last input leaves reads started ahead: destroy them unread.
    await reads.inputs.return?.(undefined);
  }
}

/**
 * The output's bytes within `maxOutputBytes`, their digest, and a put of them with their metadata.
 *
 * @throws WindowTooLargeError when the bytes are above maxOutputBytes (nothing is written).
 * @example
 * const write = windowOutputWrite(task, '2026-12-05', options, bytes, { hash, entries: 3, recorded: {} });
 */
export function windowOutputWrite(
  task: CompiledWindowTask<unknown, unknown>,
  label: string,
  options: WindowRunOptions,
  bytes: Buffer,
  lineage: { readonly hash: string; readonly entries: number; readonly recorded: { readonly recordDigest?: string } },
): OutputWrite {
  const { definition, words } = task;
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_WINDOW_OUTPUT_BYTES;
  if (bytes.byteLength > maxBytes) {
    throw new WindowTooLargeError(
      `the ${words.output} of ${label} is ${bytes.byteLength} bytes (${lineage.entries} lineage entries), above the bound of ` +
        `${maxBytes} bytes (${words.maxBytesOption}): nothing was written; raise ${words.maxBytesOption} with the ` +
        `${words.functionName}'s memory, then redrive this task`,
    );
  }
  const sha256Base64 = createHash('sha256').update(bytes).digest('base64');
  const metadata = buildWindowMetadata({
    partition: label,
    lineageHash: lineage.hash,
    codeVersion: definition.codeVersion,
    sha256Base64,
    bytes: bytes.byteLength,
    ...lineage.recorded,
  });
  const { bucket, contentType = 'application/octet-stream' } = definition.output;
  return {
    bytes,
    sha256Base64,
    // The store retries a 409 ConditionalRequestConflict (full jitter); one left over is a lost race.
    put: (target, condition) =>
      options.store.put(bucket, target, bytes, { condition, metadata, sha256Base64, contentType }),
  };
}

/** The largest output by default, bytes (built in memory, written with one PutObject). */
export const DEFAULT_MAX_WINDOW_OUTPUT_BYTES = 64 * 1024 ** 2;
