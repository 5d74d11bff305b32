/**
 * The user's three-stage pipeline of issue 31, in plain JavaScript, as the files of a scratch
 * project that installs the packed tarball (test/support/packedProject.ts). An object stage `clean`
 * with its own key rule (clean/{bucket}/{key without incoming/}.lines) over uploads keyed
 * year=/month=/day=/hour=/, an `hourly` window stage over its outputs and a `daily` one over the
 * hourly. One source for both places it runs: under `rerun dev` (test/e2e/userPipelinePacked.test.ts)
 * and deployed by its CDK app (`app.mjs`) to MiniStack (test/deployed/userPipelinePacked.test.ts).
 */

/** The stack `app.mjs` defines. */
export const CLICKS_STACK = 'Clicks';

/** `pipeline.mjs`: the three stages as data (the object stage's key rule is the user's own). */
export const PIPELINE = `import { definePipeline } from 'rerun-pipeline/pipeline';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' };
const DAILY = { kind: 'time', grain: 'daily', template: 'year={yyyy}/month={MM}/day={dd}' };

export const pipeline = definePipeline({
  name: 'clicks',
  stages: {
    clean: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'clean/', stripPrefix: 'incoming/', suffix: '.lines' },
      partitions: HOURLY,
      codeVersion: 'clean@1',
    },
    hourly: {
      kind: 'window',
      input: { stage: 'clean' },
      partitions: HOURLY,
      outputPrefix: 'hourly/',
      fileName: 'count.json',
      codeVersion: 'hourly@1',
    },
    daily: {
      kind: 'window',
      input: { stage: 'hourly' },
      partitions: DAILY,
      outputPrefix: 'daily/',
      fileName: 'total.json',
      codeVersion: 'daily@1',
    },
  },
});
`;

/** `worker.mjs`, the object stage: upper-cases each line; an input holding POISON is a bug it throws on. */
export const WORKER = `import {
  createAwsClients,
  createSqsBatchHandler,
  defineWorker,
  requireEnv,
  S3FailureRecorder,
  S3ObjectStore,
} from 'rerun-pipeline';
import { pipeline } from './pipeline.mjs';

const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
const store = new S3ObjectStore(clients.s3);
const outputBucket = requireEnv('OUTPUT_BUCKET');
const stage = pipeline.stages.clean;

export const clean = defineWorker({
  name: 'clean',
  codeVersion: stage.codeVersion,
  outputBucket,
  outputPrefixes: ['clean/'],
  outputKey: stage.outputKey,
  async transform({ text }, { output }) {
    let chars = 0;
    for await (const chunk of text()) {
      if (chunk.includes('POISON')) throw new Error('clean: the input holds the POISON marker');
      chars += chunk.length;
      await output.write(chunk.toUpperCase());
    }
    return { chars };
  },
});

export const handler = createSqsBatchHandler({
  worker: clean,
  store,
  sqs: clients.sqs,
  failureRecorder: new S3FailureRecorder({ store, sqs: clients.sqs, bucket: outputBucket }),
});
`;

/** The hourly.mjs of the hourly window stage: each hour's files and line count over the object stage's outputs. */
export const HOURLY = `import { createAwsClients, requireEnv } from 'rerun-pipeline';
import { createWindowTaskHandler, defineWindowTask } from 'rerun-pipeline/window';
import { pipeline } from './pipeline.mjs';

const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
const outputBucket = requireEnv('OUTPUT_BUCKET');
const inputBucket = requireEnv('INPUT_BUCKETS');
const stage = pipeline.stages.hourly;

export const hourly = defineWindowTask({
  name: 'hourly',
  codeVersion: stage.codeVersion,
  partitions: stage.partitions,
  inputs: [{ name: 'clean', prefix: \`clean/\${inputBucket}/\`, partitions: pipeline.stages.clean.partitions }],
  output: { bucket: outputBucket, prefix: stage.outputPrefix, fileName: stage.fileName, contentType: 'application/json' },
  async build(inputs, writer, context) {
    const files = [];
    let lines = 0;
    for await (const input of inputs) {
      let text = '';
      for await (const chunk of input.body) text += chunk.toString();
      files.push(input.path);
      lines += text.split('\\n').filter((l) => l !== '').length;
    }
    writer.write(\`\${JSON.stringify({ hour: context.window.name, files, lines })}\\n\`);
    return { files: files.length, lines };
  },
});

export const handler = createWindowTaskHandler({ task: hourly, clients, stage: 'hourly' });
`;

/** `daily.mjs`, the daily window stage, chained onto the hourly one: a day's total over its 24 hours' outputs. */
export const DAILY = `import { createAwsClients } from 'rerun-pipeline';
import { createWindowTaskHandler, defineWindowTask } from 'rerun-pipeline/window';
import { hourly } from './hourly.mjs';
import { pipeline } from './pipeline.mjs';

const clients = createAwsClients({ endpoint: process.env.AWS_ENDPOINT_URL });
const stage = pipeline.stages.daily;

export const daily = defineWindowTask({
  name: 'daily',
  codeVersion: stage.codeVersion,
  partitions: stage.partitions,
  inputs: [{ name: 'hourly', outputsOf: hourly }],
  output: { bucket: hourly.definition.output.bucket, prefix: stage.outputPrefix, fileName: stage.fileName, contentType: 'application/json' },
  async build(inputs, writer, context) {
    let hours = 0;
    const busy = [];
    let lines = 0;
    for await (const input of inputs) {
      let text = '';
      for await (const chunk of input.body) text += chunk.toString();
      const hour = JSON.parse(text);
      hours += 1;
      if (hour.lines > 0) busy.push(hour.hour);
      lines += hour.lines;
    }
    writer.write(\`\${JSON.stringify({ day: context.window.name, hours, busy, lines })}\\n\`);
    return { hours, lines };
  },
});

export const handler = createWindowTaskHandler({ task: daily, clients, stage: 'daily' });
`;

/**
 * `app.mjs`, the user's CDK app: the object stage as a RerunPipeline and each window stage as a
 * RerunWindowStage over its output bucket, all from the installed `rerun-pipeline/cdk`. The window
 * tasks read INPUT_BUCKETS (the object stage's outputs are keyed by the input bucket), as under
 * `rerun dev`, which sets it itself.
 */
export const CDK_APP = `import { App, Stack } from 'aws-cdk-lib';
import { RerunPipeline, RerunWindowStage } from 'rerun-pipeline/cdk';
import { pipeline } from './pipeline.mjs';

const app = new App();
const stack = new Stack(app, '${CLICKS_STACK}');
const clicks = new RerunPipeline(stack, 'Pipeline', {
  worker: { entry: 'worker.mjs' },
  pipeline,
  stage: 'clean',
  outputPrefixes: ['clean/'],
  outputs: true,
});
const environment = { INPUT_BUCKETS: clicks.inputBucket.bucketName };
for (const [id, stage] of [['Hourly', 'hourly'], ['Daily', 'daily']]) {
  new RerunWindowStage(stack, id, {
    pipeline,
    stage,
    handler: { entry: \`\${stage}.mjs\` },
    bucket: clicks.outputBucket,
    environment,
    outputs: true,
  });
}
`;

/** The files of the pipeline, by name, for packAndInstall. */
export const CLICKS_FILES: Readonly<Record<string, string>> = {
  'pipeline.mjs': PIPELINE,
  'worker.mjs': WORKER,
  'hourly.mjs': HOURLY,
  'daily.mjs': DAILY,
};

/** What the workers import besides the package: the SDK clients it declares as peers. */
export const CLICKS_DEPENDENCIES: readonly string[] = [
  '@aws-sdk/client-s3',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-dynamodb',
];

/**
 * What deploying and operating it needs besides: the construct library and esbuild (which bundles
 * each `{ entry }`) for the CDK app, and the CloudFormation client `rerun --stack` reads the stack's
 * outputs with (an optional peer of the package).
 */
export const CLICKS_DEPLOYED_DEPENDENCIES: readonly string[] = [
  'aws-cdk-lib',
  'constructs',
  'esbuild',
  '@aws-sdk/client-cloudformation',
];
