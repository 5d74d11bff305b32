/** How an invocation ended, as the local runner reports it. */
export const InvocationOutcome = {
  /** Every record succeeded: all messages are deleted. */
  SUCCESS: 'success',
  /** The function listed some records in `batchItemFailures`: only the others are deleted. */
  PARTIAL: 'partial',
  /** The function threw or its promise rejected: the whole batch fails. */
  ERROR: 'error',
  /** The function returned a response Lambda rejects: the whole batch fails. */
  INVALID_RESPONSE: 'invalid-response',
  /** The function did not settle within its timeout: the whole batch fails. */
  TIMEOUT: 'timeout',
} as const;
export type InvocationOutcome = (typeof InvocationOutcome)[keyof typeof InvocationOutcome];

/** What to do with a batch after the function returned. */
export type BatchVerdict =
  | {
      readonly outcome: typeof InvocationOutcome.SUCCESS | typeof InvocationOutcome.PARTIAL;
      /** Message ids to delete. */
      readonly delete: readonly string[];
      /** Message ids to leave in the queue (they return after the visibility timeout). */
      readonly retain: readonly string[];
    }
  | {
      readonly outcome: typeof InvocationOutcome.INVALID_RESPONSE;
      readonly delete: readonly string[];
      readonly retain: readonly string[];
      /** Why Lambda would reject this response. */
      readonly reason: string;
    };

/**
 * Applies Lambda's `ReportBatchItemFailures` rules to a function's response (already round-tripped
 * through JSON, as Lambda receives it).
 *
 * From https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html:
 * - complete success: a null/absent response, an empty object, a null/absent or empty `batchItemFailures`;
 * - listed `itemIdentifier`s stay in the queue, all other messages are deleted;
 * - complete failure (nothing deleted): an `itemIdentifier` that is empty, null, not a string, or not
 *   the id of a message in the batch, or an entry with a wrong key name.
 *
 * Also treated as a complete failure, conservatively (the documentation only says "an invalid JSON
 * response"): a response that is not an object (a string, a number, an array) and a
 * `batchItemFailures` that is present but not an array. Failing keeps the messages; deleting would
 * lose them.
 *
 * @example
 * interpretBatchResponse({ batchItemFailures: [{ itemIdentifier: 'b' }] }, ['a', 'b']);
 * // { outcome: 'partial', delete: ['a'], retain: ['b'] }
 */
export function interpretBatchResponse(response: unknown, messageIds: readonly string[]): BatchVerdict {
  const invalid = (reason: string): BatchVerdict => ({
    outcome: InvocationOutcome.INVALID_RESPONSE,
    delete: [],
    retain: [...messageIds],
    reason,
  });
  const success: BatchVerdict = { outcome: InvocationOutcome.SUCCESS, delete: [...messageIds], retain: [] };

  if (response === undefined || response === null) return success;
  if (typeof response !== 'object' || Array.isArray(response)) {
    return invalid(`the response is ${describe(response)}, not an object with batchItemFailures`);
  }
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return success;
  if (!Array.isArray(failures)) return invalid(`batchItemFailures is ${describe(failures)}, not an array`);
  if (failures.length === 0) return success;

  const known = new Set(messageIds);
  const failed = new Set<string>();
  for (const [index, entry] of failures.entries()) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      return invalid(`batchItemFailures[${index}] is ${describe(entry)}, not { itemIdentifier }`);
    }
    const id = (entry as { itemIdentifier?: unknown }).itemIdentifier;
    if (typeof id !== 'string') {
      return invalid(`batchItemFailures[${index}].itemIdentifier is ${describe(id)}, not a message id`);
    }
    if (id === '') return invalid(`batchItemFailures[${index}].itemIdentifier is an empty string`);
    if (!known.has(id)) return invalid(`batchItemFailures[${index}].itemIdentifier "${id}" is not in this batch`);
    failed.add(id);
  }
  return {
    outcome: InvocationOutcome.PARTIAL,
    delete: messageIds.filter((id) => !failed.has(id)),
    retain: messageIds.filter((id) => failed.has(id)),
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string (${JSON.stringify(value.slice(0, 40))})`;
  return `a ${typeof value}`;
}
