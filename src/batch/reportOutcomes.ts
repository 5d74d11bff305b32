import type { Logger } from '../logging/logger.js';
import { emitRecordOutcome, type OutcomeHook, type RecordOutcome, RecordStatus } from '../worker/outcomes.js';
import { recordOutcomeLogMessage } from './recordOutcomeLog.js';

/** Who reports: an SQS batch (its records are messages) or a Batch Operations invocation (tasks). */
export type OutcomeReporter = 'batch' | 'task';

/**
 * Reports the outcomes of one invocation: a log line each (`record processed`, ... warn for a
 * failure), the process-wide outcome channel (`rerun dev` listens there), and the `onOutcome`
 * hook, then its flush. A hook that throws is logged and the invocation's result stands: metrics
 * must never fail the work they count.
 *
 * @example
 * await reportOutcomes(outcomes, { logger, name: 'normalize', onOutcome }, 'batch');
 */
export async function reportOutcomes(
  outcomes: readonly RecordOutcome[],
  rules: { readonly logger: Logger; readonly name: string; readonly onOutcome?: OutcomeHook | undefined },
  reporter: OutcomeReporter,
): Promise<void> {
  for (const outcome of outcomes) {
    const log = outcome.status === RecordStatus.FAILED ? rules.logger.warn : rules.logger.info;
    // `covered` is for the failure recorder (one entry per input of the message): the line names
    // the source and the output already, and stays short for a message of many records.
    const { covered: _covered, ...logged } = outcome;
    log(recordOutcomeLogMessage(outcome.status), logged);
    emitRecordOutcome(outcome);
    if (rules.onOutcome) {
      try {
        rules.onOutcome(outcome, { worker: rules.name });
      } catch (error) {
        rules.logger.warn(`the onOutcome hook failed; the ${reporter} result stands`, {
          [reporter === 'batch' ? 'messageId' : 'taskId']: outcome.messageId,
          error,
        });
      }
    }
  }
  if (rules.onOutcome?.flush) {
    try {
      await rules.onOutcome.flush();
    } catch (error) {
      const stands = reporter === 'batch' ? 'the batch result stands' : 'the task results stand';
      rules.logger.warn(`the onOutcome hook could not flush; ${stands}`, { error });
    }
  }
}
