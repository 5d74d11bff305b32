/**
 * A pipeline as data (`import ... from 'rerun-pipeline/pipeline'`): one description of its stages
 * (input, output key rule, side outputs, partitions, code version) that the worker, the CDK app and
 * the tools share. Pure: no AWS SDK, no CDK.
 *
 * @example
 * import { definePipeline } from 'rerun-pipeline/pipeline';
 * export const pipeline = definePipeline({ name: 'uploads', stages: { upper: { kind: 'object',
 *   input: { prefix: 'incoming/' }, outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' } } } });
 */

export type {
  PartitionSpec,
  StaticPartitionSpec,
  TimePartitionSpec,
  UnpartitionedSpec,
} from '../partitions/partitionSpec.js';
export { TimeGrain } from '../partitions/partitionSpec.js';
export { definePipeline } from './definePipeline.js';
export {
  type CustomKeyRule,
  type DescribedKeyRule,
  type DeterministicKeyRule,
  describeKeyRule,
  isCustomKeyRule,
  type ObjectRef,
  type OutputKeyRule,
  outputKeyOf,
  type PublishedCustomKeyRule,
} from './keyRule.js';
export { PipelineDescriptionError } from './PipelineDescriptionError.js';
export { parsePipelineDescription } from './parsePipelineDescription.js';
export {
  type DescribedStage,
  describePipeline,
  type ObjectStage,
  PIPELINE_DESCRIPTION_VERSION,
  type PipelineDefinition,
  type PipelineDescription,
  type StageDefinition,
  type StageInput,
  type WindowStage,
} from './pipelineDescription.js';
