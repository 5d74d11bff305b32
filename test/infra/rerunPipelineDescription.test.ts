import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { StackOutput } from '../../app/stackOutputs.js';
import { StackConfigurationInvalidError } from '../../src/cdk/errors.js';
import { MAX_OUTPUT_VALUE_BYTES, PIPELINE_DESCRIPTION_STACK_OUTPUTS } from '../../src/cdk/publishedPipeline.js';
import { RerunPipeline } from '../../src/cdk/RerunPipeline.js';
import type { RerunPipelineProps } from '../../src/cdk/RerunPipelineProps.js';
import { referenceWorkerIn } from '../../src/cdk/referenceWorker.js';
import { normalizeStage } from '../../src/normalize/normalizeStage.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { PipelineDescriptionError } from '../../src/pipeline/PipelineDescriptionError.js';
import { parsePipelineDescription } from '../../src/pipeline/parsePipelineDescription.js';

const prebuilt = {
  code: Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });'),
  handler: 'index.handler',
};

/** The README's user pipeline: `upper/{bucket}/{key without incoming/}`. */
const uploads = definePipeline({
  name: 'uploads',
  stages: {
    upper: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
      codeVersion: 'upper@1',
    },
  },
});

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

function synth(props: Partial<RerunPipelineProps>): Template {
  const outdir = mkdtempSync(join(tmpdir(), 'rerun-describe-test-'));
  outdirs.push(outdir);
  const stack = new Stack(new App({ outdir }), 'Uploads');
  new RerunPipeline(stack, 'Pipeline', { worker: prebuilt, outputs: true, ...props });
  return Template.fromStack(stack);
}

/** The PipelineDescription output's value, parsed as the tools parse it. */
function publishedDescription(template: Template) {
  const value = template.toJSON().Outputs?.[PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION]?.Value;
  expect(typeof value).toBe('string');
  return parsePipelineDescription(JSON.parse(value as string));
}

describe('RerunPipeline publishes its pipeline description (outputs: true)', () => {
  it('writes the description and the stage as stack outputs the tools read with --stack alone', () => {
    const template = synth({ pipeline: uploads, outputPrefixes: ['upper/'] });
    template.hasOutput(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION, {
      Value: JSON.stringify({ version: 1, ...uploads }),
    });
    template.hasOutput(PIPELINE_DESCRIPTION_STACK_OUTPUTS.STAGE, { Value: 'upper' });
    expect(publishedDescription(template).stages.upper).toEqual(uploads.stages.upper);
  });

  it('takes the input prefix and the output prefixes from the stage when the props leave them out', () => {
    const template = synth({
      pipeline: definePipeline({
        name: 'p',
        stages: {
          up: { kind: 'object', input: { prefix: 'uploads/' }, outputKey: { prefix: 'up/', stripPrefix: 'uploads/' } },
        },
      }),
    });
    const notification = template.findResources('Custom::S3BucketNotifications');
    expect(JSON.stringify(notification)).toContain('"Value":"uploads/"');
    template.hasOutput(PIPELINE_DESCRIPTION_STACK_OUTPUTS.STAGE, { Value: 'up' });
  });

  it('publishes the key rule alone (outputKey) as a one-stage description named after the worker', () => {
    const template = synth({
      outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
      outputPrefixes: ['upper/'],
      workerName: 'upper',
    });
    expect(publishedDescription(template)).toEqual({
      version: 1,
      name: 'Uploads',
      stages: {
        upper: {
          kind: 'object',
          input: { prefix: 'incoming/' },
          outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
        },
      },
    });
  });

  it("publishes referenceWorker('normalize')'s own stage: the normalizer's key rule and quarantine", () => {
    const dir = mkdtempSync(join(tmpdir(), 'rerun-describe-workers-'));
    outdirs.push(dir);
    mkdirSync(join(dir, 'normalize'));
    writeFileSync(
      join(dir, 'normalize', 'index.mjs'),
      'export const handler = async () => ({ batchItemFailures: [] });',
    );
    const template = synth({ worker: referenceWorkerIn(dir, 'normalize') });
    expect(publishedDescription(template).stages.normalize).toEqual(normalizeStage());
  });

  it('publishes nothing for a worker whose key rule nobody gave: the tools will refuse, not guess', () => {
    const template = synth({ outputPrefixes: ['upper/'] });
    expect(Object.keys(template.toJSON().Outputs ?? {})).not.toContain(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION);
  });

  it('refuses at synth a description that does not parse, naming the field', () => {
    const broken = {
      name: 'uploads',
      stages: { upper: { kind: 'object', input: { prefix: 'incoming/' }, outputKey: { prefix: 'upper' } } },
    } as never;
    expect(() => synth({ pipeline: broken })).toThrow(PipelineDescriptionError);
    expect(() => synth({ pipeline: broken })).toThrow(
      /^stages\.upper\.outputKey\.prefix: must be a key prefix ending with "\/"/,
    );
  });

  it('refuses a stage name that does not exist, with the nearest one', () => {
    expect(() => synth({ pipeline: uploads, stage: 'uper' })).toThrow(
      /stage: the pipeline has no stage named "uper"; did you mean "upper"\?/,
    );
  });

  it('refuses a key rule outside outputPrefixes, and an inputPrefix the stage contradicts', () => {
    expect(() => synth({ pipeline: uploads, outputPrefixes: ['lower/'] })).toThrow(
      /stage "upper" writes under upper\/, outside outputPrefixes \(lower\/\)/,
    );
    expect(() => synth({ pipeline: uploads, inputPrefix: 'other/' })).toThrow(
      /inputPrefix "other\/" is not the input prefix "incoming\/" of stage "upper"/,
    );
  });

  it('refuses at synth a description longer than a CloudFormation output value holds', () => {
    const stages = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `stage${i}`,
        {
          kind: 'object' as const,
          input: { prefix: `incoming/${'x'.repeat(60)}/` },
          outputKey: { prefix: `out${i}/` },
        },
      ]),
    );
    const big = definePipeline({ name: 'big', stages });
    expect(JSON.stringify(big).length).toBeGreaterThan(MAX_OUTPUT_VALUE_BYTES);
    let caught: unknown;
    try {
      synth({ pipeline: big, stage: 'stage0' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StackConfigurationInvalidError);
    expect((caught as Error).message).toMatch(
      /the pipeline description is \d+ bytes as JSON, and a CloudFormation output value holds at most 4096/,
    );
  });

  it("the outputs' names are the CLI's (app/stackOutputs.ts)", () => {
    expect(StackOutput.PIPELINE_DESCRIPTION).toBe(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION);
    expect(StackOutput.PIPELINE_STAGE).toBe(PIPELINE_DESCRIPTION_STACK_OUTPUTS.STAGE);
  });
});
