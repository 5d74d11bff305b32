import type { InputRules } from '../partition/inputCoverage.js';
import { referenceInputRules as rulesOf } from '../partition/referenceInputRules.js';
import type { PipelineTarget } from './pipelineTarget.js';

/**
 * The reference pipeline's input rules for a target (app/partition/referenceInputRules.ts, as the
 * summarize worker uses them), so `rerun status` and `rerun backfill` judge each day by its inputs
 * as well as its outputs, exactly as the summary records its coverage.
 *
 * @example
 * const report = await partitionStatus({ ...options, inputs: referenceInputRules(target) });
 */
export function referenceInputRules(target: PipelineTarget): InputRules {
  return rulesOf({ inputBucket: target.inputBucket, topology: target.topology });
}
