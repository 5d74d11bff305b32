import { normalizeKeyRules } from '../../src/normalize/normalizeWorker.js';
import { topology as defaultTopology, type Topology } from '../topology.js';
import { type InputRules, inputRulesOf } from './inputCoverage.js';

/**
 * The reference pipeline's input rules: the normalize worker's deterministic output and quarantine
 * keys and its skip rule, over the input bucket. The summarize worker records with them which
 * inputs of a day a summary covers, and `rerun status` and `rerun backfill` judge each day by the
 * same rules, so the three agree.
 *
 * @example
 * const rules = referenceInputRules({ inputBucket: 'rerun-input' });
 */
export function referenceInputRules(where: {
  readonly inputBucket: string;
  /** @default the project's topology (app/topology.ts) */
  readonly topology?: Topology;
}): InputRules {
  const t = where.topology ?? defaultTopology;
  // The key rules alone: the normalizer's transform stays out of the summarize bundle.
  return inputRulesOf(normalizeKeyRules(t), {
    bucket: where.inputBucket,
    prefix: t.inputPrefix,
    failurePrefix: t.failurePrefix,
  });
}
