/**
 * The maxReceiveCount of a queue's RedrivePolicy attribute (a JSON string), or undefined when the
 * queue has no policy or the policy names no count.
 *
 * @example
 * maxReceiveCountOfPolicy('{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:1:dlq","maxReceiveCount":5}'); // 5
 */
export function maxReceiveCountOfPolicy(policy: string | undefined): number | undefined {
  if (!policy) return undefined;
  const count = Number((JSON.parse(policy) as { maxReceiveCount?: unknown }).maxReceiveCount);
  return Number.isFinite(count) ? count : undefined;
}
