import { createHash } from 'node:crypto';
import { judgeOutput, OutputState } from '../../../src/done/judgeOutput.js';
import { FAILURE_INDEX_FOLDER, parseFailureIndexKey } from '../../../src/failures/failureIndex.js';
import { parseFailureRecord } from '../../../src/failures/failureRecord.js';
import type { Day } from '../../../src/keys/partition.js';
import { formatOfKey } from '../../../src/normalize/inputFormat.js';
import { outputNotificationKey } from '../../../src/notify/outputNotification.js';
import type { WorkerDefinition } from '../../../src/worker/defineWorker.js';
import type { PipelineSnapshot, SnapshotObject } from './ChaosPipeline.js';
import type { CleanSummary } from './verifySummaries.js';

/** What happened to one input key during a scenario. */
export interface InputHistory {
  readonly key: string;
  /** ETags of every content the key had, oldest first. */
  readonly etags: readonly string[];
  /** The ETag at the end, or undefined when the input was deleted. */
  readonly finalEtag: string | undefined;
}

/** What a clean run (no faults, no kills, one runner) produced, per input content. */
export interface CleanReference {
  /**
   * By input content ETag: the normalized output, the SHA-256 of its bytes (base64, what the worker's
   * notification names: {@link contentSha256}) and, when the content has bad rows, the quarantine.
   */
  readonly byEtag: ReadonlyMap<string, CleanOutput>;
  /** DLQ bodies of the clean run (the true poison). */
  readonly dlqBodies: readonly string[];
  /** The clean run's daily summaries, when it ran the summary stage. */
  readonly summaries?: ReadonlyMap<Day, CleanSummary>;
}

/** What the clean run wrote for one input content. */
export interface CleanOutput {
  readonly output: Buffer;
  /** {@link contentSha256} of `output`. */
  readonly checksum: string;
  readonly quarantine?: Buffer;
}

/** The comparison of a chaos run's final state with the clean run's. */
export interface ChaosVerdict {
  /** Input keys whose final state was checked. */
  itemsVerified: number;
  /** Expected outputs, quarantine files or notifications missing, invalid, stale or with other bytes. */
  lost: number;
  /** Objects that should not exist, or a side effect applied more than once for one output content. */
  duplicated: number;
  /** Outputs of inputs deleted during the run that were written before the delete (valid, allowed). */
  keptForDeleted: number;
  /** Notifications the sink applied. */
  notificationsApplied: number;
  /** Repeated POSTs the sink answered from its record (same Idempotency-Key): absorbed, not applied twice. */
  sinkRepeats: number;
  /** DLQ messages that are not poison (a real item dead-lettered). */
  dlqNonPoison: number;
  /** Poison messages missing from the DLQ. */
  dlqMissingPoison: number;
  /** Failure records (`failures/{queue}/{messageId}.json`) written when the worker gave up on a message. */
  failureRecords: number;
  /** DLQ messages without a failure record (the record is best effort: its write can fail too). */
  dlqWithoutFailureRecord: number;
  /** Healthy dead letters proven a crash storm, with the proof. */
  crashStorm?: string[];
  /** One line per problem found. */
  problems: string[];
}

/**
 * Compares the final state of a chaos run with a clean run of the same inputs: every expected output
 * present, valid (done-check), built from the input's final content and byte-for-byte equal to the
 * clean output of that content; quarantine files likewise; nothing else in the output bucket; every
 * final output notified and applied once at the sink, no output content notified twice; the DLQ
 * holding exactly the poison messages, and a failure record only for messages in the DLQ.
 *
 * Inputs deleted during the run may keep an output written before the delete (the pipeline reacts
 * to ObjectCreated only); such an output must still be valid and equal to the clean output of one of
 * the contents that key had.
 *
 * @example
 * const verdict = verifyAgainstClean({ snapshot, history, clean, worker, codeVersion: 'normalize@1', poison });
 * verdict.lost; // 0
 */
export function verifyAgainstClean(input: {
  readonly snapshot: PipelineSnapshot;
  readonly history: readonly InputHistory[];
  readonly clean: CleanReference;
  readonly worker: WorkerDefinition;
  readonly codeVersion: string;
  readonly poison: readonly string[];
  /** Where the workers record given-up messages (topology.failurePrefix). */
  readonly failurePrefix: string;
  /**
   * Objects under this prefix belong to the summary stage and are checked by verifySummaries.
   * @default none: every object must be the normalize stage's
   */
  readonly summaryPrefix?: string;
  /** Per-message evidence that lets a healthy dead letter count as a proven crash storm. @default none */
  readonly crashStorm?: CrashStormEvidence;
  /**
   * Dead letters the harness redrove as an operator would (proven crash storms): their failure
   * records stay behind, naming a message that left the DLQ on purpose.
   * @default none
   */
  readonly redriven?: readonly string[];
}): ChaosVerdict {
  const { snapshot, history, clean, worker, codeVersion } = input;
  const verdict: ChaosVerdict = {
    itemsVerified: 0,
    lost: 0,
    duplicated: 0,
    keptForDeleted: 0,
    notificationsApplied: 0,
    sinkRepeats: 0,
    dlqNonPoison: 0,
    dlqMissingPoison: 0,
    failureRecords: 0,
    dlqWithoutFailureRecord: 0,
    problems: [],
  };
  const { lost, duplicated } = recorders(verdict);
  const objects = new Map(snapshot.objects.map((o) => [o.key, o]));
  const accounted = new Set<string>();
  const applied = snapshot.deliveries.filter((d) => d.applied);
  const appliedKeys = new Set(applied.map((d) => d.key));
  /** sha256 (base64) of every output content each output key may legitimately have been notified with. */
  const legitimate = new Map<string, Set<string>>();

  for (const item of history) {
    const source = { bucket: snapshot.inputBucket, key: item.key };
    const outKey = worker.outputKey(source);
    const sideKey = worker.sideOutputs?.quarantine?.(source);
    accounted.add(outKey);
    if (sideKey) accounted.add(sideKey);
    const producesOutput = item.key.startsWith('incoming/') && formatOfKey(item.key) !== undefined;
    verdict.itemsVerified++;
    if (!producesOutput) {
      if (objects.has(outKey)) duplicated(`${outKey}: output for an input the worker must skip`);
      continue;
    }
    const shas = new Set<string>();
    for (const etag of item.etags) {
      const ref = clean.byEtag.get(etag);
      if (ref) shas.add(ref.checksum);
    }
    legitimate.set(outKey, shas);
    const main = objects.get(outKey);
    const side = sideKey ? objects.get(sideKey) : undefined;

    if (item.finalEtag === undefined) {
      if (!main) {
        if (side) duplicated(`${sideKey}: quarantine of a deleted input without its output`);
        continue;
      }
      const builtFrom = checkBuilt(main, source, codeVersion);
      const ref = builtFrom ? clean.byEtag.get(builtFrom) : undefined;
      if (!builtFrom || !item.etags.includes(builtFrom) || !ref?.output.equals(main.bytes)) {
        duplicated(`${outKey}: output of a deleted input that matches none of its contents`);
        continue;
      }
      verdict.keptForDeleted++;
      checkSide(ref.quarantine, side, sideKey, lost, duplicated);
      continue;
    }

    const ref = clean.byEtag.get(item.finalEtag);
    if (!ref) {
      lost(`${item.key}: the clean run has no output for ETag ${item.finalEtag} (harness problem)`);
      continue;
    }
    if (!main) {
      lost(`${outKey}: missing`);
      continue;
    }
    const builtFrom = checkBuilt(main, source, codeVersion);
    if (builtFrom === undefined) {
      lost(`${outKey}: fails the done-check (${describeJudgement(main, source, codeVersion)})`);
      continue;
    }
    if (builtFrom !== item.finalEtag) {
      lost(`${outKey}: built from ETag ${builtFrom}, the input is now ${item.finalEtag} (stale)`);
      continue;
    }
    if (!ref.output.equals(main.bytes)) {
      lost(`${outKey}: bytes differ from the clean run (${main.bytes.length} vs ${ref.output.length})`);
      continue;
    }
    checkSide(ref.quarantine, side, sideKey, lost, duplicated);
    const notification = outputNotificationKey({
      bucket: snapshot.outputBucket,
      key: outKey,
      // The bytes equal the clean output's (checked above), so this is the digest a correct worker
      // computed of what it wrote, whichever checksum S3 stored for it.
      sha256: contentSha256(main.bytes),
      codeVersion,
      source: { bucket: source.bucket, key: source.key },
    });
    if (!appliedKeys.has(notification)) lost(`${outKey}: notification ${notification} never applied at the sink`);
  }

  // Failure records: a worker writes one when it gives up on a message (a non-retryable failure,
  // or the last receive before the DLQ), so each must name a message that is in a DLQ.
  const dlqIds = new Set([...snapshot.dlq, ...snapshot.summaryDlq].map((m) => m.messageId));
  const redriven = new Set(input.redriven ?? []);
  const recorded = new Set<string>();
  for (const object of snapshot.objects) {
    if (!object.key.startsWith(input.failurePrefix)) continue;
    accounted.add(object.key);
    if (object.key.startsWith(`${input.failurePrefix}${FAILURE_INDEX_FOLDER}`)) {
      // The index by input (failureIndex.ts): each entry must name a dead-lettered message too.
      const entry = parseFailureIndexKey(object.key);
      if (!entry || !(dlqIds.has(entry.messageId) || redriven.has(entry.messageId))) {
        duplicated(`${object.key}: failure index entry of a message that is not in the DLQ`);
      }
      continue;
    }
    verdict.failureRecords++;
    const messageId = /([^/]+)\.json$/.exec(object.key)?.[1] ?? '';
    recorded.add(messageId);
    if (redriven.has(messageId)) continue; // the record of a proven crash storm the harness redrove
    if (!dlqIds.has(messageId)) {
      const record = parseFailureRecord(object.bytes);
      const says = record
        ? ` (receive ${record.receiveCount}/${record.maxReceiveCount}: ${record.reason}, at ${record.failedAt})`
        : '';
      duplicated(`${object.key}: failure record of a message that is not in the DLQ${says}`);
    }
  }
  // A message whose every receive died with it (a proven crash storm) may have died before its
  // last attempt could write the provisional record (between ReceiveMessage and that PUT): the
  // proof is its reason. Every other dead letter must have a record.
  const storm = input.crashStorm;
  const proven = (id: string) =>
    (storm?.diedWhileHeld[id] ?? 0) >= (storm?.maxReceiveCount ?? Number.POSITIVE_INFINITY);
  const unrecorded = [...dlqIds].filter((id) => !recorded.has(id));
  verdict.dlqWithoutFailureRecord = unrecorded.filter((id) => !proven(id)).length;
  for (const id of unrecorded.filter((id) => !proven(id)))
    verdict.problems.push(`DLQ message ${id} has no failure record`);

  const summaryPrefix = input.summaryPrefix;
  for (const object of snapshot.objects) {
    if (accounted.has(object.key) || (summaryPrefix && object.key.startsWith(summaryPrefix))) continue;
    duplicated(`${object.key}: extra object in the output bucket`);
  }

  // Side effects: one applied delivery per output content, and only for contents that existed.
  const perContent = new Map<string, number>();
  for (const delivery of applied) {
    verdict.notificationsApplied++;
    const body = delivery.body as { output?: { key?: string; sha256?: string } } | undefined;
    const id = `${body?.output?.key}#${body?.output?.sha256}`;
    perContent.set(id, (perContent.get(id) ?? 0) + 1);
    const allowed = body?.output?.key ? legitimate.get(body.output.key) : undefined;
    if (!allowed?.has(body?.output?.sha256 ?? '')) {
      duplicated(`notification ${delivery.key} for output content no input ever had (${id})`);
    }
  }
  for (const [id, count] of perContent) if (count > 1) duplicated(`output content ${id} notified ${count} times`);
  for (const delivery of snapshot.deliveries) {
    verdict.sinkRepeats += delivery.repeats;
    if (delivery.conflicts > 0) duplicated(`Idempotency-Key ${delivery.key} reused with another body`);
    if (delivery.missingKey) duplicated('a notification without Idempotency-Key');
  }

  const recordReasons = failureRecordReasons(snapshot.objects, input.failurePrefix);
  checkDlqHoldsPoison(
    verdict,
    'DLQ',
    snapshot.dlq,
    input.poison,
    input.crashStorm ? { ...input.crashStorm, recordReasons } : undefined,
  );
  return verdict;
}

/** What every verdict counts. */
export interface Tally {
  lost: number;
  duplicated: number;
  dlqNonPoison: number;
  dlqMissingPoison: number;
  problems: string[];
  /** Healthy messages in a DLQ proven to be a crash storm (every receive died with it), with the proof. */
  crashStorm?: string[];
}

/**
 * The evidence that a healthy message's receives were all used up by attempts that died with it
 * (SIGKILLs of the process holding it, invocation timeouts), counted per message by the runner
 * supervisors.
 */
export interface CrashStormEvidence {
  /** The queue's maxReceiveCount. */
  readonly maxReceiveCount: number;
  /** Per message id: attempts that died with it in hand. */
  readonly diedWhileHeld: Readonly<Record<string, number>>;
  /** Per message id: the reason its failure record gives (for the report). @default none */
  readonly recordReasons?: ReadonlyMap<string, string>;
}

/** `lost(why)` and `duplicated(why)`: count into the verdict and say why in its problems. */
export function recorders(verdict: Tally): { lost: (why: string) => void; duplicated: (why: string) => void } {
  return {
    lost: (why) => {
      verdict.lost++;
      verdict.problems.push(`LOST ${why}`);
    },
    duplicated: (why) => {
      verdict.duplicated++;
      verdict.problems.push(`DUPLICATED ${why}`);
    },
  };
}

/**
 * Per message id, what its failure record says (`receive/maxReceiveCount: reason`), for every record
 * under `failurePrefix` (both stages' queues): what `rerun redrive` would show for a dead letter.
 */
export function failureRecordReasons(
  objects: readonly { readonly key: string; readonly bytes: Uint8Array }[],
  failurePrefix: string,
): Map<string, string> {
  const reasons = new Map<string, string>();
  for (const object of objects) {
    if (!object.key.startsWith(failurePrefix)) continue;
    const record = parseFailureRecord(object.bytes);
    if (record) reasons.set(record.messageId, `${record.receiveCount}/${record.maxReceiveCount}: ${record.reason}`);
  }
  return reasons;
}

/** Counts into the verdict the DLQ messages that are not poison and the poison missing from it. */
export function checkDlqHoldsPoison(
  verdict: Tally,
  dlqName: string,
  messages: readonly { readonly body: string; readonly messageId?: string }[],
  expected: readonly string[],
  evidence?: CrashStormEvidence,
): void {
  const poison = [...expected];
  for (const { body, messageId } of messages) {
    const at = poison.indexOf(body);
    const died = messageId ? (evidence?.diedWhileHeld[messageId] ?? 0) : 0;
    if (at >= 0) poison.splice(at, 1);
    else if (evidence && died >= evidence.maxReceiveCount) {
      // Not tolerated, proven: each of its receives ended with the process (or invocation) dying
      // while it held the message, so SQS's redrive policy had to move it. Anything less fails.
      verdict.crashStorm = verdict.crashStorm ?? [];
      verdict.crashStorm.push(
        `${dlqName} ${messageId}: ${died} of its ${evidence.maxReceiveCount} receives died with it (kills/timeouts)`,
      );
    } else {
      verdict.dlqNonPoison++;
      const reason = messageId ? evidence?.recordReasons?.get(messageId) : undefined;
      verdict.problems.push(
        `${dlqName} holds a message that is not poison (${died} attempt(s) died with it; failure record: ${reason ?? 'none'}): ${body.slice(0, 160)}`,
      );
    }
  }
  verdict.dlqMissingPoison = poison.length;
  for (const body of poison) verdict.problems.push(`poison missing from the ${dlqName}: ${body.slice(0, 80)}`);
}

/** The input ETag a valid output was built from, or undefined when it fails the done-check. */
function checkBuilt(object: SnapshotObject, source: { bucket: string; key: string }, codeVersion: string) {
  const judgement = judgeOutput(object.head, { source, codeVersion });
  if (judgement.state !== OutputState.BUILT) return undefined;
  // A done-check trusts the metadata; the bytes are compared too, so a rewrite with the right
  // metadata but other content would still be caught below.
  return judgement.sourceEtag;
}

function describeJudgement(object: SnapshotObject, source: { bucket: string; key: string }, codeVersion: string) {
  const judgement = judgeOutput(object.head, { source, codeVersion });
  return 'reason' in judgement ? `${judgement.state}: ${judgement.reason}` : judgement.state;
}

function checkSide(
  expected: Buffer | undefined,
  actual: SnapshotObject | undefined,
  key: string | undefined,
  lost: (why: string) => void,
  duplicated: (why: string) => void,
): void {
  if (expected && !actual) lost(`${key}: quarantine missing`);
  else if (expected && actual && !expected.equals(actual.bytes)) lost(`${key}: quarantine bytes differ`);
  else if (!expected && actual) duplicated(`${key}: quarantine of another content left behind`);
}

/**
 * The checksum an output's notification carries: the SHA-256 of the whole content (base64), for a
 * single-part and a multipart output alike (src/notify/outputNotification.ts: "SHA-256 of the
 * output's bytes"; src/publish/OutputWriter.ts's contentChecksum). Computed here from the bytes read
 * back, not from S3's stored checksum: for a multipart output that one is a composite (the digest
 * of the parts' digests) and names no notification.
 *
 * @example
 * contentSha256(Buffer.from('{"id":"1"}\n')); // '6B4KpXvh8K2LIQs+Y0h0DjijgDZWkrbWEpxTqEJkrB0='
 */
export function contentSha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64');
}
