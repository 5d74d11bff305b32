import { createHash } from 'node:crypto';
import { PublishConflictError } from '../errors.js';
import { type S3ObjectStore, type WriteCondition, type WriteResult, WriteStatus } from '../s3/S3ObjectStore.js';
import type { S3PartitionStore } from '../s3/S3PartitionStore.js';
import { WindowOutputInvalidError } from './errors.js';
import { parseWindowMarker, type WindowMarker, windowMarkerKey } from './windowMarker.js';
import { WindowMetadataKey } from './windowMetadata.js';

/**
 * Write-audit-publish of a window's output, and its manifest marker. The output's bytes are put at a
 * staging key that is a function of the lineage hash, read back and validated, then published with
 * `If-None-Match: *` (first publish) or `If-Match` on the ETag the done-check saw (replace); a 412
 * means another writer published first. Readers see the old output or the new one, never a partial
 * or mixed one (one PutObject is atomic).
 */

/** The output's canonical bytes, their digest, and a put of them with its metadata. */
export interface OutputWrite {
  readonly bytes: Uint8Array;
  readonly sha256Base64: string;
  put(target: string, condition: WriteCondition): Promise<WriteResult>;
}

/** Where and how to publish one window's output. */
export interface PublishTarget {
  readonly store: S3ObjectStore;
  readonly reader: S3PartitionStore;
  readonly bucket: string;
  readonly key: string;
  readonly stagingKey: string;
  /** The output's noun in messages (`summary`, `window output`). */
  readonly noun: string;
  /** What the done-check saw at `key` (replace it with If-Match), or undefined (create-only). */
  readonly head: { readonly etag: string } | undefined;
  /** The task's own audit of the staged bytes: a reason to refuse them, or undefined. */
  readonly validate: (bytes: Uint8Array) => string | undefined;
}

/** Why a round starts over instead of publishing. */
export type PublishRestart = 'another writer published first' | 'staged copy vanished';

/**
 * Stages, validates and publishes `write`, then removes the staging copy. Returns the published
 * ETag, or a restart when another writer published first or the staged copy vanished.
 *
 * @throws WindowOutputInvalidError when the staged copy is not the bytes written or fails `validate`.
 * @example
 * const published = await stageValidatePublish(target, write);
 * if (typeof published === 'string') return published; // start over
 */
export async function stageValidatePublish(
  target: PublishTarget,
  write: OutputWrite,
): Promise<{ readonly etag: string } | PublishRestart> {
  const { store, reader, bucket, key, stagingKey: staged, head, noun } = target;
  const { sha256Base64, put } = write;
  // Stage. The staging key is a function of the lineage hash, so an object already there holds the
  // same lineage's output from a crashed or concurrent run: accept it when its digest matches.
  let stagedWrite = await put(staged, { ifNoneMatch: '*' });
  if (stagedWrite.status === WriteStatus.PRECONDITION_FAILED) {
    const existing = await store.head(bucket, staged);
    if (existing && existing.checksumSHA256 !== sha256Base64) {
      stagedWrite = await put(staged, { ifMatch: existing.etag });
    } else if (existing) {
      stagedWrite = { status: WriteStatus.WRITTEN, etag: existing.etag };
    } else {
      stagedWrite = await put(staged, { ifNoneMatch: '*' });
    }
  }
  if (stagedWrite.status !== WriteStatus.WRITTEN) return 'another writer published first';

  // Validate what was staged (the audit): read it back, compare digests, then the task's own check.
  const stagedBytes = await reader.getBytes(bucket, staged);
  if (!stagedBytes) return 'staged copy vanished';
  if (createHash('sha256').update(stagedBytes).digest('base64') !== sha256Base64) {
    throw new WindowOutputInvalidError(`staged ${noun} s3://${bucket}/${staged} differs from the bytes written`);
  }
  const refused = target.validate(stagedBytes);
  if (refused !== undefined) {
    throw new WindowOutputInvalidError(`staged ${noun} s3://${bucket}/${staged} is invalid: ${refused}`);
  }

  // Publish: create-only when nothing was there, compare-and-swap on what the done-check saw.
  const published = await put(key, head ? { ifMatch: head.etag } : { ifNoneMatch: '*' });
  if (published.status !== WriteStatus.WRITTEN) {
    // The next round stages under its own lineage hash: do not leave this copy behind.
    await store.deleteIfMatch(bucket, staged, stagedWrite.etag);
    return 'another writer published first';
  }
  // A crash before the marker leaves a published output the planner reports as stale; the next
  // run's done-check finds it current, removes the staging copy it may have left and writes only the marker.
  await store.deleteIfMatch(bucket, staged, stagedWrite.etag);
  return published;
}

/**
 * Makes a window's markers name the output published now: creates `marker` (create-only; a 412
 * means it exists) and removes the markers that name another ETag than the published one.
 *
 * The published output (its ETag, lineage hash and code version) is read with a HEAD made AFTER the marker listing, and a delete is conditional
 * on the marker's own ETag (`If-Match`; docs/AWS-BEHAVIOUR.md, "Conditional deletes"). A marker is written
 * only after its output was published, so a marker in the listing names an output published before
 * that HEAD: if it does not name the one the HEAD sees, it is superseded and may go. A writer whose own
 * output was superseded meanwhile removes its own marker instead of the newer writer's. (Before,
 * each writer deleted every marker but its own, so an older writer's marker step could delete the
 * newer writer's marker and leave one naming an ETag no longer published.) When the listing shows
 * exactly the wanted marker, nothing is written and no HEAD is made.
 *
 * Returns whether anything changed.
 *
 * @example
 * const repaired = await ensureWindowMarker(store, reader, { bucket, outputKey, markerPrefix }, marker);
 */
export async function ensureWindowMarker(
  store: S3ObjectStore,
  reader: S3PartitionStore,
  target: { readonly bucket: string; readonly outputKey: string; readonly markerPrefix: string },
  marker: WindowMarker,
): Promise<boolean> {
  const { bucket, outputKey, markerPrefix } = target;
  const wanted = windowMarkerKey(markerPrefix, marker);
  const listed = await reader.listAll(bucket, { prefix: markerPrefix });
  const markers = listed.flatMap((object) => {
    const found = parseWindowMarker(object.key.slice(markerPrefix.length));
    return found ? [{ key: object.key, etag: object.etag, marker: found }] : [];
  });
  const own = markers.find((m) => m.key === wanted);
  const others = markers.filter((m) => m.key !== wanted);
  let changed = false;
  let created: (typeof markers)[number] | undefined;
  if (!own) {
    const empty = new Uint8Array();
    const result = await store.put(bucket, wanted, empty, {
      condition: { ifNoneMatch: '*' },
      metadata: {},
      sha256Base64: createHash('sha256').update(empty).digest('base64'),
    });
    if (result.status === WriteStatus.CONFLICT) {
      throw new PublishConflictError(`manifest marker s3://${bucket}/${wanted} is being written concurrently`);
    }
    if (result.status === WriteStatus.WRITTEN) {
      changed = true;
      created = { key: wanted, etag: result.etag, marker };
    }
  }
  if (others.length === 0) return changed;
  const head = await store.head(bucket, outputKey);
  // Equal bytes have equal ETags whatever lineage built them: the metadata names the publish exactly.
  const names = (m: WindowMarker) =>
    head !== undefined &&
    m.outputEtag === head.etag &&
    m.lineageHash === head.metadata[WindowMetadataKey.LINEAGE_HASH] &&
    m.codeVersion === head.metadata[WindowMetadataKey.CODE_VERSION];
  const mine = own ?? created;
  for (const candidate of mine ? [...others, mine] : others) {
    if (names(candidate.marker)) continue;
    await store.deleteIfMatch(bucket, candidate.key, candidate.etag);
    changed = true;
  }
  return changed;
}

/**
 * Removes a staging copy left by an interrupted run: a HEAD for its ETag, then a delete with
 * `If-Match` on it (no blind delete: the bucket policy requires `s3:if-match` on DeleteObject).
 *
 * @example
 * await removeIfPresent(store, 'out', 'daily/_staging/dt=2026-12-05/ab12.json');
 */
export async function removeIfPresent(store: S3ObjectStore, bucket: string, key: string): Promise<void> {
  const head = await store.head(bucket, key);
  if (head) await store.deleteIfMatch(bucket, key, head.etag);
}
