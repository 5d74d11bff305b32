import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { type InputRules, inputRulesOf } from '../partition/inputCoverage.js';
import type { PipelineTarget } from './pipelineTarget.js';

/**
 * The reference pipeline's input rules for a target: the normalize worker's deterministic output
 * and quarantine keys and its skip rule, over the target's input bucket, so `rerun status` and
 * `rerun backfill` judge each day by its inputs as well as its outputs.
 *
 * @example
 * const report = await partitionStatus({ ...options, inputs: referenceInputRules(target) });
 */
export function referenceInputRules(target: PipelineTarget): InputRules {
  const worker = createNormalizeWorker({ outputBucket: target.outputBucket, prefixes: target.topology });
  return inputRulesOf(worker, {
    bucket: target.inputBucket,
    prefix: target.topology.inputPrefix,
    failurePrefix: target.topology.failurePrefix,
  });
}
