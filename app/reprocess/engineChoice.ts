import { CliUsageError } from '../common/command.js';
import { AUTO_BATCH_OPERATIONS_THRESHOLD, autoEngine, ReprocessEngine } from './batchOperationsJob.js';
import type { PlanningSetup } from './planningSetup.js';
import type { ReprocessArgs } from './reprocessArgs.js';
import type { ReprocessEvents } from './reprocessEvents.js';
import { runReprocess } from './runReprocess.js';

/** The engine a planned reprocess runs on (`auto`: a dry-run pass sizes the plan first). */
export async function chooseEngine(args: ReprocessArgs, setup: PlanningSetup, emit: ReprocessEvents) {
  const { requested } = args;
  const { common, explain, queueUrl } = setup;
  let engine: typeof ReprocessEngine.SQS | typeof ReprocessEngine.BATCH_OPERATIONS =
    requested === ReprocessEngine.AUTO ? ReprocessEngine.SQS : requested;
  if (requested === ReprocessEngine.AUTO) {
    // The plan's size is known only once it is listed: one dry-run pass first (a LIST per 1,000 keys).
    const sized = await runReprocess({ ...common, dryRun: true, prune: false }).catch(explain);
    engine = autoEngine(sized.planned);
    emit({
      kind: 'note',
      text:
        `engine: auto chose ${engine} for ${sized.planned} planned input(s) ` +
        `(batch-operations from ${AUTO_BATCH_OPERATIONS_THRESHOLD.toLocaleString('en-US')}).\n`,
    });
    if (engine === ReprocessEngine.BATCH_OPERATIONS && args.prune && !queueUrl) {
      throw new CliUsageError('--prune needs the work queue; pass --queue-url.');
    }
  }

  return engine;
}
