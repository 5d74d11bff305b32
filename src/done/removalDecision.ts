import type { OutputHead } from './judgeOutput.js';
import { encodeSource, MetadataKey } from './outputMetadata.js';

/** One output of an input (the main output or a side output) as a HEAD saw it. */
export interface SeenOutput {
  /** `main`, or the side output's name (`quarantine`). */
  readonly name: string;
  readonly key: string;
  /** undefined: nothing at the key. */
  readonly head: OutputHead | undefined;
}

/** What to do with the outputs of an input that was deleted. */
export interface RemovalDecision {
  /** Delete each with `If-Match` on the ETag seen, so a version written after the HEAD is kept. */
  readonly remove: readonly { readonly name: string; readonly key: string; readonly etag: string }[];
  /** Kept, with the reason (for logs). */
  readonly kept: readonly { readonly name: string; readonly key: string; readonly reason: string }[];
  /** Why nothing is removed at all, when that is the case. */
  readonly skipReason?: string;
}

/**
 * Decides which outputs of a deleted input to remove. Pure: the HEADs of the outputs come first,
 * then the HEAD of the input; the caller deletes with `If-Match` on the ETags seen here.
 *
 * Why that order is safe (S3 is strongly consistent for reads after writes): an output version V
 * seen by the first HEADs was built from input content that existed before them. When the input
 * HEAD that follows answers 404, that content is gone; a re-upload after it writes a new output
 * version (another ETag), so `If-Match: V` fails with 412 and the rebuilt output is kept.
 * An object at an output key that does not name this input in its metadata is not ours: kept.
 *
 * @example
 * const decision = decideRemoval({ source: { bucket: 'in', key: 'incoming/a.csv' }, inputExists: false,
 *   outputs: [{ name: 'main', key: 'normalized/in/a.csv.ndjson', head }] });
 * for (const o of decision.remove) await store.deleteIfMatch('out', o.key, o.etag);
 */
export function decideRemoval(options: {
  readonly source: { readonly bucket: string; readonly key: string };
  readonly inputExists: boolean;
  readonly outputs: readonly SeenOutput[];
}): RemovalDecision {
  const present = options.outputs.filter((o) => o.head !== undefined);
  if (options.inputExists) {
    return {
      remove: [],
      kept: present.map((o) => ({ name: o.name, key: o.key, reason: 'input exists (re-uploaded since the delete)' })),
      skipReason: 'input exists again (re-uploaded after the delete): outputs kept',
    };
  }
  if (present.length === 0) return { remove: [], kept: [], skipReason: 'input deleted: no output to remove' };
  const expected = encodeSource(options.source);
  const remove: { name: string; key: string; etag: string }[] = [];
  const kept: { name: string; key: string; reason: string }[] = [];
  for (const o of present) {
    const head = o.head as OutputHead;
    const source = head.metadata[MetadataKey.SOURCE];
    if (source === expected) remove.push({ name: o.name, key: o.key, etag: head.etag });
    else
      kept.push({
        name: o.name,
        key: o.key,
        reason: `object does not name this input (${source ?? 'no rerun metadata'})`,
      });
  }
  return { remove, kept };
}
