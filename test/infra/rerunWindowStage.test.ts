import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StackConfigurationInvalidError } from '../../src/cdk/errors.js';
import { RerunPipeline } from '../../src/cdk/RerunPipeline.js';
import { RerunWindowStage, type RerunWindowStageProps } from '../../src/cdk/RerunWindowStage.js';
import type { TimeGrain } from '../../src/partitions/partitionSpec.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { parsePipelineDescription } from '../../src/pipeline/parsePipelineDescription.js';
import { actionsOf, type PolicyStatementJson, resourcesOf } from '../infra/support/iamPolicy.js';

const code = (body: string) => ({ code: Code.fromInline(body), handler: 'index.handler' });
const TEMPLATES: Record<TimeGrain, string> = {
  hourly: 'dt={yyyy}-{MM}-{dd}/hour={HH}',
  daily: 'dt={yyyy}-{MM}-{dd}',
  weekly: 'week={yyyy}-W{ww}',
  monthly: 'month={yyyy}-{MM}',
};

/** An object stage `upper` (incoming/ -> upper/) and a window stage `daily` over its outputs. */
function pipelineOf(grain: TimeGrain = 'daily', fileName: string | null = 'counts.json') {
  return definePipeline({
    name: 'uploads',
    stages: {
      upper: {
        kind: 'object',
        input: { prefix: 'incoming/' },
        outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
        codeVersion: 'upper@1',
      },
      daily: {
        kind: 'window',
        input: { stage: 'upper' },
        partitions: { kind: 'time', grain, template: TEMPLATES[grain] },
        outputPrefix: 'daily/',
        codeVersion: 'daily@1',
        ...(fileName !== null ? { fileName } : {}),
      },
    },
  });
}

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

function stackWith(props: Partial<RerunWindowStageProps> = {}, pipeline = pipelineOf()) {
  const outdir = mkdtempSync(join(tmpdir(), 'rerun-window-stage-test-'));
  outdirs.push(outdir);
  const app = new App({ outdir });
  const stack = new Stack(app, 'Consumer');
  const upload = new RerunPipeline(stack, 'Pipeline', {
    worker: { ...code('exports.handler = async () => ({ batchItemFailures: [] });'), outputPrefixes: ['upper/'] },
    pipeline,
    stage: 'upper',
    outputs: true,
  });
  const window = new RerunWindowStage(stack, 'Daily', {
    pipeline,
    stage: 'daily',
    handler: code('exports.handler = async () => ({ batchItemFailures: [] });'),
    bucket: upload.outputBucket,
    outputs: true,
    ...props,
  });
  return { app, stack, upload, window };
}

/** Every statement of the policies attached to `roleId`, with bucket ARNs rendered as `arn:aws:s3:::<id>`. */
function roleStatements(template: Template, roleId: string, bucketIds: ReadonlySet<string>) {
  const policies = template.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as PolicyStatementJson[])
    .map((s) => ({ actions: actionsOf(s).sort(), resources: resourcesOf(s, bucketIds).sort(), s }));
}

describe('RerunWindowStage beside a RerunPipeline', () => {
  let app: App;
  let stack: Stack;
  let template: Template;
  let window: RerunWindowStage;
  let outputBucketId: string;

  beforeAll(() => {
    ({ app, stack, window } = stackWith());
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    app.synth();
    template = Template.fromStack(stack);
    outputBucketId = Object.keys(template.findResources('AWS::S3::Bucket')).find((id) =>
      id.startsWith('PipelineOutput'),
    ) as string;
  }, 120_000);

  it('synthesizes with cdk-nag AwsSolutions clean, and no CDK warning', () => {
    const report = new AwsSolutionsChecks(app).validateScope(app);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath)}`)).toEqual(
      [],
    );
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('runs the handler from a FIFO work queue with a FIFO DLQ, one window per invocation, partial batch responses', () => {
    const queueId = stack.getLogicalId(window.queue.node.defaultChild as never);
    const dlqId = stack.getLogicalId(window.deadLetterQueue.node.defaultChild as never);
    template.hasResourceProperties('AWS::SQS::Queue', {
      FifoQueue: true,
      ContentBasedDeduplication: true,
      VisibilityTimeout: 5400,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 5 },
    });
    template.hasResourceProperties('AWS::SQS::Queue', { FifoQueue: true, MessageRetentionPeriod: 14 * 86_400 });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 900,
      Environment: {
        Variables: Match.objectLike({
          OUTPUT_BUCKET: { Ref: outputBucketId },
          FAILURE_PREFIX: 'failures/',
          WINDOW_STAGE: 'daily',
        }),
      },
    });
  });

  it("grants list+read of the input stage's prefix, read/write/delete of its own and the failures', nothing else", () => {
    const roleId = stack.getLogicalId(window.worker.role.node.defaultChild as never);
    const statements = roleStatements(template, roleId, new Set([outputBucketId]));
    const s3 = statements.filter((st) => st.actions.some((a) => a.startsWith('s3:')));
    const bucket = `arn:aws:s3:::${outputBucketId}`;
    const granted = s3.map(({ actions, resources }) => JSON.stringify({ actions, resources })).sort();
    expect(granted).toEqual(
      [
        { actions: ['s3:ListBucket'], resources: [bucket] },
        { actions: ['s3:GetObject'], resources: [`${bucket}/upper/*`] },
        { actions: ['s3:ListBucket'], resources: [bucket] },
        {
          actions: ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'],
          resources: [`${bucket}/daily/*`, `${bucket}/failures/*`],
        },
      ]
        .map((g) => JSON.stringify(g))
        .sort(),
    );
    // The listings stay under the prefixes.
    const listed = s3.filter((st) => st.actions.includes('s3:ListBucket')).map((st) => JSON.stringify(st.s.Condition));
    expect(listed.sort()).toEqual(
      [
        { StringLikeIfExists: { 's3:prefix': ['daily/*', 'failures/*'] } },
        { StringLikeIfExists: { 's3:prefix': ['upper/*'] } },
      ].map((c) => JSON.stringify(c)),
    );
    // No other service's action has a wildcard resource, and no action is a wildcard.
    for (const st of statements) {
      expect(st.actions.filter((a) => a.includes('*'))).toEqual([]);
      if (!st.actions.every((a) => a.startsWith('xray:'))) {
        expect(
          st.resources.filter((r) => r === '*'),
          JSON.stringify(st.actions),
        ).toEqual([]);
      }
    }
  });

  it('may send to its own work queue only: a window built from its parts goes on in a new message', () => {
    const roleId = stack.getLogicalId(window.worker.role.node.defaultChild as never);
    const queueId = stack.getLogicalId(window.queue.node.defaultChild as never);
    const sends = roleStatements(template, roleId, new Set([outputBucketId])).filter((st) =>
      st.actions.includes('sqs:SendMessage'),
    );
    expect(sends.map(({ actions, s: statement }) => ({ actions, resource: statement.Resource }))).toEqual([
      { actions: ['sqs:SendMessage'], resource: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    ]);
  });

  it("adds the stage's prefix to the bucket policy's conditional-write and -delete statements", () => {
    const policy = Object.values(template.findResources('AWS::S3::BucketPolicy')).find(
      (p) => p.Properties.Bucket.Ref === outputBucketId,
    );
    const statements = policy?.Properties.PolicyDocument.Statement as PolicyStatementJson[];
    const bucketIds = new Set([outputBucketId]);
    const bucket = `arn:aws:s3:::${outputBucketId}`;
    const overwrite = statements.find((st) => st.Sid === 'DenyPutWithoutIfNoneMatchOrIfMatch');
    const deletes = statements.find((st) => st.Sid === 'DenyDeleteWithoutIfMatch');
    expect(overwrite && resourcesOf(overwrite, bucketIds)).toEqual(
      expect.arrayContaining([`${bucket}/daily/*`, `${bucket}/failures/*`]),
    );
    expect(deletes && resourcesOf(deletes, bucketIds)).toEqual(expect.arrayContaining([`${bucket}/daily/*`]));
  });

  it("schedules the just-closed day's message at 00:15 UTC, with the event's time, to the stage's queue", () => {
    const queueId = stack.getLogicalId(window.queue.node.defaultChild as never);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(15 0 * * ? *)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [queueId, 'Arn'] },
          SqsParameters: { MessageGroupId: 'schedule-daily' },
          DeadLetterConfig: Match.anyValue(),
          InputTransformer: {
            InputPathsMap: { time: '$.time' },
            InputTemplate: '{"type":"rerun.window","version":1,"stage":"daily","window":"closed","at":<time>}',
          },
        }),
      ],
    });
  });

  it('publishes the queue URLs per stage, and the pipeline description with the stage and its fileName once', () => {
    const outputs = template.findOutputs('*');
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining(['DailyWindowQueueUrl', 'DailyWindowDeadLetterQueueUrl', 'PipelineDescription']),
    );
    const description = parsePipelineDescription(JSON.parse(outputs.PipelineDescription?.Value as string));
    expect(description.stages.daily).toMatchObject({ kind: 'window', outputPrefix: 'daily/', fileName: 'counts.json' });
  });
});

describe('RerunWindowStage: a schedule per grain, and what it refuses', () => {
  it.each([
    ['hourly', 'cron(15 * * * ? *)'],
    ['daily', 'cron(15 0 * * ? *)'],
    ['weekly', 'cron(15 0 ? * MON *)'],
    ['monthly', 'cron(15 0 1 * ? *)'],
  ] as const)('a %s stage fires once per window, just after it closes (%s)', (grain, expression) => {
    const { stack } = stackWith({}, pipelineOf(grain));
    Template.fromStack(stack).hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: expression });
  });

  it('takes the schedule time, or none', () => {
    const at = Template.fromStack(stackWith({ schedule: { hourUtc: 2, minuteUtc: 30 } }).stack);
    at.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(30 2 * * ? *)' });
    const none = Template.fromStack(stackWith({ schedule: false }).stack);
    none.resourceCountIs('AWS::Events::Rule', 0);
  });

  it('refuses, by name, a stage that is missing, an object stage, one without fileName, and a bad time', () => {
    expect(() => stackWith({ stage: 'dialy' })).toThrow(/no stage named "dialy"/);
    expect(() => stackWith({ stage: 'upper' })).toThrow(/"upper" is an object stage/);
    expect(() => stackWith({}, pipelineOf('daily', null))).toThrow(/declares no fileName/);
    expect(() => stackWith({ schedule: { minuteUtc: 60 } })).toThrow(StackConfigurationInvalidError);
  });
});

describe('RerunWindowStage and RerunPipeline with outputs: true, in either order', () => {
  const worker = { ...code('exports.handler = async () => ({ batchItemFailures: [] });'), outputPrefixes: ['upper/'] };
  const handler = code('exports.handler = async () => ({ batchItemFailures: [] });');
  /** A stack whose window stage is created before the pipeline, on a bucket given to both. */
  function windowFirst(pipelineProp = pipelineOf()) {
    const outdir = mkdtempSync(join(tmpdir(), 'rerun-window-stage-test-'));
    outdirs.push(outdir);
    const stack = new Stack(new App({ outdir }), 'Consumer');
    const bucket = new Bucket(stack, 'Outputs');
    new RerunWindowStage(stack, 'Daily', { pipeline: pipelineOf(), stage: 'daily', handler, bucket, outputs: true });
    new RerunPipeline(stack, 'Pipeline', {
      worker,
      pipeline: pipelineProp,
      stage: 'upper',
      existingOutputBucketObj: bucket,
      outputs: true,
    });
    return stack;
  }

  it.each([
    ['the pipeline first', () => stackWith().stack],
    ['the window stage first', () => windowFirst()],
  ])('with %s: one PipelineDescription (with both stages), the PipelineStage and the window queues', (_, build) => {
    const outputs = Template.fromStack(build()).findOutputs('*');
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'PipelineDescription',
        'PipelineStage',
        'QueueUrl',
        'DeadLetterQueueUrl',
        'DailyWindowQueueUrl',
        'DailyWindowDeadLetterQueueUrl',
      ]),
    );
    const description = parsePipelineDescription(JSON.parse(outputs.PipelineDescription?.Value as string));
    expect(Object.keys(description.stages)).toEqual(['upper', 'daily']);
    expect(outputs.PipelineStage?.Value).toBe('upper');
  });

  it('refuses another pipeline in either order, before the second construct joins the tree', () => {
    const other = pipelineOf('hourly');
    expect(() => stackWith({ pipeline: other })).toThrow(/already publishes another pipeline description/);
    let stack: Stack | undefined;
    expect(() => {
      stack = windowFirst(other);
    }).toThrow(/already publishes another pipeline description .*same pipeline as its RerunWindowStage/);
    expect(stack).toBeUndefined();
  });
});
