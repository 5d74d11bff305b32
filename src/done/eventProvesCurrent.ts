import { type Judgement, OutputState } from './judgeOutput.js';

/**
 * Whether the event alone proves that a built output leaves nothing to do for that event, so the
 * done-check needs no conditional GET of the input: the output is valid, of the current code
 * (`judgeOutput` answered BUILT) and was built from exactly the content version the event names.
 *
 * Why this is safe (docs/AWS-BEHAVIOUR.md, "The event's eTag"; S3 User Guide, "Amazon S3 event
 * notifications": an event's `eTag` and `size` describe the version that caused it): every later
 * write of the key causes its own event. If the input was overwritten after this event (before or
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
 * died before repairing it); the caller still HEADs them. An event without an eTag, or with another
 * one (an older event after newer content, or the output is older than the event), takes the
 * conditional GET path.
 *
 * @example
 * const verdict = judgeOutput(head, { source: object, codeVersion: worker.codeVersion });
 * if (eventProvesCurrent(verdict, object)) console.log('done from the HEAD alone');
 */
export function eventProvesCurrent(verdict: Judgement, event: { readonly eTag?: string | undefined }): boolean {
  return (
    verdict.state === OutputState.BUILT &&
    event.eTag !== undefined &&
    event.eTag !== '' &&
    stripQuotes(event.eTag) === verdict.sourceEtag
  );
}

function stripQuotes(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}
