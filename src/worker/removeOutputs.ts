import { decideRemoval, type SeenOutput } from '../done/removalDecision.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { DeleteStatus, type S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { WorkerDefinition } from './defineWorker.js';
import { outsideInputs } from './inputScope.js';
import type { ObjectOutcome } from './ObjectOutcome.js';

/**
 * Brings the output of an input that exists again up to date, with `options.rebuild` (the done-check,
 * then a rebuild if needed); without one, leaves it to the input's own event.
 */
async function rebuild(
  object: Pick<S3ObjectEvent, 'bucket' | 'key'>,
  options: RemoveOutputsOptions,
  why: string,
): Promise<ObjectOutcome> {
  if (!options.rebuild) return { status: 'skipped', reason: `${why}: outputs kept` };
  const outcome = await options.rebuild({ bucket: object.bucket, key: object.key, eventName: 'ObjectCreated:Put' });
  return { ...outcome, reason: `${why}: ${outcome.reason}` };
}

/** Options of {@link removeOutputs}. */
export interface RemoveOutputsOptions {
  readonly store: S3ObjectStore;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * Brings the output of an input that exists again up to date: `processObject` with the worker and
   * store (the batch handler passes it; processObject passes itself). An input deleted and uploaded
   * again with the same bytes keeps its ETag, so its own event may have found the output done just
   * before this removal deleted it. Without `rebuild` such an input is left to its own event.
   * @default none
   */
  readonly rebuild?: (object: S3ObjectEvent) => Promise<ObjectOutcome>;
}

/**
 * Deletion propagates: removes a deleted input's outputs, main and side, so the output set mirrors
 * the inputs (as a rerun of a slice does in Delta's replaceWhere). Used for `ObjectRemoved` events
 * and by `rerun reprocess --prune`.
 *
 * 1. HEAD every output of the input (main and each declared side output): their ETags.
 * 2. HEAD the input: if it exists (re-uploaded since the delete), keep everything and bring the
 *    output up to date as for a create event (the done-check; usually it is done already).
 * 3. Delete each output that names this input with `If-Match` on the ETag of step 1
 *    (docs/AWS-BEHAVIOUR.md, "Conditional deletes"): a version published by a concurrent rebuild after step
 *    1 has another ETag, answers 412 and is kept. See removalDecision.ts for why the order matters.
 *
 * 4. When something was removed, HEAD the input again: if it exists now (re-uploaded after step 2),
 *    bring its output back at once (processObject). An output rebuilt from the same bytes has the
 *    same ETag, so step 3's If-Match cannot tell it from the one seen in step 1, and the re-upload's
 *    own event may already have found that output done and gone: whoever deletes checks after.
 *
 * The main output goes first: it is the commit point, so once it is gone nothing counts the side
 * objects, and a retry (the message comes back on a failure) finds and removes what is left.
 * Known window: a worker that read the input before the delete and publishes after step 3 leaves
 * an output of a deleted input; `rerun reprocess --prune` finds and removes it.
 *
 * @example
 * const outcome = await removeOutputs(worker, { bucket: 'in', key: 'incoming/a.csv', eventName: 'ObjectRemoved:Delete' },
 *   { store });
 */
export async function removeOutputs(
  worker: WorkerDefinition,
  object: Pick<S3ObjectEvent, 'bucket' | 'key' | 'eventName'>,
  options: RemoveOutputsOptions,
): Promise<ObjectOutcome> {
  const logger = withFields(options.logger ?? silentLogger, {
    worker: worker.name,
    bucket: object.bucket,
    key: object.key,
  });
  // A delete named outside the worker's inputs removes nothing: its outputs are not this object's.
  const outside = outsideInputs(worker, object);
  if (outside) return { status: 'skipped', reason: outside };
  if (object.key.endsWith('/')) return { status: 'skipped', reason: 'folder marker (key ends with "/")' };
  const skip = worker.skipReason?.({ ...object, eventName: object.eventName });
  if (skip) return { status: 'skipped', reason: skip };
  const { store } = options;
  const source = { bucket: object.bucket, key: object.key };
  const targets = [
    { name: 'main', key: worker.outputKey(source) },
    ...Object.entries(worker.sideOutputs ?? {}).map(([name, keyOf]) => ({ name, key: keyOf(source) })),
  ];
  const outputs: SeenOutput[] = await Promise.all(
    targets.map(async (t) => ({ ...t, head: await store.head(worker.outputBucket, t.key) })),
  );
  const inputExists = (await store.head(object.bucket, object.key)) !== undefined;
  const decision = decideRemoval({ source, inputExists, outputs });
  const mainKey = targets[0]?.key;
  // Re-uploaded since the delete: its output must reflect it. Usually it does (the re-upload's own
  // event built it); but an earlier delivery of this event may have removed it and died before it
  // could bring it back (step 4), and then nothing else would.
  if (inputExists) return rebuild(object, options, decision.skipReason ?? 'input exists again');
  if (decision.skipReason)
    return { status: 'skipped', reason: decision.skipReason, ...(mainKey ? { outputKey: mainKey } : {}) };

  const removed: string[] = [];
  const keptNow: string[] = [];
  // Removed meanwhile by another removal (the input's own delete event, or a prune): nothing left.
  const gone: string[] = [];
  for (const o of decision.remove) {
    const result = await store.deleteIfMatch(worker.outputBucket, o.key, o.etag);
    if (result === DeleteStatus.PRECONDITION_FAILED) {
      keptNow.push(o.name);
      logger.info('output changed since it was seen (a re-upload is being built): kept', { outputKey: o.key });
    } else if (result === DeleteStatus.DELETED) {
      removed.push(o.name);
    } else {
      gone.push(o.name);
    }
  }
  for (const k of decision.kept)
    logger.warn('object at an output key was kept', { outputKey: k.key, reason: k.reason });
  if (removed.length > 0 && (await store.head(object.bucket, object.key)) !== undefined) {
    logger.info('input re-uploaded while its outputs were removed: rebuilding them', { outputKey: mainKey });
    return rebuild(object, options, `input re-uploaded while its outputs were removed (${removed.join(', ')})`);
  }
  const parts = [
    removed.length > 0 ? `input deleted: removed ${removed.join(', ')}` : 'input deleted: nothing removed',
    ...(gone.length > 0 ? [`already gone: ${gone.join(', ')} (removed meanwhile by another removal)`] : []),
    ...(keptNow.length > 0 ? [`kept ${keptNow.join(', ')} (replaced meanwhile by a rebuild)`] : []),
    // Each kept object with why: an operator pruning orphans must see what was left and for what reason.
    ...decision.kept.map((k) => `kept ${k.name}: ${k.reason}`),
  ];
  const kept = keptNow.length + decision.kept.length;
  return {
    status: removed.length > 0 ? 'processed' : 'skipped',
    reason: parts.join('; '),
    ...(mainKey ? { outputKey: mainKey } : {}),
    ...(kept > 0 ? { kept } : {}),
  };
}
