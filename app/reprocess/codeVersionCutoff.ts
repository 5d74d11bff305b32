import { codeVersionMarkerKey } from '../../src/worker/codeVersionMarker.js';
import type { ListedObject } from './planReprocess.js';

/** What the code-version markers tell planning (see src/worker/codeVersionMarker.ts). */
export type CodeVersionCutoff =
  | {
      readonly state: 'known';
      readonly codeVersion: string;
      /** LastModified of the current version's marker: every output older than this is old code. */
      readonly since: number;
      /**
       * End of the rollout window: outputs from `since` up to here may still come from instances of
       * the older code that were running during the deployment; they get the exact HEAD check.
       */
      readonly until: number;
    }
  | { readonly state: 'unknown'; readonly codeVersion: string; readonly reason: string };

/**
 * Reads the code-version cutoff from a listing of a worker's markers (`{prefix}{worker}/`).
 * Pure. The shortcut holds only when the current version's marker is the newest: if another
 * version's marker is newer, that version ran after this one first did (a rollback, or two
 * versions deployed side by side), and a listing cannot tell which built an output.
 *
 * Why an overlap: Lambda routes invocations to the new code once an update completes, but
 * invocations already running finish on the old code, for up to the function timeout
 * (Lambda Developer Guide, "Configuring Lambda function timeout" and "Updating function code").
 *
 * @example
 * const cutoff = codeVersionCutoff(markers, { prefix: 'code-versions/', worker: 'normalize',
 *   codeVersion: 'normalize@2', overlapMs: 120_000 });
 */
export function codeVersionCutoff(
  markers: readonly ListedObject[],
  options: {
    readonly prefix: string;
    readonly worker: string;
    readonly codeVersion: string;
    readonly overlapMs: number;
  },
): CodeVersionCutoff {
  const { codeVersion } = options;
  const currentKey = codeVersionMarkerKey(options.prefix, options.worker, codeVersion);
  const current = markers.find((m) => m.key === currentKey);
  if (!current) {
    return {
      state: 'unknown',
      codeVersion,
      reason:
        `no worker of code version ${codeVersion} has recorded that it ran (${currentKey}): deploy it first, ` +
        'or use --verify to find old-code outputs with one HEAD each',
    };
  }
  const newer = markers.filter((m) => m.key !== currentKey && m.lastModified > current.lastModified);
  if (newer.length > 0) {
    return {
      state: 'unknown',
      codeVersion,
      reason:
        `another code version ran after ${codeVersion} first did (${newer.map((m) => m.key).join(', ')}: a rollback?), ` +
        'so the listing cannot tell which code built an output: use --verify',
    };
  }
  return { state: 'known', codeVersion, since: current.lastModified, until: current.lastModified + options.overlapMs };
}

/**
 * The cutoff of a worker from its markers as they are now: one listing of `{prefix}{worker}/` in the
 * output bucket, then {@link codeVersionCutoff}. A worker that declares no code version has none.
 *
 * @example
 * const cutoff = await readCodeVersionCutoff(reader, 'out', { prefix: 'code-versions/', worker: 'upper',
 *   codeVersion: 'upper@1', overlapMs: 960_000 });
 */
export async function readCodeVersionCutoff(
  reader: { list(bucket: string, prefix: string): AsyncIterable<ListedObject> },
  outputBucket: string,
  options: {
    readonly prefix: string;
    readonly worker: string;
    readonly codeVersion: string;
    readonly overlapMs: number;
  },
  unknownReason: string,
): Promise<CodeVersionCutoff> {
  if (!options.codeVersion) return { state: 'unknown', codeVersion: '', reason: unknownReason };
  const markers: ListedObject[] = [];
  const root = `${options.prefix}${encodeURIComponent(options.worker)}/`;
  for await (const marker of reader.list(outputBucket, root)) markers.push(marker);
  return codeVersionCutoff(markers, options);
}
