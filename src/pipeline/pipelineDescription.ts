import type { PartitionSpec } from '../partitions/partitionSpec.js';
import { type DescribedKeyRule, describeKeyRule, type OutputKeyRule } from './keyRule.js';

/** Where a stage's inputs come from: a prefix of the input bucket, or another stage's outputs. */
export type StageInput = { readonly prefix: string } | { readonly stage: string };

/**
 * A stage that builds one output per input object (a worker of `defineWorker`): its input, its
 * output key rule and its side outputs' rules, its partitions (when its keys carry them) and its
 * code version.
 *
 * @example
 * const upper: ObjectStage = { kind: 'object', input: { prefix: 'incoming/' },
 *   outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' }, codeVersion: 'upper@1' };
 */
export interface ObjectStage<Rule = OutputKeyRule> {
  readonly kind: 'object';
  readonly input: StageInput;
  /** How each output's key follows from its input's (see DeterministicKeyRule). */
  readonly outputKey: Rule;
  /**
   * The key rules of side outputs by name (e.g. `quarantine`), as the worker's `sideOutputs`.
   * @default none
   */
  readonly sideOutputs?: Readonly<Record<string, Rule>>;
  /**
   * How the stage's outputs group into partitions (src/partitions/partitionSpec.ts).
   * @default none declared
   */
  readonly partitions?: PartitionSpec;
  /**
   * The worker's code version (defineWorker's `codeVersion`): outputs of another are old-code.
   * @default not declared: the tools cannot tell old-code outputs
   */
  readonly codeVersion?: string;
}

/**
 * A stage that owns one output per window of another stage's outputs (built by the library's window
 * task): its input stage, its partitions (required), its output prefix and code version.
 *
 * @example
 * const daily: WindowStage = { kind: 'window', input: { stage: 'upper' },
 *   partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
 *   outputPrefix: 'daily/', fileName: 'counts.json', codeVersion: 'daily@1' };
 */
export interface WindowStage {
  readonly kind: 'window';
  readonly input: { readonly stage: string };
  readonly partitions: PartitionSpec;
  /** Prefix of the window outputs, ending with `/`. */
  readonly outputPrefix: string;
  readonly codeVersion: string;
  /**
   * The last segment of each window's output key (the window task's `output.fileName`): a window's
   * output is `{outputPrefix}{window's prefix}{fileName}`. The tools need it to judge the stage.
   * @default not declared: `rerun status` refuses to judge the stage, saying so
   */
  readonly fileName?: string;
}

/** A stage in code (its key rules may be functions). */
export type StageDefinition = ObjectStage<OutputKeyRule> | WindowStage;
/** A stage as data. */
export type DescribedStage = ObjectStage<DescribedKeyRule> | WindowStage;

/**
 * A pipeline in code: its name and its stages by name. Build it with {@link definePipeline}.
 *
 * @example
 * const definition: PipelineDefinition = { name: 'uploads', stages: {} };
 */
export interface PipelineDefinition<Stages extends Record<string, StageDefinition> = Record<string, StageDefinition>> {
  readonly name: string;
  readonly stages: Stages;
}

/** The format version a published description carries. */
export const PIPELINE_DESCRIPTION_VERSION = 1;

/**
 * A pipeline as data: what a stack publishes (the PipelineDescription output), what `--pipeline FILE`
 * holds and what {@link parsePipelineDescription} returns. Key rules are declarative or
 * `{ custom: true }`.
 *
 * @example
 * const d: PipelineDescription = { version: 1, name: 'uploads', stages: {} };
 */
export interface PipelineDescription {
  readonly version: typeof PIPELINE_DESCRIPTION_VERSION;
  readonly name: string;
  readonly stages: Readonly<Record<string, DescribedStage>>;
}

/**
 * The description of a pipeline as data, ready for JSON: custom key rules become `{ custom: true }`.
 * `parsePipelineDescription(JSON.parse(JSON.stringify(describePipeline(p))))` gives it back.
 *
 * @example
 * const json = JSON.stringify(describePipeline(pipeline));
 */
export function describePipeline(pipeline: PipelineDefinition | PipelineDescription): PipelineDescription {
  const stages: Record<string, DescribedStage> = {};
  for (const [name, stage] of Object.entries(pipeline.stages)) {
    if (stage.kind === 'window') {
      stages[name] = { ...stage, input: { ...stage.input } };
      continue;
    }
    const sides = stage.sideOutputs as Readonly<Record<string, OutputKeyRule | DescribedKeyRule>> | undefined;
    stages[name] = {
      kind: 'object',
      input: { ...stage.input },
      outputKey: describeKeyRule(stage.outputKey),
      ...(sides
        ? { sideOutputs: Object.fromEntries(Object.entries(sides).map(([n, r]) => [n, describeKeyRule(r)])) }
        : {}),
      ...(stage.partitions ? { partitions: stage.partitions } : {}),
      ...(stage.codeVersion !== undefined ? { codeVersion: stage.codeVersion } : {}),
    };
  }
  return { version: PIPELINE_DESCRIPTION_VERSION, name: pipeline.name, stages };
}
