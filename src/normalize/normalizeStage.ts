import type { DeterministicKeyRule } from '../pipeline/keyRule.js';
import type { ObjectStage } from '../pipeline/pipelineDescription.js';
import { NORMALIZE_CODE_VERSION, NORMALIZE_PREFIXES, type NormalizePrefixes } from './normalizeWorker.js';

/**
 * The reference normalizer as a pipeline stage: inputs under `inputPrefix`, outputs at
 * `{outputPrefix}{bucket}/{path}.ndjson`, rejected rows at `{quarantinePrefix}{bucket}/{path}.ndjson`
 * (the keys of normalizeKeyRules, as data), so a stack running it publishes the rule the tools read.
 *
 * @example
 * normalizeStage().outputKey; // { prefix: 'normalized/', stripPrefix: 'incoming/', suffix: '.ndjson' }
 */
export function normalizeStage(
  prefixes: NormalizePrefixes = NORMALIZE_PREFIXES,
  codeVersion: string = NORMALIZE_CODE_VERSION,
): ObjectStage<DeterministicKeyRule> {
  const rule = (prefix: string): DeterministicKeyRule => ({
    prefix,
    ...(prefixes.inputPrefix ? { stripPrefix: prefixes.inputPrefix } : {}),
    suffix: '.ndjson',
  });
  return {
    kind: 'object',
    input: { prefix: prefixes.inputPrefix },
    outputKey: rule(prefixes.outputPrefix),
    sideOutputs: { quarantine: rule(prefixes.quarantinePrefix) },
    codeVersion,
  };
}
