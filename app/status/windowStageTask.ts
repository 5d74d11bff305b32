import { RerunError } from '../../src/errors.js';
import { type DeterministicKeyRule, isCustomKeyRule, outputKeyOf } from '../../src/pipeline/keyRule.js';
import type { DescribedStage, WindowStage } from '../../src/pipeline/pipelineDescription.js';
import { defineWindowTask, type WindowTask } from '../../src/window/defineWindowTask.js';
import type { WindowInputSource } from '../../src/window/WindowTaskDefinition.js';
import { StageKeyRuleUnknownError, type WindowPlanningStage } from '../common/pipelineStage.js';
import { type InputRules, inputRulesOf } from '../partition/inputCoverage.js';

/**
 * A window stage of a pipeline description as the library's window task (src/window/), built from
 * the description alone: its scheme, its output layout and code version are the stage's; its input
 * is the stage it reads.
 *
 * - Over an **object stage** with a declarative key rule `{ prefix, stripPrefix, suffix }` over the
 *   input prefix P: that stage's outputs of the input bucket, under the root
 *   `{prefix}{input bucket}/{P without stripPrefix}`, where an output keeps its input's key after P.
 *   They are grouped by the object stage's `partitions` when it declares them (its template read on
 *   the key after P, which is also the output's key after the root), else by the window stage's own.
 * - Over a **window stage**: its published outputs, at `{outputPrefix}{window's prefix}{fileName}`
 *   (its markers and staging copies are its bookkeeping, anything else beside them is skipped).
 *
 * The task it returns judges (`status`); it never builds: its build refuses, naming the stage.
 * A stage rerun cannot know the keys of is refused with {@link StageKeyRuleUnknownError}: a window
 * stage without `fileName`, an upstream stage whose rule is custom (functions in code), or an
 * object stage over another stage's outputs.
 *
 * @example
 * const task = windowStageTask(stage, { inputBucket: 'uploads-in', outputBucket: 'uploads-out' });
 * await task.status('2026-12-01', '2026-12-05', { reader });
 */
export function windowStageTask(
  stage: WindowPlanningStage,
  buckets: { readonly inputBucket: string; readonly outputBucket: string },
): WindowTask {
  const { name, from, window, description } = stage;
  const fileName = requireFileName(name, from, window);
  const upstreamName = window.input.stage;
  const upstream = description.stages[upstreamName] as DescribedStage;
  return defineWindowTask({
    name,
    codeVersion: window.codeVersion,
    partitions: window.partitions,
    inputs: [inputOf(upstreamName, upstream, window, stage, buckets)],
    output: { bucket: buckets.outputBucket, prefix: window.outputPrefix, fileName },
    async build() {
      throw new RerunError(
        `stage "${name}" is known to this tool by its description only: it judges windows, the deployed window task builds them`,
        { retryable: false },
      );
    },
  });
}

/** The window stage's input as the window task reads it. */
function inputOf(
  upstreamName: string,
  upstream: DescribedStage,
  window: WindowStage,
  stage: WindowPlanningStage,
  buckets: { readonly inputBucket: string; readonly outputBucket: string },
): WindowInputSource {
  const { name, from } = stage;
  if (upstream.kind === 'window') {
    return {
      name: upstreamName,
      outputsOf: {
        definition: {
          name: upstreamName,
          partitions: upstream.partitions,
          output: {
            bucket: buckets.outputBucket,
            prefix: upstream.outputPrefix,
            fileName: requireFileName(upstreamName, from, upstream),
          },
        },
      },
    };
  }
  if (isCustomKeyRule(upstream.outputKey)) {
    throw new StageKeyRuleUnknownError(
      `Stage "${name}" of ${from} reads the outputs of stage "${upstreamName}", whose key rule is custom (functions in ` +
        'code): rerun cannot know where its outputs are, so it judges no window rather than a wrong set. Describe the ' +
        "rule with deterministicKey's parameters ({ prefix, stripPrefix, suffix }) and publish the pipeline again.",
    );
  }
  if (!('prefix' in upstream.input)) {
    throw new StageKeyRuleUnknownError(
      `Stage "${name}" of ${from} reads stage "${upstreamName}", which reads the outputs of stage ` +
        `"${upstream.input.stage}": judging a window over such a stage is not supported yet.`,
    );
  }
  const { prefix, stripPrefix = '' } = upstream.outputKey;
  const inputPrefix = upstream.input.prefix;
  return {
    name: upstreamName,
    bucket: buckets.outputBucket,
    // deterministicKey: {prefix}{bucket}/{key without stripPrefix}{suffix}; stripPrefix starts the input prefix.
    prefix: `${prefix}${buckets.inputBucket}/${inputPrefix.slice(stripPrefix.length)}`,
    partitions: upstream.partitions ?? window.partitions,
  };
}

function requireFileName(name: string, from: string, window: WindowStage): string {
  if (window.fileName !== undefined) return window.fileName;
  throw new StageKeyRuleUnknownError(
    `Window stage "${name}" of ${from} declares no fileName: its outputs are {outputPrefix}{window's prefix}{fileName}, ` +
      "so rerun cannot tell which object is a window's output, and judges none rather than guess. Add fileName (the " +
      "window task's output.fileName) to the stage in the pipeline and publish it again, or pass --pipeline FILE.",
  );
}

/**
 * The key rules of the object stage a window stage reads (over a prefix of the input bucket), for
 * judging whether each window's upstream inputs all have a current output (its `incomplete` state);
 * undefined when the stage reads a window stage. Only the main output counts: an input whose worker
 * wrote only a side output (a whole file quarantined) has no output in the window.
 *
 * @example
 * const rules = windowStageInputRules(stage, { inputBucket: 'in', failurePrefix: 'failures/' });
 */
export function windowStageInputRules(
  stage: WindowPlanningStage,
  where: { readonly inputBucket: string; readonly failurePrefix: string },
): InputRules | undefined {
  const upstream = stage.description.stages[stage.window.input.stage];
  if (upstream?.kind !== 'object' || isCustomKeyRule(upstream.outputKey) || !('prefix' in upstream.input)) {
    return undefined;
  }
  return inputRulesOf(
    { outputKey: outputKeyOf(upstream.outputKey as DeterministicKeyRule) },
    { bucket: where.inputBucket, prefix: upstream.input.prefix, failurePrefix: where.failurePrefix },
  );
}
