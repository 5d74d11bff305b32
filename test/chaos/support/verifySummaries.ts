import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { SummaryAccumulator, serializeSummary } from '../../../app/partition/dailySummary.js';
import { classifyInputs, coverageCandidates, recordedSourceEtag } from '../../../app/partition/inputCoverage.js';
import { judgeSummaryHead, SummaryState } from '../../../app/partition/judgeSummaryHead.js';
import { type LineageEntry, lineageHash, sortLineage } from '../../../app/partition/lineage.js';
import { type SummaryCoverage, summaryCoverageOf } from '../../../app/partition/summaryCoverage.js';
import {
  classifySummaryKey,
  LineageKind,
  lineagePrefix,
  lineageRoot,
  markerKey,
  type SummaryLayout,
  stagingRoot,
  summaryKey,
  summaryRoot,
} from '../../../app/partition/summaryLayout.js';
import { failureIndexDayPrefix, parseFailureIndexKey } from '../../../src/failures/failureIndex.js';
import { DEFAULT_FAILURE_PREFIX } from '../../../src/failures/failureRecord.js';
import { type Day, daysInWindow, partitionName } from '../../../src/keys/partition.js';
import type { PipelineSnapshot, SnapshotObject } from './ChaosPipeline.js';
import { type CrashStormEvidence, checkDlqHoldsPoison, failureRecordReasons, recorders } from './verifyAgainstClean.js';

/** What a clean run published for one day. */
export interface CleanSummary {
  readonly bytes: Buffer;
  readonly lineageHash: string;
  /** That day's lineage, as {@link lineageIds}. */
  readonly lineage: readonly string[];
}

/** The comparison of a chaos run's summaries with its final lineage and with the clean run. */
export interface SummaryVerdict {
  /** Days whose summary was checked. */
  summariesVerified: number;
  /** Of those, byte-for-byte equal to the clean run's summary of the same day. */
  summariesEqualToClean: number;
  /**
   * Of those, days whose lineage differs from the clean run's only by outputs of inputs deleted
   * during the run that were written before the delete (the clean run never had them).
   */
  summariesWithKeptDeleted: number;
  /** Missing, stale (not the final lineage), failing the done-check, wrong bytes, missing marker. */
  lost: number;
  /** Extra markers or objects under the summary prefix. */
  duplicated: number;
  /** Staging copies left by a run killed after publishing (invisible to readers; the stack's lifecycle rule expires them). */
  stagingLeftovers: number;
  /** Summarize DLQ messages that are not poison, and poison missing from it. */
  dlqNonPoison: number;
  /** Healthy dead letters proven a crash storm, with the proof. */
  crashStorm?: string[];
  dlqMissingPoison: number;
  problems: string[];
}

/**
 * Checks the summary stage's final state, for every day of the backfilled window:
 *
 * - the published summary exists, passes the worker's own done-check (integrity against S3's stored
 *   SHA-256; lineage hash and code version) against the day's FINAL lineage as listed in the
 *   snapshot, so a summary of a partial or superseded lineage counts as lost;
 * - its bytes equal the summary recomputed here from the snapshot's lineage objects (the same pure
 *   accumulator the worker uses, fed the bytes the chaos run left);
 * - they also equal the clean run's summary of that day whenever both runs ended with the same
 *   lineage; a different lineage is accepted only when the difference is outputs of inputs deleted
 *   mid-run (written before the delete, kept: the pipeline reacts to ObjectCreated only);
 * - exactly one manifest marker, naming the final lineage hash, the summary's ETag and the code version;
 * - nothing else under the summary prefix but staging copies (counted, not hidden);
 * - the summarize DLQ holds exactly the summary poison.
 *
 * @example
 * const verdict = await verifySummaries({ snapshot, layout, window, codeVersion: 'summarize@1', clean, deleted, poison });
 */
export async function verifySummaries(input: {
  readonly snapshot: PipelineSnapshot;
  readonly layout: SummaryLayout;
  readonly window: { readonly from: Day; readonly to: Day };
  readonly codeVersion: string;
  /** The clean run's summaries by day. */
  readonly clean: ReadonlyMap<Day, CleanSummary>;
  /** Lineage objects (as {@link lineageIds}) of the outputs of inputs deleted during the run. */
  readonly deleted: ReadonlySet<string>;
  /** Messages sent to the summarize queue that must end in its DLQ. */
  readonly poison: readonly string[];
  /** Per-message evidence that lets a healthy dead letter count as a proven crash storm. @default none */
  readonly crashStorm?: CrashStormEvidence;
  /**
   * Where the failure records are (`failures/{queue}/{messageId}.json`): a healthy dead letter is
   * reported with what its record says, as `rerun redrive` would show it.
   * @default DEFAULT_FAILURE_PREFIX
   */
  readonly failurePrefix?: string;
}): Promise<SummaryVerdict> {
  const { snapshot, layout, codeVersion } = input;
  const verdict: SummaryVerdict = {
    summariesVerified: 0,
    summariesEqualToClean: 0,
    summariesWithKeptDeleted: 0,
    lost: 0,
    duplicated: 0,
    stagingLeftovers: 0,
    dlqNonPoison: 0,
    dlqMissingPoison: 0,
    problems: [],
  };
  const { lost, duplicated } = recorders(verdict);
  const objects = new Map(snapshot.objects.map((o) => [o.key, o]));
  const accounted = new Set<string>();

  for (const day of daysInWindow(input.window.from, input.window.to)) {
    verdict.summariesVerified++;
    const { lineage, coverage, hash } = finalSummaryInputs(snapshot, layout, day, codeVersion);
    const key = summaryKey(layout, day);
    accounted.add(key);
    const summary = objects.get(key);
    if (!summary) {
      lost(`${key}: no summary`);
      continue;
    }
    const coverageDigest = coverage.digest;
    const judgement = judgeSummaryHead(summary.head, { day, lineageHash: hash, codeVersion, coverageDigest });
    if (judgement.state !== SummaryState.CURRENT) {
      lost(`${key}: ${judgement.state} against the final lineage (${'reason' in judgement ? judgement.reason : ''})`);
      continue;
    }
    const expected = await recompute(day, lineage, coverage, objects, layout, codeVersion, hash);
    if (!expected.equals(summary.bytes)) {
      lost(
        `${key}: bytes differ from the summary of the final lineage (${summary.bytes.length} vs ${expected.length})`,
      );
      continue;
    }
    const marker = markerKey(layout, day, {
      lineageHash: hash,
      summaryEtag: summary.head.etag,
      codeVersion,
      coverageDigest,
    });
    if (objects.has(marker)) accounted.add(marker);
    else lost(`${key}: manifest marker ${marker} missing (the planner would call the day stale)`);

    const clean = input.clean.get(day);
    if (!clean) {
      lost(`${key}: the clean run has no summary for ${day} (harness problem)`);
    } else if (clean.lineageHash === hash) {
      if (clean.bytes.equals(summary.bytes)) verdict.summariesEqualToClean++;
      else lost(`${key}: same lineage as the clean run but other bytes`);
    } else {
      const ids = lineageIds(lineage);
      const onlyHere = ids.filter((id) => !clean.lineage.includes(id));
      const onlyClean = clean.lineage.filter((id) => !ids.includes(id));
      if (onlyClean.length === 0 && onlyHere.length > 0 && onlyHere.every((id) => input.deleted.has(id))) {
        verdict.summariesWithKeptDeleted++;
      } else {
        lost(
          `${key}: lineage differs from the clean run's (only here: ${onlyHere.join(', ') || '-'}; ` +
            `only in the clean run: ${onlyClean.join(', ') || '-'})`,
        );
      }
    }
  }

  const root = summaryRoot(layout);
  const staging = stagingRoot(layout);
  for (const object of snapshot.objects) {
    if (object.key.startsWith(staging)) {
      verdict.stagingLeftovers++;
      continue;
    }
    if (!object.key.startsWith(root) || accounted.has(object.key)) continue;
    const what = classifySummaryKey(layout, object.key).kind;
    duplicated(`${object.key}: ${what === 'marker' ? 'a second manifest marker' : 'extra object'} under the summaries`);
  }

  // The records' reasons are read for the report whether or not there is crash-storm evidence:
  // without them every healthy dead letter read "failure record: none", records or not.
  const recordReasons = failureRecordReasons(snapshot.objects, input.failurePrefix ?? DEFAULT_FAILURE_PREFIX);
  checkDlqHoldsPoison(verdict, 'summarize DLQ', snapshot.summaryDlq, input.poison, {
    maxReceiveCount: input.crashStorm?.maxReceiveCount ?? Number.POSITIVE_INFINITY,
    diedWhileHeld: input.crashStorm?.diedWhileHeld ?? {},
    recordReasons,
  });
  return verdict;
}

/**
 * Lineage entries as `kind/path` strings (`normalized/dt=2026-01-05/a.csv.ndjson`): the same in
 * every run of the same inputs, whatever the buckets are called.
 */
export function lineageIds(entries: readonly Pick<LineageEntry, 'kind' | 'path'>[]): string[] {
  return entries.map((e) => `${e.kind}/${e.path}`);
}

/**
 * What a day's summary must be made of at the end: the final lineage, the day's input coverage (its
 * inputs in the input bucket, the outputs' LastModified, the source ETag of each output older than
 * its input, and the failure index, as the summarize worker reads them) and the lineage hash.
 */
export function finalSummaryInputs(
  snapshot: PipelineSnapshot,
  layout: SummaryLayout,
  day: Day,
  codeVersion: string,
): { lineage: LineageEntry[]; coverage: SummaryCoverage; hash: string } {
  const lineage = finalLineage(snapshot.objects, layout, day);
  const rules = snapshot.inputRules;
  const inputPrefix = `${rules.prefix}${partitionName(day)}/`;
  const indexPrefix = failureIndexDayPrefix(rules.failurePrefix, rules.bucket, day);
  const lineagePrefixes = [LineageKind.NORMALIZED, LineageKind.QUARANTINE].map((k) => lineagePrefix(layout, k, day));
  const listing = {
    inputs: snapshot.inputs.filter((o) => o.key.startsWith(inputPrefix) && !o.key.endsWith('/')),
    outputs: new Map(
      snapshot.objects
        .filter((o) => lineagePrefixes.some((p) => o.key.startsWith(p)))
        .map((o) => [o.key, o.lastModified]),
    ),
    failures: snapshot.objects
      .filter((o) => o.key.startsWith(indexPrefix))
      .map((o) => parseFailureIndexKey(o.key))
      .filter((e) => e !== undefined),
  };
  // As the summarize worker does: an output older than its input is covered when it records the
  // input's ETag (its HEAD's metadata, here from the snapshot).
  const recordedSources = new Map<string, string>();
  for (const { inputKey, outputKey } of coverageCandidates(listing, rules)) {
    const head = snapshot.objects.find((o) => o.key === outputKey)?.head;
    const etag = head && recordedSourceEtag(head.metadata, { bucket: rules.bucket, key: inputKey });
    if (etag) recordedSources.set(outputKey, etag);
  }
  const coverage = summaryCoverageOf(classifyInputs({ ...listing, recordedSources }, rules));
  return { lineage, coverage, hash: lineageHash({ day, codeVersion, entries: lineage }) };
}

/**
 * A day's lineage in the snapshot: its normalized outputs and quarantine objects, with the ETags
 * they have at the end (what the worker lists), sorted as the worker sorts them.
 */
export function finalLineage(objects: readonly SnapshotObject[], layout: SummaryLayout, day: Day): LineageEntry[] {
  const entries: LineageEntry[] = [];
  for (const kind of [LineageKind.NORMALIZED, LineageKind.QUARANTINE]) {
    const root = lineageRoot(layout, kind);
    const prefix = lineagePrefix(layout, kind, day);
    for (const object of objects) {
      if (object.key.startsWith(prefix))
        entries.push({ kind, path: object.key.slice(root.length), etag: object.head.etag });
    }
  }
  return sortLineage(entries);
}

/** The summary of `lineage`, computed from the snapshot's bytes line by line as the worker reads them. */
async function recompute(
  day: Day,
  lineage: readonly LineageEntry[],
  coverage: SummaryCoverage,
  objects: ReadonlyMap<string, SnapshotObject>,
  layout: SummaryLayout,
  codeVersion: string,
  hash: string,
): Promise<Buffer> {
  const accumulator = new SummaryAccumulator();
  for (const entry of lineage) {
    const bytes = objects.get(`${lineageRoot(layout, entry.kind)}${entry.path}`)?.bytes ?? Buffer.alloc(0);
    accumulator.startFile(entry, bytes.length);
    const lines = createInterface({ input: Readable.from([bytes]), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) accumulator.addLine(line);
  }
  return serializeSummary(accumulator.finish({ day, codeVersion, lineageHash: hash, lineage: [...lineage], coverage }));
}
