import { type RecordOutcome, RecordStatus } from '../worker/outcomes.js';

const STATUSES = new Set<string>(Object.values(RecordStatus));
const PREFIX = 'record ';

/**
 * The message of the log line the batch handler writes for every record outcome (`record processed`,
 * `record skipped`, `record failed`, `record requeued`); the outcome's fields follow in the same JSON line.
 *
 * @example
 * recordOutcomeLogMessage('skipped'); // 'record skipped'
 */
export function recordOutcomeLogMessage(status: RecordStatus): string {
  return `${PREFIX}${status}`;
}

/**
 * Reads a record outcome back from a function's log line (one JSON object, as the project logger
 * writes it), or returns undefined for any other line. This is how a runner that runs the handler
 * in another process (the Lambda runtime mode) observes outcomes, as an operator reads them in
 * CloudWatch Logs.
 *
 * @example
 * parseRecordOutcomeLogLine('{"level":"info","message":"record skipped","messageId":"m1","status":"skipped","reason":"..."}');
 * // { messageId: 'm1', status: 'skipped', reason: '...' }
 */
export function parseRecordOutcomeLogLine(line: string): RecordOutcome | undefined {
  if (!line.startsWith('{') || !line.includes(`"${PREFIX}`)) return undefined;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line);
  } catch {
    return undefined;
  }
  const message = entry.message;
  if (typeof message !== 'string' || !message.startsWith(PREFIX)) return undefined;
  const status = message.slice(PREFIX.length);
  if (!STATUSES.has(status) || entry.status !== status || typeof entry.messageId !== 'string') return undefined;
  // The outcome's own keys only: the line also has the logger's (timestamp, level, worker, Lambda's
  // context keys, a Powertools service...), which are not part of the outcome.
  const outcome: Record<string, unknown> = {};
  for (const key of OUTCOME_KEYS) if (entry[key] !== undefined) outcome[key] = entry[key];
  return outcome as unknown as RecordOutcome;
}

/** Every key of a RecordOutcome (the compiler checks the list is complete). */
const OUTCOME_KEY_SET = {
  messageId: true,
  status: true,
  reason: true,
  source: true,
  outputKey: true,
  covered: true,
  receiveCount: true,
  effectsExecuted: true,
  quarantined: true,
  publishRacesLost: true,
  retryable: true,
  error: true,
  deferredSeconds: true,
  requeuedRecords: true,
  requeuedAs: true,
} satisfies Record<keyof RecordOutcome, true>;
const OUTCOME_KEYS = Object.keys(OUTCOME_KEY_SET);
