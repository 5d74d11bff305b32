import { judgeOutput, OutputState } from '../../src/done/judgeOutput.js';
import { MetadataKey, publishedSideOutputs, readSummary } from '../../src/done/outputMetadata.js';
import type { Receiver } from './actors.js';
import type { StoredObject } from './model/S3Model.js';
import { INPUT_BUCKET, OUTPUT_BUCKET, type SimWorld } from './SimWorld.js';
import { expectedOutputs, outputKeyOf, quarantineKeyOf } from './simWorker.js';

/** What the checks need to know of one configuration. */
export interface InvariantOptions {
  readonly inputKey: string;
  readonly codeVersion: string;
  readonly receiver?: Receiver;
  /** Whether the side effect ran (then the current output must have been notified). */
  readonly notify: boolean;
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

  const foreign = world.s3.keys(OUTPUT_BUCKET).filter((k) => k !== mainKey && k !== quarantineKey);
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
