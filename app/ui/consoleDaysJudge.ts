import type { WindowTask } from '../../src/window/defineWindowTask.js';
import type { OptionValues } from '../common/command.js';
import {
  type PlanningStage,
  readDescription,
  resolveStage,
  StageKeyRuleUnknownError,
  type WindowPlanningStage,
} from '../common/pipelineStage.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import type { InputRules } from '../partition/inputCoverage.js';
import { windowStageInputRules, windowStageTask } from '../status/windowStageTask.js';

/**
 * How the console's days view judges each day of the pipeline it runs on:
 * - `window`: a user's window stage of daily grain, by the library's window judge (as `rerun status --stage`);
 * - `inputs`: a user's pipeline with no window stage: days are shown by their inputs, never judged
 *   against a summary the pipeline does not have.
 *
 * rerun's own reference pipeline has none (its daily summary is judged as `rerun status` judges it).
 */
export type ConsoleDaysJudge =
  | {
      readonly kind: 'window';
      /** The window stage's name. */
      readonly stage: string;
      /** Where the description came from (`--pipeline FILE`, `the stack "X"`, a rerun dev's file). */
      readonly from: string;
      readonly codeVersion: string;
      /** The stage as the tools judge it (windowStageTask). */
      readonly task: WindowTask;
      /** The upstream object stage's rules, for its `incomplete` state (windowStageInputRules). */
      readonly upstreamInputs?: InputRules;
    }
  | {
      readonly kind: 'inputs';
      /** The object stage whose inputs the days show. */
      readonly stage: string;
      readonly from: string;
    };

/**
 * The stage the console's days view judges, from the pipeline the target runs: `--stage NAME` when
 * it names a window stage (which must be daily: the view is one of days), else the description's only
 * window stage of daily grain. Undefined for rerun's own reference pipeline (its summary, as today).
 * A user's pipeline with no daily window stage gives `inputs`; one with several asks for `--stage`.
 * Also returns the values the object stage (the inputs' rules) is resolved with: a `--stage` that
 * names a window stage means its upstream object stage there.
 *
 * @example
 * const { judge, objectValues } = await resolveConsoleDaysJudge(target, values);
 */
export async function resolveConsoleDaysJudge(
  target: PipelineTarget,
  values: OptionValues,
  objectStage: (values: OptionValues) => Promise<PlanningStage>,
): Promise<{ readonly judge?: ConsoleDaysJudge; readonly stage: PlanningStage }> {
  const asked = typeof values.stage === 'string' && values.stage !== '' ? values.stage : undefined;
  let window: WindowPlanningStage | undefined;
  let objectValues = values;
  if (asked !== undefined) {
    const chosen = await resolveStage(target, values);
    if ('window' in chosen) {
      window = chosen;
      const upstream = chosen.description.stages[chosen.window.input.stage];
      // The inputs shown are those of the object stage the window reads, else the pipeline's only one.
      const { stage: _asked, ...rest } = values;
      objectValues = upstream?.kind === 'object' ? { ...rest, stage: chosen.window.input.stage } : rest;
    }
  }
  const stage = await objectStage(objectValues);
  if (!window) {
    const { description, from } = await readDescription(target, values);
    const daily = Object.entries(description.stages)
      .filter(([, s]) => s.kind === 'window' && s.partitions.kind === 'time' && s.partitions.grain === 'daily')
      .map(([name]) => name);
    if (daily.length > 1) {
      throw new StageKeyRuleUnknownError(
        `${from} has ${daily.length} daily window stages (${daily.join(', ')}): pass --stage NAME with the one the ` +
          "console's days view judges.",
      );
    }
    const only = daily[0];
    if (only !== undefined) {
      const chosen = await resolveStage(target, { ...values, stage: only });
      if ('window' in chosen) window = chosen;
    }
  }
  if (window?.reference) return { stage };
  if (!window)
    return stage.reference ? { stage } : { stage, judge: { kind: 'inputs', stage: stage.name, from: stage.from } };
  const { partitions } = window.window;
  if (partitions.kind !== 'time' || partitions.grain !== 'daily') {
    const grain = partitions.kind === 'time' ? partitions.grain : partitions.kind;
    throw new StageKeyRuleUnknownError(
      `--stage ${window.name}: the console's days view judges a daily window stage, and "${window.name}" of ` +
        `${window.from} is ${grain}. See its windows with rerun status --stage ${window.name}.`,
    );
  }
  const upstreamInputs = windowStageInputRules(window, {
    inputBucket: target.inputBucket,
    failurePrefix: target.topology.failurePrefix,
  });
  return {
    stage,
    judge: {
      kind: 'window',
      stage: window.name,
      from: window.from,
      codeVersion: window.window.codeVersion,
      task: windowStageTask(window, target),
      ...(upstreamInputs ? { upstreamInputs } : {}),
    },
  };
}
