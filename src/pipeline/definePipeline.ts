import { checkPipeline } from './parsePipelineDescription.js';
import type { PipelineDefinition, StageDefinition } from './pipelineDescription.js';

/**
 * Declares a pipeline: its stages, each with its input, output key rule, side outputs, partitions
 * and code version. Checked at once with the same checks as {@link parsePipelineDescription}: an
 * unknown field, a stage that names no stage, a cycle, a missing or mistyped field throws a
 * PipelineDescriptionError naming the field. Import it from the worker and from the CDK app, so both
 * use one key rule, and the stack publishes it for the tools (RerunPipeline's `pipeline` prop).
 *
 * @example
 * export const pipeline = definePipeline({
 *   name: 'uploads',
 *   stages: {
 *     upper: { kind: 'object', input: { prefix: 'incoming/' },
 *       outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' }, codeVersion: 'upper@1' },
 *   },
 * });
 */
export function definePipeline<const Stages extends Record<string, StageDefinition>>(
  definition: PipelineDefinition<Stages>,
): PipelineDefinition<Stages> {
  return checkPipeline(definition, { functions: true }) as unknown as PipelineDefinition<Stages>;
}
