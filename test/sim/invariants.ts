import { parseSummary } from '../../app/partition/dailySummary.js';
import { judgePartition, type PartitionListing, PartitionStatus } from '../../app/partition/judgePartition.js';
import { judgeSummaryHead, SummaryState } from '../../app/partition/judgeSummaryHead.js';
import { type LineageEntry, lineageHash } from '../../app/partition/lineage.js';
import {
  classifySummaryKey,
  LineageKind,
  lineagePrefix,
  lineageRoot,
  type MarkerInfo,
  type SummaryLayout,
  stagingRoot,
  summaryKey,
} from '../../app/partition/summaryLayout.js';
import { SummaryMetadataKey } from '../../app/partition/summaryMetadata.js';
import { judgeOutput, OutputState } from '../../src/done/judgeOutput.js';
import { MetadataKey, publishedSideOutputs, readSummary } from '../../src/done/outputMetadata.js';
import type { Day } from '../../src/keys/partition.js';
import { judgeWindow, WindowStatus } from '../../src/window/judgeWindow.js';
import { judgeWindowHead, WindowOutputState } from '../../src/window/judgeWindowHead.js';
import { type WindowLineageEntry, windowLineageHash } from '../../src/window/windowLineage.js';
import { parseWindowMarker, type WindowMarker } from '../../src/window/windowMarker.js';
import { WindowMetadataKey } from '../../src/window/windowMetadata.js';
import { windowOutputKeys } from '../../src/window/windowOutputLayout.js';
import type { Receiver } from './actors.js';
import type { StoredObject } from './model/S3Model.js';
import { INPUT_BUCKET, OUTPUT_BUCKET, type SimWorld } from './SimWorld.js';
import { expectedOutputs, outputKeyOf, quarantineKeyOf } from './simWorker.js';
import type { SummarySetup } from './summaryActor.js';
import {
  type CountLine,
  HOURLY_PREFIX,
  LAKE_BUCKET,
  parseCounts,
  SIM_WINDOW,
  SIM_WINDOW_CODE_VERSION,
  type WindowTaskSetup,
} from './windowTaskActor.js';

/** What the checks need to know of one configuration. */
export interface InvariantOptions {
  readonly inputKey: string;
  readonly codeVersion: string;
  readonly receiver?: Receiver;
  /** Whether the side effect ran (then the current output must have been notified). */
  readonly notify: boolean;
  /**
   * Keys under this prefix of the output bucket are the summary stage's (checked by checkSummary).
   * @default undefined: no summary stage, every other key is unexpected
   */
  readonly summaryPrefix?: string;
}

/**
 * The invariants that must hold once nothing can run any more (every message handled, every actor
 * done or waiting for work):
 *
 * 1. An input that exists has an output that reflects its current content: valid (the done-check
 *    calls it built, by this code version, from the input's ETag), with exactly the rows the
 *    worker makes of that content, its counts in its metadata, and the side outputs it owns listed
 *    with their ETags, each there with that ETag and with exactly the quarantined rows. No row is
 *    lost: every line of the input is in the output or in the quarantine.
 * 2. An input that is gone has no outputs.
 * 3. Nothing is dead-lettered (no input is poison) and every message was handled.
 * 4. No side object is left that no output lists.
 * 5. A multipart upload is left open only by a writer that crashed (the lifecycle rule aborts it).
 * 6. The side effect: two calls with one idempotency key never ran at once, and the current
 *    output's notification reached the receiver.
 */
export function checkPipeline(world: SimWorld, options: InvariantOptions): string[] {
  const violations: string[] = [];
  const source = { bucket: INPUT_BUCKET, key: options.inputKey };
  const input = world.s3.peek(INPUT_BUCKET, options.inputKey);
  const mainKey = outputKeyOf(source);
  const quarantineKey = quarantineKeyOf(source);
  const main = world.s3.peek(OUTPUT_BUCKET, mainKey);
  const quarantine = world.s3.peek(OUTPUT_BUCKET, quarantineKey);

  if (input) {
    const content = input.body.toString('utf8');
    const expected = expectedOutputs(content);
    if (!main) {
      violations.push(`input exists (ETag ${input.etag}) but has no output`);
    } else {
      const verdict = judgeOutput(headOf(main), { source, codeVersion: options.codeVersion });
      if (verdict.state !== OutputState.BUILT) {
        violations.push(`output is ${verdict.state}: ${'reason' in verdict ? verdict.reason : ''}`);
      } else if (verdict.sourceEtag !== input.etag) {
        violations.push(`output built from input ETag ${verdict.sourceEtag}, the input is ${input.etag} (stale)`);
      }
      if (main.body.toString('utf8') !== expected.main) violations.push('output rows differ from the input content');
      const counts = readSummary(main.metadata);
      if (counts.rows !== String(expected.rows) || counts.quarantined !== String(expected.quarantined)) {
        violations.push(
          `output counts rows ${counts.rows} quarantined ${counts.quarantined}, the input has ${expected.rows} and ${expected.quarantined}`,
        );
      }
      const listed = publishedSideOutputs(main.metadata);
      if (!listed) violations.push('output does not list its side outputs');
      const listedQuarantine = listed?.get('quarantine');
      if (expected.quarantine !== '') {
        if (listedQuarantine === undefined) violations.push('output does not list its quarantine');
        if (!quarantine) {
          violations.push(`quarantined rows lost: the quarantine is missing (${expected.quarantined} rows)`);
        } else {
          if (listedQuarantine !== undefined && quarantine.etag !== listedQuarantine) {
            violations.push(`quarantine has ETag ${quarantine.etag}, the output lists ${listedQuarantine}`);
          }
          if (quarantine.body.toString('utf8') !== expected.quarantine)
            violations.push('quarantine rows differ from the input');
        }
      } else {
        if (listedQuarantine !== undefined) violations.push('output lists a quarantine its content does not have');
        if (quarantine) violations.push('a quarantine object is left that the output does not list');
      }
    }
  } else {
    // A delivery that read the input before its delete and published after the ObjectRemoved
    // event removed the outputs sees the input gone when it checks it after publishing, and
    // removes what it published: a deleted input leaves nothing.
    if (main)
      violations.push(
        `the input is deleted but its output is left (${namesInput(main, source) ? 'names it' : 'foreign'})`,
      );
    if (quarantine) violations.push('the input is deleted but its quarantine is left');
  }

  const dead = world.sqs.peek(world.dlqUrl);
  if (dead.length > 0) violations.push(`${dead.length} message(s) dead-lettered (no input here is poison)`);
  const left = world.sqs.peek(world.queueUrl);
  if (left.length > 0) violations.push(`${left.length} message(s) left in the work queue`);

  // Upload ids name the actor that created them (the in-memory S3 numbers them per caller).
  const crashed = new Set(
    world.scheduler
      .all()
      .filter((a) => a.status === 'crashed')
      .map((a) => a.id),
  );
  for (const upload of world.s3.openUploads()) {
    const owner = upload.uploadId.replace(/-upload-\d+$/, '');
    if (!crashed.has(owner))
      violations.push(
        `multipart upload ${upload.uploadId} of ${upload.key} left open by ${owner}, which did not crash`,
      );
  }

  const foreign = world.s3
    .keys(OUTPUT_BUCKET)
    .filter(
      (k) =>
        k !== mainKey &&
        k !== quarantineKey &&
        !(options.summaryPrefix !== undefined && k.startsWith(options.summaryPrefix)),
    );
  if (foreign.length > 0) violations.push(`unexpected objects in the output bucket: ${foreign.join(', ')}`);

  if (options.receiver) {
    violations.push(...options.receiver.overlaps.map((o) => `side effect ran twice at once: ${o}`));
    if (options.notify && input && main && options.receiver.applied.size === 0) {
      violations.push('the current output was never notified');
    }
  }
  return violations;
}

/** An object as a HEAD with ChecksumMode ENABLED returns it. */
export function headOf(object: StoredObject) {
  return {
    etag: object.etag,
    contentLength: object.body.byteLength,
    metadata: object.metadata,
    ...(object.checksum ? { checksumSHA256: object.checksum.sha256 } : {}),
  };
}

function namesInput(object: StoredObject, source: { bucket: string; key: string }): boolean {
  return object.metadata[MetadataKey.SOURCE] === `${source.bucket}/${encodeURIComponent(source.key)}`;
}

/** What the summary checks need to know of one configuration. */
export interface SummaryInvariantOptions {
  /** The input whose outputs are the day's lineage (the only input of the configuration). */
  readonly inputKey: string;
  readonly day: Day;
  readonly layout: SummaryLayout;
  readonly codeVersion: string;
  readonly setup: SummarySetup;
  /**
   * The day's lineage does not change while the summary tasks run: then each must end with the
   * summary current, and without a crash at most one of them publishes (the others find it done).
   */
  readonly stableLineage: boolean;
}

/**
 * The summary stage's invariants once every delivery has settled:
 *
 * 1. No task failed for good or was dead-lettered.
 * 2. A published summary is valid by the product's own judges: its HEAD's integrity holds
 *    (judgeSummaryHead against the lineage hash it records), its bytes parse (parseSummary) with
 *    that hash and code version, and that hash is the hash of the lineage its manifest lists.
 * 3. Its lineage is the day's current one, with counts equal to the current outputs' rows; or it is
 *    outdated, and then the planner's list-only check (judgePartition) does not call it current.
 *    summarizePartition's contract is a summary of the lineage it read, published atomically; a
 *    task never learns of an output written after its listing (normalize does not enqueue a
 *    summary task), so a later task (the schedule, a backfill planned from that check) rebuilds it.
 *    With a stable lineage the summary must be current, and (no crash) published once.
 * 4. The planner calls the day current whenever the summary is current and no writer crashed
 *    between its publish and its marker, unless writers of two lineages raced on the markers (then
 *    the planner's verdict names the markers, and the next run repairs them); with a stable
 *    lineage, no crash, its markers are exactly the summary's.
 * 5. No staging copy is left except by a writer that crashed.
 */
export function checkSummary(world: SimWorld, options: SummaryInvariantOptions): string[] {
  const { day, layout, codeVersion, setup } = options;
  const violations = [...setup.failures.map((f) => `summary task ${f}`)];
  const crashed = world.scheduler.all().some((a) => a.status === 'crashed' && a.id.startsWith('summary'));
  const keys = world.s3.keys(OUTPUT_BUCKET);

  const lineage: LineageEntry[] = [];
  for (const kind of [LineageKind.NORMALIZED, LineageKind.QUARANTINE]) {
    const prefix = lineagePrefix(layout, kind, day);
    const root = lineageRoot(layout, kind);
    for (const key of keys.filter((k) => k.startsWith(prefix))) {
      lineage.push({ kind, path: key.slice(root.length), etag: unquote(world.s3.peek(OUTPUT_BUCKET, key)?.etag) });
    }
  }
  const currentHash = lineageHash({ day, codeVersion, entries: lineage });
  const listing: PartitionListing = { day, lineage, markers: [] };
  const summaryObject = world.s3.peek(OUTPUT_BUCKET, summaryKey(layout, day));
  const markers: MarkerInfo[] = [];
  for (const key of keys) {
    const found = classifySummaryKey(layout, key);
    if (found.kind === 'marker' && found.day === day) markers.push(found.marker);
  }
  const planned = judgePartition(
    { ...listing, markers, ...(summaryObject ? { summary: { etag: unquote(summaryObject.etag) } } : {}) },
    codeVersion,
  );

  let current = false;
  if (!summaryObject) {
    if (options.stableLineage) violations.push('no summary is published for a day whose lineage never changed');
  } else {
    const recordedHash = summaryObject.metadata[SummaryMetadataKey.LINEAGE_HASH] ?? '';
    const verdict = judgeSummaryHead(headOf(summaryObject), { day, lineageHash: recordedHash, codeVersion });
    const parsed = parseSummary(summaryObject.body, { day, lineageHash: recordedHash, codeVersion });
    if (verdict.state !== SummaryState.CURRENT) {
      violations.push(`published summary is ${verdict.state}: ${'reason' in verdict ? verdict.reason : ''}`);
    } else if (!parsed.ok) {
      violations.push(`published summary does not parse: ${parsed.reason}`);
    } else {
      const manifest = parsed.summary.manifest;
      if (lineageHash({ day, codeVersion, entries: manifest.lineage }) !== recordedHash)
        violations.push("published summary's lineage hash is not the hash of the lineage it lists");
      current = recordedHash === currentHash;
      if (current) {
        const input = world.s3.peek(INPUT_BUCKET, options.inputKey);
        const expected = input ? expectedOutputs(input.body.toString('utf8')) : { rows: 0, quarantined: 0 };
        const files = lineage.filter((e) => e.kind === LineageKind.NORMALIZED).length;
        const s = parsed.summary;
        if (
          s.records !== (files > 0 ? expected.rows : 0) ||
          s.quarantined !== expected.quarantined ||
          s.files !== files
        )
          violations.push(
            `summary counts ${s.files} files, ${s.records} records, ${s.quarantined} quarantined; the outputs have ` +
              `${files}, ${expected.rows} and ${expected.quarantined}`,
          );
      } else if (options.stableLineage) {
        violations.push("published summary is outdated though the day's lineage never changed");
      }
    }
  }
  if (!current && planned.status === PartitionStatus.PUBLISHED)
    violations.push(`the planner calls the day current, the summary is not: ${planned.reason}`);
  // Two writers that both published (an older lineage's, then the current one's) race on the
  // markers: the superseded writer may leave its marker beside the winner's (the planner: stale,
  // "raced"; the next run's done-check finds the summary current and removes it). It never deletes
  // the winner's: a marker goes only when a HEAD made after the marker listing shows that another
  // output is published (src/window/publishWindowOutput.ts, ensureWindowMarker). So with no crash, a
  // current summary always keeps its own marker. Any verdict on a current summary other than
  // published that its markers do not explain is wrong.
  const summaryEtag = summaryObject ? unquote(summaryObject.etag) : '';
  const markersWrong = markers.length !== 1 || markers[0]?.summaryEtag !== summaryEtag;
  if (current && !crashed && planned.status !== PartitionStatus.PUBLISHED && !markersWrong)
    violations.push(`the summary is current but the planner says ${planned.status}: ${planned.reason}`);
  if (current && !crashed && markersWrong && options.stableLineage)
    violations.push(`the summary of a lineage that never changed has wrong markers: ${planned.reason}`);
  if (current && !crashed && !markers.some((m) => m.summaryEtag === summaryEtag && m.lineageHash === currentHash))
    violations.push(`the published summary's own marker is gone (a writer deleted it): ${planned.reason}`);

  const staging = keys.filter((k) => k.startsWith(stagingRoot(layout)));
  if (staging.length > 0 && !crashed)
    violations.push(`staging copies left though no summary writer crashed: ${staging.join(', ')}`);

  if (options.stableLineage && !crashed) {
    const published = setup.outcomes.filter((o) => o.status === 'processed');
    if (published.length > 1)
      violations.push(
        `${published.length} deliveries published the summary of one lineage: ${published.map((o) => `${o.actor}: ${o.reason}`).join('; ')}`,
      );
  }
  return violations;
}

function unquote(etag: string | undefined): string {
  return (etag ?? '').replace(/^"|"$/g, '');
}

/** What the checks of a user's window task need to know of one configuration. */
export interface WindowTaskInvariantOptions {
  readonly setup: WindowTaskSetup;
  /**
   * The events of every version of every input the configuration ever wrote, by `path|etag`: what a
   * read of the version an output names must have counted.
   */
  readonly versions: ReadonlyMap<string, number>;
  /** Keys under the window's listing that are no input (reported skipped by every delivery). */
  readonly notInputs: readonly string[];
  /**
   * The window's inputs do not change while the deliveries run: then the output must end current,
   * and without a crash at most one delivery publishes (the others find it done).
   */
  readonly stableLineage: boolean;
}

/**
 * The summary stage's invariants, generalised to any window task (here the user's task of
 * windowTaskActor.ts), once every delivery has settled:
 *
 * 1. No delivery failed for good or was dead-lettered; every delivery reported the keys under the
 *    window that are no input as skipped (never silently left out).
 * 2. An output is published, and it is valid by the library's own judge (judgeWindowHead against the
 *    lineage hash it records: its integrity holds), its bytes are the task's format, and that hash is
 *    the hash of the lineage its own lines name: the lineage names exactly the inputs it was built from.
 * 3. Nothing is published from a partial or stale read: each input the output names is counted as
 *    the version with the ETag it names holds (a read not pinned to the listed ETag counts another).
 * 4. Its lineage is the window's current one; or it is outdated (a late input), and then neither the
 *    planner's list-only check (judgeWindow) nor the next delivery's done-check (judgeWindowHead with
 *    the current lineage) calls it current: the window is stale, to be rebuilt, not silently missed.
 *    With a stable lineage it must be current, and (no crash) published once.
 * 5. Markers: as the summary's (checkSummary 4): the planner calls the window published whenever the
 *    output is current and its markers are exactly its own, and a current output's own marker is
 *    never deleted by a writer that did not crash.
 * 6. No staging copy is left except by a writer that crashed, and nothing else is under the task's
 *    output prefix but, for a task with parts, its parts.
 * 7. Parts (a day built from its hours): each is valid by the library's judge for its own label
 *    (`{window}/{hour}`) and the lineage hash it records, that hash is the hash of the inputs its own
 *    lines name, and each is counted from the version it names (3); a task without parts has none.
 */
export function checkWindowTask(world: SimWorld, options: WindowTaskInvariantOptions): string[] {
  const { setup, versions } = options;
  const { task } = setup;
  const violations = [...setup.failures.map((f) => `window task ${f}`)];
  const crashed = world.scheduler.all().some((a) => a.status === 'crashed' && a.id.startsWith('window-'));
  const window = task.scheme.parseWindow(SIM_WINDOW);
  const keys = windowOutputKeys(task.scheme, window, task.definition.output);
  const codeVersion = task.definition.codeVersion;

  for (const outcome of setup.outcomes) {
    const reported = outcome.skipped.map((s) => s.key).sort();
    if (reported.join(',') !== [...options.notInputs].sort().join(','))
      violations.push(
        `${outcome.actor} reported skipped [${reported.join(', ')}], the window holds [${options.notInputs.join(', ')}]`,
      );
  }

  // The window's inputs now, read straight from the bucket (not through the library's listing).
  const windowPrefix = `${HOURLY_PREFIX}year=2026/month=01/day=05/`;
  const lineage: WindowLineageEntry[] = world.s3
    .keys(LAKE_BUCKET)
    .filter((k) => k.startsWith(windowPrefix) && /\/hour=\d\d\/[^/]+$/.test(k))
    .map((k) => ({
      source: 'hourly',
      path: k.slice(HOURLY_PREFIX.length),
      etag: unquote(world.s3.peek(LAKE_BUCKET, k)?.etag),
    }));
  const currentHash = windowLineageHash({ partition: SIM_WINDOW, codeVersion, entries: lineage });

  const output = world.s3.peek(LAKE_BUCKET, keys.outputKey);
  const markers: WindowMarker[] = [];
  const unexpected: string[] = [];
  const staging: string[] = [];
  const stagingRootKey = task.definition.output.stagingPrefix ?? `${task.definition.output.prefix}_staging/`;
  const partsRoot = task.definition.parts ? `${task.definition.output.prefix}_parts/` : undefined;
  for (const key of world.s3.keys(LAKE_BUCKET)) {
    if (!key.startsWith(task.definition.output.prefix) || key === keys.outputKey) continue;
    const marker = key.startsWith(keys.markerPrefix)
      ? parseWindowMarker(key.slice(keys.markerPrefix.length))
      : undefined;
    if (marker) markers.push(marker);
    else if (key.startsWith(stagingRootKey)) staging.push(key);
    else if (partsRoot !== undefined && key.startsWith(partsRoot)) violations.push(...checkPart(world, key, versions));
    else unexpected.push(key);
  }
  if (unexpected.length > 0)
    violations.push(`unexpected objects under the task's output prefix: ${unexpected.join(', ')}`);
  if (staging.length > 0 && !crashed)
    violations.push(`staging copies left though no writer crashed: ${staging.join(', ')}`);

  const outputEtag = output ? unquote(output.etag) : '';
  const planned = judgeWindow(
    { partition: SIM_WINDOW, lineage, markers, ...(output ? { output: { etag: outputEtag } } : {}) },
    codeVersion,
  );
  let current = false;
  if (!output) {
    if (setup.failures.length === 0) violations.push('no output is published, though every delivery ended');
  } else {
    const recordedHash = output.metadata[WindowMetadataKey.LINEAGE_HASH] ?? '';
    const verdict = judgeWindowHead(headOf(output), { partition: SIM_WINDOW, lineageHash: recordedHash, codeVersion });
    const lines = parseCounts(output.body);
    if (verdict.state !== WindowOutputState.CURRENT) {
      violations.push(`published output is ${verdict.state}: ${'reason' in verdict ? verdict.reason : ''}`);
    } else if (typeof lines === 'string') {
      violations.push(`published output is not the task's format: ${lines}`);
    } else {
      const named = lines.map((l) => ({ source: 'hourly', path: l.path, etag: l.etag }));
      if (windowLineageHash({ partition: SIM_WINDOW, codeVersion, entries: named }) !== recordedHash)
        violations.push("published output's lineage hash is not the hash of the inputs it names");
      violations.push(...countsProblems('published output', lines, versions));
      current = recordedHash === currentHash;
      if (!current) {
        if (options.stableLineage)
          violations.push("published output is outdated though the window's inputs never changed");
        const next = judgeWindowHead(headOf(output), { partition: SIM_WINDOW, lineageHash: currentHash, codeVersion });
        if (next.state === WindowOutputState.CURRENT)
          violations.push("the next delivery's done-check calls an outdated output current (a late input missed)");
      }
    }
  }
  if (!current && planned.status === WindowStatus.PUBLISHED)
    violations.push(`the planner calls the window published, the output is not current: ${planned.reason}`);
  const markersWrong = markers.length !== 1 || markers[0]?.outputEtag !== outputEtag;
  if (current && !crashed && planned.status !== WindowStatus.PUBLISHED && !markersWrong)
    violations.push(`the output is current but the planner says ${planned.status}: ${planned.reason}`);
  if (current && !crashed && markersWrong && options.stableLineage)
    violations.push(`the output of inputs that never changed has wrong markers: ${planned.reason}`);
  if (current && !crashed && !markers.some((m) => m.outputEtag === outputEtag && m.lineageHash === currentHash))
    violations.push(`the published output's own marker is gone (a writer deleted it): ${planned.reason}`);

  if (options.stableLineage && !crashed) {
    const published = setup.outcomes.filter((o) => o.status === 'processed');
    if (published.length > 1)
      violations.push(
        `${published.length} deliveries published the output of one lineage: ${published.map((o) => `${o.actor}: ${o.reason}`).join('; ')}`,
      );
  }
  return violations;
}

/** Lines of an output or a part that name a version never written, or miscount one (a partial or stale read). */
function countsProblems(what: string, lines: readonly CountLine[], versions: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  for (const line of lines) {
    const events = versions.get(`${line.path}|${line.etag}`);
    if (events === undefined) problems.push(`${what} names ${line.path} at ETag ${line.etag}, never written`);
    else if (events !== line.events)
      problems.push(
        `${what} counts ${line.events} events in ${line.path} at ETag ${line.etag}, which holds ${events} (a partial or stale read)`,
      );
  }
  return problems;
}

/** Invariant 7 for one part at `key` (`daily/_parts/{window path}{hour}/counts.tsv`). */
function checkPart(world: SimWorld, key: string, versions: ReadonlyMap<string, number>): string[] {
  const part = world.s3.peek(LAKE_BUCKET, key);
  const hour = /\/([^/]+)\/[^/]+$/.exec(key)?.[1];
  if (!part || hour === undefined) return [`a part at ${key} cannot be read`];
  const label = `${SIM_WINDOW}/${hour}`;
  const recordedHash = part.metadata[WindowMetadataKey.LINEAGE_HASH] ?? '';
  const verdict = judgeWindowHead(headOf(part), {
    partition: label,
    lineageHash: recordedHash,
    codeVersion: SIM_WINDOW_CODE_VERSION,
  });
  if (verdict.state !== WindowOutputState.CURRENT)
    return [`part ${key} is ${verdict.state}: ${'reason' in verdict ? verdict.reason : ''}`];
  const lines = parseCounts(part.body);
  if (typeof lines === 'string') return [`part ${key} is not the task's format: ${lines}`];
  const named = lines.map((l) => ({ source: 'hourly', path: l.path, etag: l.etag }));
  const problems = countsProblems(`part ${key}`, lines, versions);
  if (windowLineageHash({ partition: label, codeVersion: SIM_WINDOW_CODE_VERSION, entries: named }) !== recordedHash)
    problems.push(`part ${key}'s lineage hash is not the hash of the inputs it names`);
  return problems;
}
