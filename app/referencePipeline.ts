import { normalizeStage } from '../src/normalize/normalizeStage.js';
import { definePipeline } from '../src/pipeline/definePipeline.js';
import type { PipelineDefinition } from '../src/pipeline/pipelineDescription.js';
import { SUMMARIZE_CODE_VERSION } from './partition/codeVersion.js';
import { topology as defaultTopology, type Topology } from './topology.js';

/**
 * rerun's own pipeline as data, described like a user's: the normalize stage (its `normalized/` key
 * rule and `quarantine/` side output, over `incoming/`) and the daily summary, a window stage over
 * the normalized outputs partitioned by `dt={yyyy}-{MM}-{dd}`. The stack publishes it
 * (infra/RerunStack.ts), so the tools read the reference pipeline the way they read any other.
 *
 * @example
 * referencePipeline().stages.normalize.outputKey; // { prefix: 'normalized/', stripPrefix: 'incoming/', suffix: '.ndjson' }
 */
export function referencePipeline(t: Topology = defaultTopology): PipelineDefinition {
  return definePipeline({
    name: t.appName,
    stages: {
      [t.normalize.name]: normalizeStage(t),
      [t.summarize.name]: {
        kind: 'window',
        input: { stage: t.normalize.name },
        partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
        outputPrefix: t.summaryPrefix,
        codeVersion: SUMMARIZE_CODE_VERSION,
      },
    },
  });
}
