import type { CustomKeyRule, DeterministicKeyRule } from '../pipeline/keyRule.js';
import { didYouMean } from '../pipeline/nearestName.js';
import { checkPipeline } from '../pipeline/parsePipelineDescription.js';
import {
  describePipeline,
  type ObjectStage,
  type PipelineDefinition,
  type PipelineDescription,
} from '../pipeline/pipelineDescription.js';

/**
 * The stack outputs of a published pipeline (RerunPipeline with `outputs: true`), read by
 * `rerun reprocess|status|ui --stack` (app/stackOutputs.ts repeats them; a test keeps them equal).
 */
export const PIPELINE_DESCRIPTION_STACK_OUTPUTS = {
  /** The description as JSON (describePipeline). */
  DESCRIPTION: 'PipelineDescription',
  /** The stage this stack's worker runs: the tools' default `--stage`. */
  STAGE: 'PipelineStage',
} as const;

/**
 * The longest output value CloudFormation stores: 4,096 characters ("Understand CloudFormation
 * quotas", Outputs; copilot-cli keeps its outputs under the same 4,096-byte bound). Counted here in
 * UTF-8 bytes, which is never fewer than characters, so what passes here fits.
 */
export const MAX_OUTPUT_VALUE_BYTES = 4096;

/** What the pipeline props decide: the stage this construct runs, and what is published. */
export interface PlannedStage {
  /** The stage's name in the description. */
  readonly stageName: string;
  /** The stage's input prefix (the bucket notification's filter). */
  readonly inputPrefix: string;
  /** The prefixes the stage's key rules declare (main and side outputs). */
  readonly prefixes: readonly string[];
  /** The description as JSON, for the PipelineDescription output. */
  readonly json: string;
}

/** The props of RerunPipeline this file reads. */
export interface PipelineProps {
  readonly pipeline?: PipelineDefinition | PipelineDescription;
  readonly stage?: string;
  readonly outputKey?: DeterministicKeyRule | CustomKeyRule;
  readonly workerName?: string;
  readonly inputPrefix?: string;
  /** A stage the worker's source declares (referenceWorker('normalize') does). */
  readonly declaredStage?: ObjectStage<DeterministicKeyRule>;
}

/**
 * The stage a RerunPipeline runs, from its `pipeline` (and `stage`) props, its `outputKey`
 * shorthand, or the stage its worker source declares; undefined when none says it (then nothing is
 * published, and the tools refuse to plan the stack). The description is checked here, so a
 * PipelineDescriptionError naming the field surfaces at synth; other problems are pushed onto `v`.
 *
 * @example
 * const stage = planStage({ pipeline, stage: 'upper' }, 'Uploads', violations);
 */
export function planStage(props: PipelineProps, stackName: string, v: string[]): PlannedStage | undefined {
  if (props.pipeline !== undefined && props.outputKey !== undefined) {
    v.push("give pipeline (a description with the stage's key rule) or outputKey (the rule alone), not both");
    return undefined;
  }
  let pipeline: PipelineDefinition | PipelineDescription;
  if (props.pipeline !== undefined) {
    // Checked again: a description built by hand (not by definePipeline) is refused here, at synth.
    pipeline = checkPipeline(props.pipeline, { functions: true }) as PipelineDefinition;
  } else if (props.outputKey !== undefined || props.declaredStage !== undefined) {
    const name = props.workerName ?? (props.declaredStage ? 'normalize' : 'worker');
    const stage: ObjectStage =
      props.outputKey !== undefined
        ? { kind: 'object', input: { prefix: props.inputPrefix ?? 'incoming/' }, outputKey: props.outputKey }
        : (props.declaredStage as ObjectStage);
    const declaredPrefix = 'prefix' in stage.input ? stage.input.prefix : undefined;
    if (props.outputKey === undefined && props.inputPrefix !== undefined && props.inputPrefix !== declaredPrefix) {
      // The prebuilt worker keys its outputs by its own input prefix: another one is not its stage.
      return undefined;
    }
    pipeline = checkPipeline({ name: stackName, stages: { [name]: stage } }, { functions: true }) as PipelineDefinition;
  } else {
    if (props.stage !== undefined) v.push('stage names a stage of the pipeline prop: give pipeline too');
    return undefined;
  }
  const stageName = chooseStage(pipeline, props.stage, v);
  if (stageName === undefined) return undefined;
  const stage = pipeline.stages[stageName] as ObjectStage;
  if (!('prefix' in stage.input)) {
    v.push(
      `stage "${stageName}" reads the outputs of stage "${stage.input.stage}": a RerunPipeline runs a stage over a ` +
        'prefix of its input bucket (input: { prefix })',
    );
    return undefined;
  }
  if (props.inputPrefix !== undefined && props.inputPrefix !== stage.input.prefix) {
    v.push(
      `inputPrefix "${props.inputPrefix}" is not the input prefix "${stage.input.prefix}" of stage "${stageName}" in the ` +
        'pipeline: leave inputPrefix out (the stage gives it) or make them agree',
    );
  }
  const rules = [stage.outputKey, ...Object.values(stage.sideOutputs ?? {})];
  const prefixes = rules.flatMap((rule) => (rule.prefix === undefined ? [] : [rule.prefix]));
  const json = JSON.stringify(describePipeline(pipeline));
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_OUTPUT_VALUE_BYTES) {
    v.push(
      `the pipeline description is ${bytes} bytes as JSON, and a CloudFormation output value holds at most ` +
        `${MAX_OUTPUT_VALUE_BYTES}: shorten stage names or prefixes, or split the pipeline into stacks, or leave ` +
        'outputs off and give the tools the description with --pipeline FILE',
    );
  }
  return { stageName, inputPrefix: stage.input.prefix, prefixes, json };
}

/** The `stage` prop, checked, or the pipeline's only stage over a prefix of the input bucket. */
function chooseStage(
  pipeline: PipelineDefinition | PipelineDescription,
  stage: string | undefined,
  v: string[],
): string | undefined {
  const names = Object.keys(pipeline.stages);
  if (stage !== undefined) {
    const chosen = pipeline.stages[stage];
    if (!Object.hasOwn(pipeline.stages, stage) || chosen === undefined) {
      v.push(
        `stage: the pipeline has no stage named "${stage}"${didYouMean(stage, names)} (its stages: ${names.join(', ')})`,
      );
      return undefined;
    }
    if (chosen.kind !== 'object') {
      v.push(`stage "${stage}" is a window stage: a RerunPipeline runs an object stage (a worker of defineWorker)`);
      return undefined;
    }
    return stage;
  }
  const candidates = names.filter((n) => {
    const s = pipeline.stages[n];
    return s?.kind === 'object' && 'prefix' in s.input;
  });
  if (candidates.length === 1) return candidates[0];
  v.push(
    `stage: name the stage this worker runs (the pipeline's stages over the input bucket: ${candidates.join(', ') || 'none'})`,
  );
  return undefined;
}
