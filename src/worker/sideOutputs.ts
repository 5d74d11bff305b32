import { judgeOutput, OutputState } from '../done/judgeOutput.js';
import { encodeSource, MetadataKey, type SourceIdentity } from '../done/outputMetadata.js';
import { PublishConflictError } from '../errors.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import type { Logger } from '../logging/logger.js';
import type { OutputWriter } from '../publish/OutputWriter.js';
import { DeleteStatus, type S3ObjectStore, type WriteCondition, WriteStatus } from '../s3/S3ObjectStore.js';
import type { OutputStream, WorkerDefinition } from './defineWorker.js';

/*
 * The side-output protocol: the objects a transform writes beside its main output (the normalize
 * worker's quarantine file), each at a deterministic key the worker declares (`sideOutputs`).
 *
 * 1. Written while the transform streams, through `side(name)` ({@link SideOutputWriters}).
 * 2. Published before the main output, which is the commit point: once the main output is valid,
 *    its side outputs exist. A crashed earlier attempt, or a concurrent writer of the same content,
 *    may have written one already: a 412 on create is accepted when that object was built from the
 *    same input content by the same code (its bytes are then the ones this call would write).
 * 3. Every main output, single-part or multipart, lists each side output with its ETag, so the
 *    done-check calls an output done only while the side objects it lists are the ones it lists
 *    ({@link checkListedSideOutputs}).
 * 4. Replacing an output removes the side objects the replaced one listed and the new one has not
 *    ({@link removeStaleSideOutputs}); once a call settles, the side objects it created in rounds
 *    that lost the publish race, and on a redelivery those left by an attempt that died before its
 *    main output, are swept when the output in place does not list them ({@link sweepSideOutputs}).
 *    Only a side object this call created can be its orphan: one it found and accepted is another
 *    writer's, which that writer's output may list.
 * 5. Whoever changes or removes a side object checks the output in place afterwards. An ETag names
 *    bytes, not a write: two writers of the same content write the same ETag, so a conditional
 *    delete cannot tell whose object it removes, and no check made before a delete can see a
 *    writer that publishes an output listing the object after it. So every call that removed or
 *    replaced a side object, or published an output that lists one, ends with one more done-check
 *    round (processObject.ts); one that finds a listed side object missing rebuilds. Whichever of
 *    the two comes last, the remover's check or the publisher's, sees the other's effect.
 * 6. The input gone. An attempt killed between its side output and its main output leaves a side
 *    object that no output lists; when the input is then deleted, no later delivery builds an
 *    output that would replace it, and without an `ObjectRemoved` event (or before its removal's
 *    look again is due) nothing else removes it. So a redelivery whose round reads the input and
 *    finds it gone (404 on the GET) removes, with `If-Match` on the ETag its HEAD saw, each side
 *    object that records this input as its source and that the output in place does not list
 *    ({@link sweepSideOutputs}); and a round that finds the input gone while the output in place
 *    names it and lists a side object that is missing or changed removes that output too, as a delete
 *    event would (removeOutputs.ts): it can never be done again. Why neither races a publisher:
 *    - A publisher of the deleted content read the input before the delete, so before the
 *      remover's GET answered 404. Its output lists the side object, so it ends with the closing
 *      done-check of step 5, which reads the input after its publish. If that read comes after the
 *      delete, it finds the input gone and removes what it published (processObject's step 6). If
 *      it came before, the publish came before the delete, hence before the remover's removal: the
 *      remover's own closing check (step 5: it removed something) comes after the publish, finds
 *      the output listing a side object that is gone and the input gone, and removes the output by
 *      the second rule. A publisher killed before its check is found the same way, by the remover's
 *      check or, when it published later still, by its own redelivery (a killed attempt's message
 *      comes back).
 *    - A publisher for a live input (the key uploaded again after the remover's 404) writes side
 *      objects of its own. Other bytes have another ETag: the remover's If-Match answers 412 and
 *      keeps them. The same bytes have the same ETag, and the publisher may have accepted the
 *      remover's object as its own (a 412 on create, step 2), so the delete may remove a side
 *      object its output lists: the remover counts the removal as a change and runs the closing
 *      done-check of step 5, and the publisher runs its own; whichever comes last after the
 *      publish finds the listed object missing, reads the live input and rebuilds. The second rule
 *      deletes through removeOutputs, which keeps and rebuilds an input that exists again.
 */

/**
 * The side outputs of one round: a writer per declared name, made when the transform first asks.
 *
 * @example
 * const sides = new SideOutputWriters(worker, object, writerFor);
 * await worker.transform(input, { output: main, side: sides.side });
 * const listed = await sides.publishAll(store, source);
 */
export class SideOutputWriters {
  private readonly writers = new Map<string, { key: string; writer: OutputWriter }>();

  constructor(
    private readonly worker: WorkerDefinition,
    private readonly object: S3ObjectEvent,
    private readonly writerFor: (key: string) => OutputWriter,
  ) {}

  /** The transform's `side(name)`: the stream of a declared side output. */
  readonly side = (name: string): OutputStream => {
    const keyOf = this.worker.sideOutputs?.[name];
    if (!keyOf) throw new Error(`worker ${this.worker.name} has no side output "${name}" (declare it in sideOutputs)`);
    let entry = this.writers.get(name);
    if (!entry) {
      const key = keyOf(this.object);
      entry = { key, writer: this.writerFor(key) };
      this.writers.set(name, entry);
    }
    return entry.writer;
  };

  /** Abandons every side output (the transform failed). */
  async abortAll(): Promise<void> {
    await Promise.allSettled([...this.writers.values()].map((s) => s.writer.abort()));
  }

  /**
   * Publishes every side output that has content. Returns name to ETag, for the main output to
   * list, and the ones this call's writes created (only those can become its orphans). `lost`: a
   * side output could not be published by this round's writers (another writer replaced or removed
   * it between its completion and its seal, or a 409 ended its upload): the round starts over.
   */
  async publishAll(store: S3ObjectStore, source: SourceIdentity): Promise<PublishedSideOutputs> {
    const listed: Record<string, string> = {};
    const created: Record<string, string> = {};
    for (const [name, { key, writer }] of this.writers) {
      if (writer.bytesWritten === 0) continue;
      const published = await publishSideOutput(this.worker, store, key, writer, source);
      if (published === 'lost') return { listed, created, lost: true };
      listed[name] = published.etag;
      if (published.created) created[name] = published.etag;
    }
    return { listed, created, lost: false };
  }
}

/** What {@link SideOutputWriters.publishAll} published. */
export interface PublishedSideOutputs {
  /** Name to ETag of every side output of this content, for the main output to list. */
  readonly listed: Readonly<Record<string, string>>;
  /** The subset this call wrote itself; the rest were in place already (accepted, not written). */
  readonly created: Readonly<Record<string, string>>;
  /** A side output's writer is spent: the round lost a race and starts over. */
  readonly lost: boolean;
}

/** What the output in place at the end of a round says about its side outputs. */
export interface FinalOutput {
  /** Source ETag it was built from (undefined when nothing was written: the input is gone). */
  readonly sourceEtag?: string;
  /** Side outputs it lists, name to ETag; undefined when it does not say (written by an earlier release). */
  readonly sideOutputs?: ReadonlyMap<string, string>;
}

/**
 * The first side output a built output lists whose object is missing or has another ETag, or
 * undefined when all match (or the output lists them by name only, without ETags).
 */
export async function checkListedSideOutputs(
  worker: WorkerDefinition,
  store: S3ObjectStore,
  object: S3ObjectEvent,
  listed: ReadonlyMap<string, string>,
): Promise<string | undefined> {
  const checks = [...listed].map(async ([name, etag]) => {
    const keyOf = worker.sideOutputs?.[name];
    if (!keyOf || etag === '') return undefined;
    const side = await store.head(worker.outputBucket, keyOf(object));
    if (!side) return `${name} is missing`;
    return side.etag === etag ? undefined : `${name} has ETag ${side.etag}, the output lists ${etag}`;
  });
  return (await Promise.all(checks)).find((problem) => problem !== undefined);
}

/**
 * Publishes a side output whose deterministic content a crashed earlier attempt or a concurrent
 * writer of the same content may already have written: a 412 on create is accepted when the object
 * there was built from the same input content by the same code (not created by this call), and
 * replaced (If-Match) otherwise.
 */
async function publishSideOutput(
  worker: WorkerDefinition,
  store: S3ObjectStore,
  key: string,
  writer: OutputWriter,
  source: SourceIdentity,
): Promise<{ etag: string; created: boolean } | 'lost'> {
  let condition: WriteCondition = { ifNoneMatch: '*' };
  for (let round = 0; round < 3; round++) {
    const result = await writer.publish(condition, {});
    if (result.status === WriteStatus.WRITTEN) return { etag: result.etag, created: true };
    if (writer.needsNewUpload) {
      await writer.abort();
      return 'lost';
    }
    if (result.status === WriteStatus.CONFLICT) break;
    const existing = await store.head(worker.outputBucket, key);
    if (!existing) {
      condition = { ifNoneMatch: '*' };
      continue;
    }
    const verdict = judgeOutput(existing, { source, codeVersion: worker.codeVersion });
    if (verdict.state === OutputState.BUILT && verdict.sourceEtag === source.etag) {
      await writer.abort();
      return { etag: existing.etag, created: false };
    }
    condition = { ifMatch: existing.etag };
  }
  await writer.abort();
  throw new PublishConflictError(
    `Side output s3://${worker.outputBucket}/${key} kept changing under concurrent writers; the message will be retried.`,
  );
}

/**
 * When an output is replaced and this run produced no content for a side output (e.g. the new
 * input has no bad rows), the side object of the older content would mislead: remove it. Only
 * those the replaced output's metadata lists are removed, on the ETag it lists; when it lists none
 * (an unsealed output, or one of an earlier release), any may exist, and one a HEAD sees goes.
 * A 412 means the object changed since it was listed: another writer's, which it answers for.
 * Returns how many it removed (each is a change the caller checks the output after).
 */
export async function removeStaleSideOutputs(
  worker: WorkerDefinition,
  store: S3ObjectStore,
  object: S3ObjectEvent,
  writtenNow: readonly string[],
  publishedBefore: ReadonlyMap<string, string> | undefined,
  logger: Logger,
): Promise<number> {
  let removed = 0;
  for (const [name, keyOf] of Object.entries(worker.sideOutputs ?? {})) {
    if (writtenNow.includes(name)) continue;
    if (publishedBefore && !publishedBefore.has(name)) continue;
    const key = keyOf(object);
    // No blind delete: If-Match on the ETag the replaced output listed (or a HEAD's, when it did not
    // list one).
    const listedEtag = publishedBefore?.get(name) || (await store.head(worker.outputBucket, key))?.etag;
    if (!listedEtag) continue;
    if ((await store.deleteIfMatch(worker.outputBucket, key, listedEtag)) !== DeleteStatus.DELETED) continue;
    removed++;
    logger.debug('removed side output of older content', { sideOutput: name, key });
  }
  return removed;
}

/**
 * Removes side objects that the output in place does not list, once a call has settled:
 *
 * - `orphans`: created by this call in a round that then lost the publish race. Removed when the
 *   object still has the ETag this call wrote and the final output does not list it with that
 *   ETag: the winner's content had no such side output, or other rows. When the final output does
 *   not say what it lists (an earlier release wrote it), nothing is removed.
 * - `debris`: on a redelivery, any declared side object built from other input content than the
 *   final output's and not listed by it: left by an earlier attempt that died between the side and
 *   the main output. When the round found the input gone (`result.inputGone`), every such object
 *   that records this input as its source is debris, whatever content it was built from: the
 *   protocol's step 6 (above) says why removing it cannot break a publisher.
 *
 * A writer may still be between its side output and its main output, and its object may carry the
 * ETag of ours (same bytes): the caller's closing done-check (the protocol's step 5, above) and
 * that writer's own repair what a removal breaks. Returns how many objects it removed.
 */
export async function sweepSideOutputs(
  worker: WorkerDefinition,
  store: S3ObjectStore,
  object: S3ObjectEvent,
  result: { readonly final: FinalOutput; readonly inputGone?: boolean },
  options: { orphans: ReadonlyMap<string, string>; debris: boolean; logger: Logger },
): Promise<number> {
  const { final } = result;
  let removed = 0;
  for (const [name, keyOf] of Object.entries(worker.sideOutputs ?? {})) {
    const listedEtag = final.sideOutputs?.get(name);
    const orphanEtag = final.sideOutputs === undefined ? undefined : options.orphans.get(name);
    const isDebrisCandidate = options.debris && final.sideOutputs !== undefined && listedEtag === undefined;
    if (orphanEtag === undefined && !isDebrisCandidate) continue;
    if (orphanEtag !== undefined && listedEtag === orphanEtag) continue;
    const key = keyOf(object);
    const existing = await store.head(worker.outputBucket, key);
    if (!existing || existing.etag === listedEtag) continue;
    const mine = orphanEtag !== undefined && existing.etag === orphanEtag;
    const builtFrom = judgeOutput(existing, { source: object, codeVersion: worker.codeVersion });
    // The input gone (the round's GET answered 404): a side object naming it can be listed by no
    // output but one of deleted content, whose writer checks the input after it publishes.
    const ofGoneInput = result.inputGone === true && existing.metadata[MetadataKey.SOURCE] === encodeSource(object);
    const debris =
      isDebrisCandidate &&
      (builtFrom.state !== OutputState.BUILT ||
        ofGoneInput ||
        (final.sourceEtag !== undefined && builtFrom.sourceEtag !== final.sourceEtag));
    if (!mine && !debris) continue;
    if ((await store.deleteIfMatch(worker.outputBucket, key, existing.etag)) !== DeleteStatus.DELETED) continue;
    removed++;
    options.logger.info('removed a side object the output does not list', { sideOutput: name, key, mine });
  }
  return removed;
}
