import { Readable } from 'node:stream';
import type { SourceIdentity } from '../done/outputMetadata.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import { OutputWriter } from '../publish/OutputWriter.js';
import { type GetResult, type S3ObjectStore, type WriteCondition, WriteStatus } from '../s3/S3ObjectStore.js';
import type { Built } from './builtOutput.js';
import type { WorkerDefinition } from './defineWorker.js';
import type { OutputHeadOrNone } from './doneCheck.js';
import type { RoundOptions } from './processObjectOptions.js';
import { ReadGuard } from './readGuard.js';
import type { AttemptResult } from './roundResult.js';
import { SideOutputWriters } from './sideOutputs.js';
import { createTransformInput } from './transformInput.js';

/*
 * The building half of one round of processObject (its step 3): the worker's transform streams
 * into writers for the main and side outputs, which are then published, side outputs first and the
 * main output last (the commit point), each under its condition; a 412 is a lost race (step 4).
 */

/** Runs the worker's transform over the input, streaming into writers for the main and side outputs. */
export async function transform(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  source: SourceIdentity,
  input: Extract<GetResult, { status: 'ok' }>,
  limits: RoundOptions,
): Promise<Built> {
  const { maxInputBytes, store } = limits;
  const writerFor = (key: string) =>
    new OutputWriter({
      store,
      bucket: worker.outputBucket,
      key,
      source,
      codeVersion: worker.codeVersion,
      ...(worker.partBytes ? { partBytes: worker.partBytes } : {}),
      ...(worker.contentType ? { contentType: worker.contentType } : {}),
      ...(limits.messageId ? { writerId: limits.messageId } : {}),
    });
  const main = writerFor(worker.outputKey(object));
  const sides = new SideOutputWriters(worker, object, writerFor);
  const guard = new ReadGuard({
    object,
    storedBytes: input.contentLength,
    ...(maxInputBytes !== undefined ? { maxInputBytes } : {}),
    ...(limits.deadline ? { deadline: limits.deadline } : {}),
  });
  try {
    const summary = await worker.transform(
      createTransformInput({
        source,
        body: guard.active ? guardedBody(input.body, guard) : input.body,
        contentLength: input.contentLength,
        countDecoded: (bytes) => guard.countDecoded(bytes),
      }),
      { output: main, side: sides.side },
    );
    return { summary, main, sides };
  } catch (error) {
    input.body.destroy();
    await Promise.allSettled([main.abort(), sides.abortAll()]);
    throw error;
  } finally {
    guard.end();
  }
}

/**
 * Publishes side outputs first (src/worker/sideOutputs.ts), then the main output, the commit point,
 * which lists each: `If-None-Match: *` where the done-check saw none, else `If-Match` on the ETag it
 * saw. Whatever fails from here on, no multipart upload of this round is left open. A lost race
 * whose single-part main output was refused returns it as `kept`, with the side outputs it lists.
 */
export async function publish(
  built: Built,
  source: SourceIdentity,
  head: OutputHeadOrNone,
  store: S3ObjectStore,
): Promise<
  | { readonly etag: string; readonly listed: Readonly<Record<string, string>> }
  | Extract<AttemptResult, { lostRace: true }>
> {
  const { main, sides, summary } = built;
  let sideOutputs: Awaited<ReturnType<SideOutputWriters['publishAll']>>;
  let published: Awaited<ReturnType<OutputWriter['publish']>> | undefined;
  try {
    sideOutputs = await sides.publishAll(store, source);
    const condition: WriteCondition = head ? { ifMatch: head.etag } : { ifNoneMatch: '*' };
    // The store retries a single PutObject's 409; a multipart 409 (or one left over) is answered by
    // starting over with a new writer, as a lost race is.
    if (!sideOutputs.lost) published = await main.publish(condition, summary, sideOutputs.listed);
  } catch (error) {
    await Promise.allSettled([main.abort(), sides.abortAll()]);
    throw error;
  }
  if (published?.status !== WriteStatus.WRITTEN) {
    // A single-part output behind published side outputs is kept: a create-first round's next round
    // may publish it instead of building it again (src/worker/keptOutput.ts).
    if (published !== undefined && !main.multipart) {
      return { lostRace: true, created: sideOutputs.created, kept: { built, source, listed: sideOutputs.listed } };
    }
    await main.abort();
    return { lostRace: true, created: sideOutputs.created };
  }
  return { etag: published.etag, listed: sideOutputs.listed };
}

/**
 * The body as the transform reads it: the same bytes, each chunk counted by the guard first, so that
 * a read running into the deadline stops with the guard's error (the stream fails with it).
 */
function guardedBody(body: Readable, guard: ReadGuard): Readable {
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      guard.countRaw(bytes.length);
      yield bytes;
    }
  }
  return Readable.from(counted(), { objectMode: false });
}
