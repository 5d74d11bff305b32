import { describe, expect, it } from 'vitest';
import type { OptionValues } from '../../app/common/command.js';
import { resolvePlanningStage, resolveStage, StageKeyRuleUnknownError } from '../../app/common/pipelineStage.js';
import type { PipelineTarget } from '../../app/common/pipelineTarget.js';
import { StackOutput } from '../../app/stackOutputs.js';
import { topology } from '../../app/topology.js';
import { PipelineDescriptionError } from '../../src/pipeline/PipelineDescriptionError.js';

/** A target as `--stack` resolves it, with these outputs (no request is made). */
function target(outputs: Record<string, string> | undefined): PipelineTarget {
  return {
    topology,
    inputBucket: 'in',
    outputBucket: 'out',
    ...(outputs ? { stack: { stackName: 'Uploads', outputs } } : {}),
  } as unknown as PipelineTarget;
}

const twoStages = {
  version: 1,
  name: 'p',
  stages: {
    a: { kind: 'object', input: { prefix: 'in/' }, outputKey: { prefix: 'a/', stripPrefix: 'in/' } },
    b: { kind: 'object', input: { prefix: 'other/' }, outputKey: { custom: true, prefix: 'b/' } },
    w: {
      kind: 'window',
      input: { stage: 'a' },
      partitions: { kind: 'time', grain: 'hourly', template: '{yyyy}/{MM}/{dd}/{HH}' },
      outputPrefix: 'w/',
      codeVersion: '1',
    },
  },
};

async function refusal(outputs: Record<string, string> | undefined, values: OptionValues = {}) {
  try {
    await resolvePlanningStage(target(outputs), values);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a refusal');
}

describe('resolvePlanningStage: the stage a tool plans, or a refusal that says why', () => {
  it('without --stack: the reference normalize stage, with its skip rules', async () => {
    const stage = await resolvePlanningStage(target(undefined), {});
    expect(stage).toMatchObject({ name: 'normalize', reference: true, inputPrefix: 'incoming/' });
  });

  it('an older reference stack (no description, the reference outputs): the reference stage', async () => {
    const stage = await resolvePlanningStage(target({ [StackOutput.SUMMARY_QUEUE_URL]: 'q' }), {});
    expect(stage.reference).toBe(true);
  });

  it('several stages and no --stage: refused, listing them', async () => {
    const error = await refusal({ [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(twoStages) });
    expect(error).toBeInstanceOf(StageKeyRuleUnknownError);
    expect(error.message).toMatch(/has 2 stages over the input bucket \(a, b\): pass --stage NAME/);
  });

  it('the published PipelineStage chooses the stage, and it is not the reference one', async () => {
    const stage = await resolvePlanningStage(
      target({ [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(twoStages), [StackOutput.PIPELINE_STAGE]: 'a' }),
      {},
    );
    expect(stage).toMatchObject({ name: 'a', reference: false, inputPrefix: 'in/', outputKey: { prefix: 'a/' } });
  });

  it('a custom key rule is refused, saying the tool cannot know its keys', async () => {
    const error = await refusal({ [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(twoStages) }, { stage: 'b' });
    expect(error.message).toMatch(
      /Stage "b" of the stack "Uploads" has a custom key rule .* rerun cannot know its output keys/,
    );
  });

  it('a window stage is refused: the command plans an object stage', async () => {
    const error = await refusal({ [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(twoStages) }, { stage: 'w' });
    expect(error.message).toMatch(/Stage "w" of the stack "Uploads" is a window stage/);
  });

  it('a published description that does not parse names the field and the output it came from', async () => {
    const broken = { ...twoStages, stages: { a: { ...twoStages.stages.a, input: { stage: 'x' } } } };
    const error = await refusal({ [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(broken) });
    expect(error).toBeInstanceOf(PipelineDescriptionError);
    expect(error.message).toBe(
      'stages.a.input.stage: no stage named "x" (in the PipelineDescription output of the stack "Uploads")',
    );
  });

  it("resolveStage: a user's window stage as described; rerun's own summary stage is the reference one", async () => {
    const user = await resolveStage(target({ [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(twoStages) }), {
      stage: 'w',
    });
    expect(user).toMatchObject({ name: 'w', reference: false, window: { kind: 'window', outputPrefix: 'w/' } });
    const summary = await resolveStage(target(undefined), { stage: 'summarize' });
    expect(summary).toMatchObject({ name: 'summarize', reference: true, window: { kind: 'window' } });
    // The same window over a stage with other rules is the user's, not the reference summary.
    const moved = structuredClone(twoStages) as unknown as { stages: Record<string, unknown> };
    moved.stages.w = { ...(summary as { window: object }).window, input: { stage: 'a' } };
    const other = await resolveStage(target({ [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(moved) }), {
      stage: 'w',
    });
    expect(other.reference).toBe(false);
  });
});
