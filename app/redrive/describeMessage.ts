/**
 * A short description of what a dead-lettered message was about, from its body alone: the object of
 * an S3 event (`s3://bucket/key`), the partition of a summary task, or an excerpt. Pure.
 *
 * @example
 * describeMessage('{"Records":[{"s3":{"bucket":{"name":"in"},"object":{"key":"incoming/a+b.csv"}}}]}'); // 's3://in/incoming/a b.csv'
 * describeMessage('{"type":"summarize","partition":"dt=2026-01-05"}'); // 'summarize dt=2026-01-05'
 */
export function describeMessage(body: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return excerpt(body);
  }
  if (doc === null || typeof doc !== 'object') return excerpt(body);
  const d = doc as Record<string, unknown>;
  if (d.Event === 's3:TestEvent') return 's3:TestEvent';
  if (Array.isArray(d.Records)) {
    const objects = d.Records.flatMap((r: unknown) => {
      const s3 = (r as { s3?: { bucket?: { name?: unknown }; object?: { key?: unknown } } })?.s3;
      if (typeof s3?.bucket?.name !== 'string' || typeof s3.object?.key !== 'string') return [];
      return [`s3://${s3.bucket.name}/${decodeKey(s3.object.key)}`];
    });
    if (objects.length > 0)
      return objects.length === 1 ? (objects[0] as string) : `${objects[0]} (+${objects.length - 1})`;
  }
  if (d.type === 'summarize') {
    if (typeof d.partition === 'string') return `summarize ${d.partition}`;
    if (d.window === 'yesterday') return `summarize yesterday of ${typeof d.at === 'string' ? d.at : 'its send time'}`;
  }
  return excerpt(body);
}

/** S3 event keys are form-encoded (space as `+`). */
function decodeKey(key: string): string {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return key;
  }
}

function excerpt(body: string): string {
  const oneLine = body.replace(/\s+/g, ' ').trim();
  return oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine || '(empty body)';
}
