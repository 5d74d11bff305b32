import type { FailureRecord } from '../../src/failures/failureRecord.js';
import { IntakeKind, parseS3EventBody } from '../../src/intake/parseS3Event.js';
import { parseSummaryTask } from '../partition/summaryTask.js';

/**
 * Tells, before a redrive, whether a dead letter would fail again for the same deterministic
 * reason: returns that reason, or undefined when a retry may succeed (or nobody can tell).
 */
export type DeadLetterRecheck = (body: string, record: FailureRecord | undefined) => string | undefined;

/**
 * The recheck of the reference pipeline's queues: a message whose failure record says non-retryable
 * and whose body the same pure classifier still rejects (not an S3 event; not a valid summary task)
 * fails again on every redrive, whatever is fixed elsewhere; moving it back only spends receives
 * until it is dead-lettered again. Retryable failures (timeouts, throttling, a worker bug fixed
 * since) are never marked: a redrive is how they recover.
 *
 * @example
 * const recheck = referenceRecheck('normalize');
 * recheck('nope', record); // 'would fail again: not an S3 event: ...' when the record is non-retryable
 */
export function referenceRecheck(stage: 'normalize' | 'summarize'): DeadLetterRecheck {
  return (body, record) => {
    if (!record || record.retryable) return undefined;
    if (stage === 'normalize') {
      const intake = parseS3EventBody(body);
      return intake.kind === IntakeKind.INVALID ? `would fail again: not an S3 event: ${intake.reason}` : undefined;
    }
    const task = parseSummaryTask(body);
    return task.kind === 'invalid' ? `would fail again: ${task.reason}` : undefined;
  };
}
