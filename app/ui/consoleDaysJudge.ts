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
import { type StageInputLayout, stageInputLayout } from './stageInputLayout.js';

/**
 * How the console's days view judges each day of the pipeline it runs on:
 * - `window`: a user's window stage, by the library's window judge (as `rerun status --stage`): its
 *   windows of any time grain (the hours of the days shown, or the months they fall in);
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
      /** How its inputs group into days, by its own described partitions (stageInputLayout). */
      readonly layout: StageInputLayout;
    };

/**
 * The stage the console's days view judges, from the pipeline the target runs: `--stage NAME` when
 * it names a window stage (of any time grain: hourly, daily, weekly, monthly), else the description's only
 * window stage of daily grain, or with none, its only window stage partitioned by time. Undefined for
 * rerun's own reference pipeline (its summary, as today). A user's pipeline with no such window stage
 * gives `inputs`; one with several asks for `--stage`.
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
    const timed = Object.entries(description.stages).filter(
      ([, s]) => s.kind === 'window' && s.partitions.kind === 'time',
    );
    const daily = timed.filter(
      ([, s]) => s.kind === 'window' && 'grain' in s.partitions && s.partitions.grain === 'daily',
    );
    // The only daily window stage, else the only one of another grain.
    const candidates = (daily.length > 0 ? daily : timed).map(([name]) => name);
    if (candidates.length > 1) {
      throw new StageKeyRuleUnknownError(
        `${from} has ${candidates.length} ${daily.length > 0 ? 'daily ' : ''}window stages (${candidates.join(', ')}): ` +
          "pass --stage NAME with the one the console's days view judges.",
      );
    }
    const only = candidates[0];
    if (only !== undefined) {
      const chosen = await resolveStage(target, { ...values, stage: only });
      if ('window' in chosen) window = chosen;
    }
  }
  if (window?.reference) return { stage };
  if (!window) {
    if (stage.reference) return { stage };
    const described = stage.description.stages[stage.name];
    const partitions = described?.kind === 'object' ? described.partitions : undefined;
    const layout = stageInputLayout(stage.name, stage.inputPrefix, partitions);
    return { stage, judge: { kind: 'inputs', stage: stage.name, from: stage.from, layout } };
  }
  const { partitions } = window.window;
  if (partitions.kind !== 'time') {
    throw new StageKeyRuleUnknownError(
      `--stage ${window.name}: the console's days view judges a window stage partitioned by time, and ` +
        `"${window.name}" of ${window.from} has ${partitions.kind} partitions. See its windows with rerun status ` +
        `--stage ${window.name}.`,
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
