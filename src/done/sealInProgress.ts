import { UNSEALED_INTEGRITY } from './integrity.js';
import type { OutputHead } from './judgeOutput.js';
import { encodeSource, MetadataKey } from './outputMetadata.js';

/** What the delivery that found an unsealed output would build itself. */
export interface SealExpectation {
  readonly source: { readonly bucket: string; readonly key: string };
  readonly codeVersion: string;
  /** The event's eTag, when it names one: the content this delivery would build. */
  readonly eventEtag?: string | undefined;
  /** The SQS message id of this delivery, when it has one (the batch handler's). */
  readonly messageId?: string | undefined;
}

/** An unsealed output that a live writer may still be sealing, or whose writer must be dead. */
export interface UnsealedWriter {
  /**
   * Its writer may still be between CompleteMultipartUpload and the seal: `now` < `writerDeadAt`, and
   * it was not an earlier receive of this delivery's own message.
   */
  readonly mayBeSealing: boolean;
  /** When its writer must be dead (epoch ms): LastModified plus one function timeout. */
  readonly writerDeadAt: number;
  /**
   * The output names this delivery's SQS message as its writer ({@link MetadataKey.WRITER}): it was
   * written by an earlier receive of this same message (or an earlier round of this one), which is
   * over, since SQS hands a message out again only once its previous receive has ended.
   */
  readonly sameMessage: boolean;
}

/**
 * Whether a live writer may still be sealing an unsealed multipart output (src/done/integrity.ts):
 * undefined when `head` is not an unsealed output this delivery would otherwise rebuild the same
 * way (another input, another code version, a completed upload of other content than the event's,
 * or no LastModified), else when its writer must be dead.
 *
 * The rule: the writer created the multipart upload, and therefore also its LastModified (S3 gives a
 * completed multipart upload the time it was initiated or completed, both within the writer's
 * invocation), after its invocation started, and no invocation outlives the function's timeout. So
 * `LastModified + writerLifetimeMs` is a time by which the writer is dead, where `writerLifetimeMs`
 * is the function's timeout (the batch handler passes the time left when its invocation started,
 * at most that timeout). The bound only decides whether a delivery waits for the seal or rebuilds:
 * rebuilding while the writer lives is safe (its seal or the rebuild loses a conditional write, as
 * today), so a clock skew between S3 and Lambda, or a bound a little short, costs requests, never
 * correctness.
 *
 * A second rule needs no clock: when the output names this delivery's own SQS message as its writer
 * ({@link MetadataKey.WRITER}, which the batch handler's writers record on the multipart upload), its
 * writer is over, whatever the time. SQS hands a message out again only when its visibility timeout
 * has run out (the queue's is at least the function's timeout, which Lambda checks when it maps the
 * queue, so the earlier invocation is dead) or the earlier receive gave it back (its invocation ended
 * its record: a batch item failure, a deferral). Only another delivery (S3's duplicate event, a
 * message of `rerun reprocess`) may meet a live writer, and waits. Should SQS ever hand out a copy of a
 * message whose receive is still running, the rebuild is safe as above. Pure: no SDK.
 *
 * @example
 * const writer = unsealedWriter(head, { source, codeVersion: '1', eventEtag }, Date.now(), 900_000);
 * if (writer?.mayBeSealing) waitForTheSeal(writer.writerDeadAt);
 */
export function unsealedWriter(
  head: OutputHead | undefined,
  expected: SealExpectation,
  now: number,
  writerLifetimeMs: number,
): UnsealedWriter | undefined {
  if (!head || head.lastModified === undefined) return undefined;
  const m = head.metadata;
  if (m[MetadataKey.INTEGRITY] !== UNSEALED_INTEGRITY) return undefined;
  if (m[MetadataKey.SOURCE] !== encodeSource(expected.source)) return undefined;
  if (m[MetadataKey.CODE_VERSION] !== expected.codeVersion) return undefined;
  const sourceEtag = m[MetadataKey.SOURCE_ETAG];
  if (!sourceEtag || (expected.eventEtag !== undefined && sourceEtag !== expected.eventEtag)) return undefined;
  const writerDeadAt = head.lastModified + writerLifetimeMs;
  const sameMessage = expected.messageId !== undefined && m[MetadataKey.WRITER] === expected.messageId;
  return { mayBeSealing: !sameMessage && now < writerDeadAt, writerDeadAt, sameMessage };
}
