import { sentByRerun } from '../intake/parseS3Event.js';
import { type Judgement, OutputState } from './judgeOutput.js';

/**
 * Whether the event alone proves that a built output leaves nothing to do for that event, so the
 * done-check needs no conditional GET of the input: the output is valid, of the current code
 * (`judgeOutput` answered BUILT) and was built from exactly the content version the event names.
 *
 * Why this is safe (docs/AWS-BEHAVIOUR.md, "The event's eTag"; S3 User Guide, "Amazon S3 event
 * notifications": an event's `eTag` and `size` describe the version that caused it): in a versioned
 * bucket every later write of the key causes its own event. Only there: the same guide warns that two
 * writes made to a non-versioned object at the same time may send a single notification, and that
 * notification may name the earlier content. So an event of S3's must carry a `versionId` (S3 puts
 * one in every event of a versioned bucket; `null` means the object was written while versioning
 * was suspended, which does not count). A message rerun's tools sent (`rerun reprocess`: the ETag
 * its listing saw) is no notification S3 could have merged: any write after that listing sends an
 * event of its own, and in a non-versioned bucket that event is never trusted, so it checks the
 * input. If the input was overwritten after this event (before or
 * after the HEAD), the newer content's own event will find an output built from another ETag than
 * its own and take the conditional GET path, which reads and publishes the newer content. So an
 * event whose eTag equals the output's recorded source ETag has nothing left to do, even when the
 * input has moved on since; answering "done" writes nothing and so cannot regress anything.
 *
 * An ETag identifies content, not a write: a copy or re-upload of identical bytes to the same key
 * keeps the ETag (single-part ETags are the MD5 of the bytes), and the output built from those
 * bytes is then the right one. A content change with the same ETag is what the conditional GET
 * (`If-None-Match`) could not see either.
 *
 * What this does not settle: an output that lists side objects is whole only if those still have
 * the ETags it lists (a writer of other content may have replaced one after the commit and then
 * died before repairing it); the caller still HEADs them. An event without an eTag or a versionId (a
 * non-versioned bucket: one more request per duplicate), or with another eTag (an older event after
 * newer content, or the output is older than the event), takes the conditional GET path.
 *
 * @example
 * const verdict = judgeOutput(head, { source: object, codeVersion: worker.codeVersion });
 * if (eventProvesCurrent(verdict, object)) console.log('done from the HEAD alone'); // object: { eTag, versionId, ... }
 */
export function eventProvesCurrent(
  verdict: Judgement,
  event: {
    readonly eTag?: string | undefined;
    readonly versionId?: string | undefined;
    readonly origin?: string | undefined;
  },
): boolean {
  return (
    verdict.state === OutputState.BUILT &&
    (eventOfVersionedWrite(event) || sentByRerun(event)) &&
    event.eTag !== undefined &&
    event.eTag !== '' &&
    stripQuotes(event.eTag) === verdict.sourceEtag
  );
}

/**
 * Whether an event comes from a write to a versioned bucket, where every write sends its own
 * event: it names a version, and not the `null` version of a bucket whose versioning is suspended.
 */
export function eventOfVersionedWrite(event: { readonly versionId?: string | undefined }): boolean {
  return event.versionId !== undefined && event.versionId !== '' && event.versionId !== 'null';
}

function stripQuotes(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}
