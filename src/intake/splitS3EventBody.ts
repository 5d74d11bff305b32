/**
 * The body of an S3 event message with only its records from `from` on: what the batch handler
 * sends back to the queue when the deadline comes near between the records of one message. Every
 * other field is kept as it was, and each record is the original one, so its `eventTime`,
 * `sequencer` and `eTag` still describe the write that caused it. An SNS envelope (S3 -> SNS -> SQS
 * without raw delivery) is kept around the shortened event (its signature then no longer matches;
 * rerun never checks it). Returns undefined for a body it cannot split (not JSON, no Records).
 *
 * @example
 * s3EventBodyFrom('{"Records":[{"n":1},{"n":2},{"n":3}]}', 1); // '{"Records":[{"n":2},{"n":3}]}'
 */
export function s3EventBodyFrom(body: string, from: number): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const event = parsed as Record<string, unknown>;
  if (event.Type === 'Notification' && typeof event.Message === 'string') {
    const inner = s3EventBodyFrom(event.Message, from);
    return inner === undefined ? undefined : JSON.stringify({ ...event, Message: inner });
  }
  // An EventBridge event names one object: only all of it can be sent again.
  if (event.source === 'aws.s3' && typeof event['detail-type'] === 'string') return from === 0 ? body : undefined;
  if (!Array.isArray(event.Records) || from >= event.Records.length) return undefined;
  return JSON.stringify({ ...event, Records: event.Records.slice(from) });
}
