import { OutputState } from '../done/judgeOutput.js';
import type { SourceIdentity } from '../done/outputMetadata.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import type { Logger } from '../logging/logger.js';
import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { Built } from './builtOutput.js';
import type { WorkerDefinition } from './defineWorker.js';
import type { Judged } from './doneCheck.js';
import type { ObjectOutcome } from './ObjectOutcome.js';
import type { AttemptResult } from './roundResult.js';
import { removeStaleSideOutputs } from './sideOutputs.js';

/*
 * What one round of processObject does once its output is published: removes the side objects the
 * replaced output listed and the new one does not, and outputs at keys of earlier releases, and
 * describes what was written (the round's processed outcome).
 */

/**
 * After a publish: removes the side objects the replaced output listed and the new one does not,
 * and outputs at keys of earlier releases; describes what was written.
 */
export async function tidy(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  round: {
    readonly judged: Judged;
    readonly built: Built;
    readonly source: SourceIdentity;
    readonly was: string;
    readonly published: { readonly etag: string; readonly listed: Readonly<Record<string, string>> };
  },
  store: S3ObjectStore,
  logger: Logger,
): Promise<AttemptResult> {
  const { judged, built, source, was, published } = round;
  const { head, verdict, outputKey } = judged;
  const listedNow = Object.keys(published.listed);
  const staleRemoved = head ? await removeStaleSideOutputs(worker, store, object, listedNow, judged.listed, logger) : 0;
  await removeLegacyOutputs(worker, store, object, logger);
  const { summary } = built;
  const outcome: ObjectOutcome = {
    status: 'processed',
    reason: `${verdict.state === OutputState.MISSING ? 'output created' : `output replaced (${was})`}${describeSummary(summary)}`,
    outputKey,
    source,
    summary,
    outputEtag: published.etag,
    output: {
      bucket: worker.outputBucket,
      key: outputKey,
      etag: published.etag,
      sha256: built.main.contentChecksum ?? '',
      summary: Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, String(v)])),
      sourceEtag: source.etag,
    },
  };
  return {
    outcome,
    final: { sourceEtag: source.etag, sideOutputs: new Map(Object.entries(published.listed)) },
    changedSideObjects: listedNow.length + staleRemoved,
    created: head === undefined,
    outputWasInPlace: head !== undefined,
  };
}

/**
 * Removes what earlier releases wrote for this input at other keys (worker.legacyOutputKeys), now that
 * the output is published at its current key: left in place, a day would count the input twice.
 */
async function removeLegacyOutputs(
  worker: WorkerDefinition,
  store: S3ObjectStore,
  object: S3ObjectEvent,
  logger: Logger,
): Promise<void> {
  const current = new Set([worker.outputKey(object), ...Object.values(worker.sideOutputs ?? {}).map((k) => k(object))]);
  for (const key of worker.legacyOutputKeys?.(object) ?? []) {
    if (current.has(key)) continue;
    // Conditional like every delete (the bucket policy requires s3:if-match): on the ETag seen now.
    const legacy = await store.head(worker.outputBucket, key);
    if (!legacy) continue;
    await store.deleteIfMatch(worker.outputBucket, key, legacy.etag);
    logger.info('removed an output at its earlier key', { key });
  }
}

/** `: records 12, quarantined 3` — the transform's summary, for people reading logs and tables. */
function describeSummary(summary: Readonly<Record<string, string | number>>): string {
  const entries = Object.entries(summary);
  return entries.length === 0 ? '' : `: ${entries.map(([k, v]) => `${k} ${v}`).join(', ')}`;
}
