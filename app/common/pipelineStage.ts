import { readFile } from 'node:fs/promises';
import { RerunError } from '../../src/errors.js';
import { type DeterministicKeyRule, isCustomKeyRule, outputKeyOf } from '../../src/pipeline/keyRule.js';
import { didYouMean } from '../../src/pipeline/nearestName.js';
import { PipelineDescriptionError } from '../../src/pipeline/PipelineDescriptionError.js';
import { parsePipelineDescription } from '../../src/pipeline/parsePipelineDescription.js';
import {
  type DescribedStage,
  describePipeline,
  type ObjectStage,
  type PipelineDescription,
  type WindowStage,
} from '../../src/pipeline/pipelineDescription.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import type { InputRules } from '../partition/inputCoverage.js';
import { inputRulesOf } from '../partition/inputCoverage.js';
import { referencePipeline } from '../referencePipeline.js';
import { StackOutput } from '../stackOutputs.js';
import type { CliOption, OptionValues } from './command.js';
import type { PipelineTarget } from './pipelineTarget.js';

/** The options of the commands that plan one stage by its key rule (`reprocess`, `status`, `ui`). */
export const stageOptions: Record<string, CliOption> = {
  pipeline: {
    type: 'string',
    valueName: 'FILE',
    description: "The pipeline's description as JSON (default: the --stack's PipelineDescription output)",
  },
  stage: {
    type: 'string',
    valueName: 'NAME',
    description: "The stage to act on (default: the stack's PipelineStage, or the only one)",
  },
};

/**
 * The tool cannot know a stage's output key rule, so it plans nothing rather than a wrong set: the
 * stack publishes no description and is not rerun's reference stack, or the stage's rule is custom
 * (functions in code). The message says how to publish one. Not retryable.
 *
 * @example
 * throw new StageKeyRuleUnknownError('The stack "Uploads" publishes no pipeline description ...');
 */
export class StageKeyRuleUnknownError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'StageKeyRuleUnknownError';
  }
}

/** An object stage the tools can plan: its rules are declarative, so listings can be inverted. */
export interface PlanningStage {
  /** The stage's name in the description (also the name its worker's code-version markers use). */
  readonly name: string;
  /** Where the description came from, for messages: `the stack "X"`, a file, or the reference pipeline. */
  readonly from: string;
  /** Whether the stage is rerun's own normalizer: only then do its skip rules apply. */
  readonly reference: boolean;
  readonly inputPrefix: string;
  readonly outputKey: DeterministicKeyRule;
  readonly sideOutputs: Readonly<Record<string, DeterministicKeyRule>>;
  /** @default not declared */
  readonly codeVersion?: string;
  readonly description: PipelineDescription;
}

/** What to do to publish a description, said by every refusal. */
const HOW_TO_PUBLISH =
  "Publish the stage's key rule: give RerunPipeline the pipeline (definePipeline of rerun-pipeline/pipeline) or the " +
  "worker's outputKey ({ prefix, stripPrefix, suffix }) with outputs: true and redeploy, or pass --pipeline FILE " +
  'with the description as JSON.';

/**
 * The stage a command plans, with the description it comes from: `--pipeline FILE`, else the
 * PipelineDescription output of `--stack`, else (no stack) rerun's reference pipeline under the
 * target's topology, as `rerun dev` of the reference app runs it. A stack without a description is
 * planned as the reference pipeline only when it is rerun's own stack (it has the reference outputs
 * NormalizeFunctionName or SummaryQueueUrl, from a release before descriptions); any other refuses.
 * `--stage NAME` chooses among several stages (refused by name when unknown, with the nearest one);
 * a custom key rule refuses, saying so.
 *
 * @example
 * const stage = await resolvePlanningStage(target, values);
 * stage.outputKey; // { prefix: 'upper/', stripPrefix: 'incoming/' }
 */
export async function resolvePlanningStage(target: PipelineTarget, values: OptionValues): Promise<PlanningStage> {
  const chosen = await resolveStage(target, values);
  if ('window' in chosen) {
    throw new StageKeyRuleUnknownError(
      `Stage "${chosen.name}" of ${chosen.from} is a window stage: this command plans an object stage (one output per ` +
        `input). Pass --stage with one of ${objectStages(chosen.description).join(', ') || '(none)'}.`,
    );
  }
  return chosen;
}

/** A window stage as the tools judge it: its description, and whether it is rerun's own daily summary. */
export interface WindowPlanningStage {
  readonly name: string;
  /** Where the description came from, for messages. */
  readonly from: string;
  readonly window: WindowStage;
  /**
   * Whether it is rerun's own daily summary over its reference normalizer: its layout is the
   * reference one (`summaries/{input bucket}/dt=D/summary.json`), judged by its days.
   */
  readonly reference: boolean;
  readonly description: PipelineDescription;
}

/**
 * The stage a command acts on, object or window (see {@link resolvePlanningStage}, which refuses a
 * window stage): a window stage comes back as it is described, for `rerun status` to judge by its
 * windows.
 *
 * @example
 * const stage = await resolveStage(target, { stage: 'daily' });
 * if ('window' in stage) stage.window.partitions; // { kind: 'time', grain: 'daily', ... }
 */
export async function resolveStage(
  target: PipelineTarget,
  values: OptionValues,
): Promise<PlanningStage | WindowPlanningStage> {
  const { description, from } = await readDescription(target, values);
  const reference = describePipeline(referencePipeline(target.topology));
  const name = chooseStage(description, from, values, target);
  const stage = description.stages[name] as DescribedStage;
  if (stage.kind !== 'object') {
    const upstream = description.stages[stage.input.stage];
    const referenceWindow = reference.stages[target.topology.summarize.name];
    return {
      name,
      from,
      window: stage,
      // rerun's own summary: the reference window stage over the reference normalizer's rules.
      reference:
        upstream !== undefined &&
        sameRules(upstream, reference.stages[target.topology.normalize.name]) &&
        JSON.stringify({ ...stage, input: {} }) === JSON.stringify({ ...referenceWindow, input: {} }),
      description,
    };
  }
  const rules = [['outputKey', stage.outputKey], ...Object.entries(stage.sideOutputs ?? {})] as const;
  for (const [rule, value] of rules) {
    if (isCustomKeyRule(value)) {
      throw new StageKeyRuleUnknownError(
        `Stage "${name}" of ${from} has a custom key rule (${rule === 'outputKey' ? 'its outputKey' : `side output ${rule}`} ` +
          'is a function in code): rerun cannot know its output keys, so it plans nothing rather than a wrong set. ' +
          "Describe the rule with deterministicKey's parameters ({ prefix, stripPrefix, suffix }) in the pipeline and " +
          'publish it again.',
      );
    }
  }
  const input = stage.input;
  if (!('prefix' in input)) {
    throw new StageKeyRuleUnknownError(
      `Stage "${name}" of ${from} reads the outputs of stage "${input.stage}": planning it from the output bucket is ` +
        'not supported yet; pass --stage with a stage over a prefix of the input bucket.',
    );
  }
  const sideOutputs = (stage.sideOutputs ?? {}) as Readonly<Record<string, DeterministicKeyRule>>;
  const referenceStage = reference.stages[target.topology.normalize.name];
  return {
    name,
    from,
    reference: sameRules(stage, referenceStage),
    inputPrefix: input.prefix,
    outputKey: stage.outputKey as DeterministicKeyRule,
    sideOutputs,
    ...(stage.codeVersion !== undefined ? { codeVersion: stage.codeVersion } : {}),
    description,
  };
}

/**
 * The window stage `rerun backfill --stack S` acts on when `--stage` is not given: undefined when
 * the stack is rerun's own (its daily summary, the reference backfill); otherwise the stack's only
 * window stage, with a note that says it was chosen. A stack with several window stages, or none,
 * is refused by name ({@link StageKeyRuleUnknownError}), and so is a stack that publishes no
 * description (it cannot be known which windows it has).
 *
 * @example
 * const chosen = await defaultWindowStage(target, values); // { name: 'daily', note: 'the stack "Uploads" has ...' }
 */
export async function defaultWindowStage(
  target: PipelineTarget,
  values: OptionValues,
): Promise<{ readonly name: string; readonly note: string } | undefined> {
  const stack = target.stack;
  if (!stack) return undefined;
  const { description, from } = await readDescription(target, values);
  const names = Object.keys(description.stages);
  const windows = names.filter((n) => description.stages[n]?.kind === 'window');
  if (windows.length === 1) {
    const name = windows[0] as string;
    const stage = await resolveStage(target, { ...values, stage: name });
    if ('window' in stage && stage.reference) return undefined;
    return {
      name,
      note: `note: ${from} has one window stage, ${name}: backfilling it (--stage ${name} says so explicitly).\n`,
    };
  }
  if (windows.length === 0) {
    throw new StageKeyRuleUnknownError(
      `${capitalized(from)} has no window stage (its stages: ${names.join(', ') || 'none'}): a backfill reruns the ` +
        "windows of a window stage. Rerun an object stage's inputs with rerun reprocess --stack " +
        `${stack.stackName}${names.length === 1 ? ` --stage ${names[0]}` : ''}.`,
    );
  }
  throw new StageKeyRuleUnknownError(
    `${capitalized(from)} has ${windows.length} window stages (${windows.join(', ')}): pass --stage NAME with the ` +
      'one to backfill (--downstream adds the stages that read it).',
  );
}

function capitalized(text: string): string {
  return `${text[0]?.toUpperCase() ?? ''}${text.slice(1)}`;
}

/**
 * The description a command acts on and where it came from, for messages (see
 * {@link resolvePlanningStage}): `--pipeline FILE`, the stack's PipelineDescription output, or the
 * reference pipeline.
 *
 * @example
 * const { description, from } = await readDescription(target, {});
 */
export async function readDescription(
  target: PipelineTarget,
  values: OptionValues,
): Promise<{ description: PipelineDescription; from: string }> {
  const file = typeof values.pipeline === 'string' && values.pipeline !== '' ? values.pipeline : undefined;
  if (file) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new StageKeyRuleUnknownError(`--pipeline ${file} cannot be read (${(error as Error).message}).`);
    }
    return { description: parseFrom(text, `--pipeline ${file}`), from: file };
  }
  const stack = target.stack;
  const dev = target.devPipeline;
  if (!stack && dev) {
    // A running rerun dev of the user's pipeline (rerun dev --pipeline) published it in its session file.
    return { description: parseFrom(JSON.stringify(dev.pipeline), dev.from), from: dev.from };
  }
  if (!stack) {
    return { description: describePipeline(referencePipeline(target.topology)), from: 'the reference pipeline' };
  }
  const from = `the stack "${stack.stackName}"`;
  const published = stack.outputs[StackOutput.PIPELINE_DESCRIPTION];
  if (published !== undefined) {
    return { description: parseFrom(published, `the ${StackOutput.PIPELINE_DESCRIPTION} output of ${from}`), from };
  }
  // rerun's own stack from a release before descriptions: its layout is the reference one.
  if (stack.outputs[StackOutput.FUNCTION_NAME] || stack.outputs[StackOutput.SUMMARY_QUEUE_URL]) {
    return { description: describePipeline(referencePipeline(target.topology)), from };
  }
  throw new StageKeyRuleUnknownError(
    `${from[0]?.toUpperCase()}${from.slice(1)} publishes no pipeline description (no ${StackOutput.PIPELINE_DESCRIPTION} ` +
      "output), and it is not rerun's reference stack: this tool cannot know its worker's output key rule, and would " +
      `plan every input wrongly. ${HOW_TO_PUBLISH}`,
  );
}

/** JSON text parsed as a description; its errors say where the text came from. */
function parseFrom(text: string, where: string): PipelineDescription {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PipelineDescriptionError('', `${where} is not JSON (${(error as Error).message})`);
  }
  try {
    return parsePipelineDescription(json);
  } catch (error) {
    if (error instanceof PipelineDescriptionError) {
      throw new PipelineDescriptionError(
        error.path,
        `${error.message.slice(error.message.indexOf(': ') + 2)} (in ${where})`,
      );
    }
    throw error;
  }
}

/** `--stage`, else the stack's PipelineStage, else the only object stage over an input prefix. */
function chooseStage(
  description: PipelineDescription,
  from: string,
  values: OptionValues,
  target: PipelineTarget,
): string {
  const names = Object.keys(description.stages);
  const asked = typeof values.stage === 'string' && values.stage !== '' ? values.stage : undefined;
  if (asked !== undefined) {
    if (!Object.hasOwn(description.stages, asked)) {
      throw new StageKeyRuleUnknownError(
        `--stage ${asked}: ${from} has no stage named "${asked}"${didYouMean(asked, names)} (its stages: ${names.join(', ')}).`,
      );
    }
    return asked;
  }
  const published = values.pipeline === undefined ? target.stack?.outputs[StackOutput.PIPELINE_STAGE] : undefined;
  if (published !== undefined && Object.hasOwn(description.stages, published)) return published;
  const candidates = objectStages(description);
  if (candidates.length === 1) return candidates[0] as string;
  throw new StageKeyRuleUnknownError(
    `${from} has ${candidates.length} stages over the input bucket (${candidates.join(', ') || 'none'}): pass --stage NAME.`,
  );
}

function objectStages(description: PipelineDescription): string[] {
  return Object.entries(description.stages)
    .filter(([, s]) => s.kind === 'object' && 'prefix' in s.input)
    .map(([n]) => n);
}

/** Whether a stage has exactly the reference normalizer's input and key rules (its code version aside). */
function sameRules(stage: DescribedStage, reference: DescribedStage | undefined): boolean {
  if (reference === undefined || stage.kind !== 'object' || reference.kind !== 'object') return false;
  const rules = (s: ObjectStage<unknown>) => JSON.stringify([s.input, s.outputKey, s.sideOutputs ?? {}]);
  return rules(stage) === rules(reference);
}

/**
 * The worker as planning sees a stage: its name, code version, output bucket and key functions
 * from the description. rerun's reference stage keeps its normalizer's skip rules (by key: unknown
 * formats); any other stage has none, so every input under its prefix is judged. Planning never
 * transforms: `transform` refuses, naming the stage.
 *
 * @example
 * const worker = planningWorker(stage, target.outputBucket, referenceWorker);
 */
export function planningWorker(
  stage: PlanningStage,
  outputBucket: string,
  referenceWorker: () => WorkerDefinition,
): WorkerDefinition {
  if (stage.reference) return referenceWorker();
  return {
    name: stage.name,
    codeVersion: stage.codeVersion ?? '',
    outputBucket,
    outputKey: outputKeyOf(stage.outputKey),
    sideOutputs: Object.fromEntries(Object.entries(stage.sideOutputs).map(([n, r]) => [n, outputKeyOf(r)])),
    async transform() {
      throw new RerunError(
        `stage "${stage.name}" is known to this tool by its description only: it plans work, the deployed worker does it`,
        { retryable: false },
      );
    },
  };
}

/**
 * The input rules of a stage (app/partition/inputCoverage.ts): the reference normalizer's (with its
 * skip rules) for the reference stage; for any other, its key rules and no skip rule.
 *
 * @example
 * const rules = stageInputRules(stage, target, referenceInputRules(target));
 */
export function stageInputRules(stage: PlanningStage, target: PipelineTarget, reference: InputRules): InputRules {
  if (stage.reference) return reference;
  const quarantine = stage.sideOutputs.quarantine;
  return inputRulesOf(
    {
      outputKey: outputKeyOf(stage.outputKey),
      ...(quarantine ? { sideOutputs: { quarantine: outputKeyOf(quarantine) } } : {}),
    },
    { bucket: target.inputBucket, prefix: stage.inputPrefix, failurePrefix: target.topology.failurePrefix },
  );
}
