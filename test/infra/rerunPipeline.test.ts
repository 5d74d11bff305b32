import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Code, Tracing } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StackOutput } from '../../app/stackOutputs.js';
import { topology } from '../../app/topology.js';
import { projectRoot } from '../../infra/paths.js';
import { CheckovCheck } from '../../src/cdk/checkovAcknowledgements.js';
import { requireConditionalWrites } from '../../src/cdk/conditionalWritePolicy.js';
import { StackConfigurationInvalidError } from '../../src/cdk/errors.js';
import { PIPELINE_DEFAULT_PREFIXES } from '../../src/cdk/pipelinePlan.js';
import { PIPELINE_STACK_OUTPUTS } from '../../src/cdk/pipelineStackOutputs.js';
import { RerunPipeline } from '../../src/cdk/RerunPipeline.js';
import type { RerunPipelineProps } from '../../src/cdk/RerunPipelineProps.js';
import { NORMALIZE_OUTPUT_PREFIXES } from '../../src/cdk/referenceWorker.js';
import { NORMALIZE_PREFIXES } from '../../src/normalize/normalizeWorker.js';
import {
  maxInputBytesFor,
  NORMALIZE_MIB_PER_CPU_SECOND,
  planningMibPerCpuSecond,
  sizeWorker,
} from '../../src/sizing/sizeWorker.js';

const plainWorker = join(projectRoot, 'test', 'infra', 'fixtures', 'plainWorker.mjs');
// Prebuilt code: no bundling, so the tests of single props stay quick. It declares where it writes,
// as referenceWorker('normalize') does.
const prebuilt = {
  code: Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });'),
  handler: 'index.handler',
  outputPrefixes: ['normalized/', 'quarantine/'],
};

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh app as a user's (no cdk.json context), with one stack holding the pipeline. */
function pipelineStack(props: Partial<RerunPipelineProps> = {}, setup?: (stack: Stack) => Partial<RerunPipelineProps>) {
  const outdir = mkdtempSync(join(tmpdir(), 'rerun-pipeline-test-'));
  outdirs.push(outdir);
  const app = new App({ outdir });
  const stack = new Stack(app, 'Consumer');
  const pipeline = new RerunPipeline(stack, 'Pipeline', { worker: prebuilt, ...props, ...setup?.(stack) });
  return { app, stack, pipeline, template: Template.fromStack(stack) };
}

/** The worker function's logical id. */
const workerLogicalId = (stack: Stack, pipeline: RerunPipeline): string =>
  stack.getLogicalId(pipeline.workerFunction.node.defaultChild as CfnElement);

const fnEnv = (template: Template): Record<string, unknown> => {
  const fns = template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } });
  const [fn] = Object.values(fns) as { Properties: { Environment: { Variables: Record<string, unknown> } } }[];
  return fn?.Properties.Environment.Variables ?? {};
};

describe('RerunPipeline: the minimal call in a fresh CDK app', () => {
  let app: App;
  let stack: Stack;
  let template: Template;
  let pipeline: RerunPipeline;

  beforeAll(() => {
    const outdir = mkdtempSync(join(tmpdir(), 'rerun-pipeline-test-'));
    outdirs.push(outdir);
    app = new App({ outdir });
    stack = new Stack(app, 'Consumer');
    // The README's call: the worker's entry and the prefixes it writes under.
    pipeline = new RerunPipeline(stack, 'Pipeline', {
      worker: { entry: plainWorker },
      outputPrefixes: ['upper/'],
      outputs: true,
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    app.synth();
    template = Template.fromStack(stack);
  }, 120_000);

  it('synthesizes with cdk-nag AwsSolutions clean, and no CDK warning', () => {
    const report = new AwsSolutionsChecks(app).validateScope(app);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath)}`)).toEqual(
      [],
    );
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('bundles the entry as ESM with the AWS SDK inside, on Node.js 24 ARM64, traced', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogFormat: 'JSON' },
    });
  });

  it('sizes the function for 1 GiB inputs and tells the worker its limit (MAX_INPUT_BYTES)', () => {
    const sized = sizeWorker({
      maxInputBytes: 1024 ** 3,
      mibPerCpuSecond: NORMALIZE_MIB_PER_CPU_SECOND,
      minMemoryMiB: 512,
    });
    const limit = maxInputBytesFor({ ...sized, mibPerCpuSecond: NORMALIZE_MIB_PER_CPU_SECOND });
    expect(limit).toBeGreaterThanOrEqual(1024 ** 3);
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: sized.memoryMiB,
      Timeout: sized.timeoutSeconds,
      Environment: { Variables: Match.objectLike({ MAX_INPUT_BYTES: String(limit) }) },
    });
    expect(pipeline.maxInputBytes).toBe(limit);
    // SQS visibility 6 x the function timeout (AWS's advice), five receives before the DLQ.
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 6 * sized.timeoutSeconds,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 5 }),
    });
  });

  it('retains both queues, with generated names, encrypted', () => {
    const queues = template.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(2);
    for (const q of Object.values(queues)) {
      expect(q.DeletionPolicy).toBe('Retain');
      expect(q.UpdateReplacePolicy).toBe('Retain');
      expect(q.Properties.QueueName).toBeUndefined();
      expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    }
  });

  it('creates input, output and access-log buckets, retained', () => {
    template.resourceCountIs('AWS::S3::Bucket', 3);
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ LoggingConfiguration: Match.anyValue() }),
    });
  });

  it('creates no ledger table, no LEDGER_TABLE and no DynamoDB grant: its worker uses no ledger', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    expect(pipeline.ledgerTable).toBeUndefined();
    const variables = template.toJSON().Resources[workerLogicalId(stack, pipeline)].Properties.Environment.Variables;
    expect(variables).toHaveProperty('OUTPUT_BUCKET');
    expect(variables).not.toHaveProperty('LEDGER_TABLE');
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toMatch(/dynamodb:/);
  });

  it('versions the input bucket (every write sends its own event), expiring replaced versions after a day; not the others', () => {
    const buckets = template.findResources('AWS::S3::Bucket') as Record<
      string,
      { Properties: { VersioningConfiguration?: { Status: string }; LifecycleConfiguration?: { Rules: unknown[] } } }
    >;
    const versioned = Object.entries(buckets).filter(
      ([, b]) => b.Properties.VersioningConfiguration?.Status === 'Enabled',
    );
    expect(versioned.map(([id]) => id)).toEqual([expect.stringMatching(/^PipelineInput/)]);
    expect(versioned[0]?.[1].Properties.LifecycleConfiguration?.Rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Id: 'expire-noncurrent-versions',
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        }),
        expect.objectContaining({ Id: 'remove-expired-delete-markers', ExpiredObjectDeleteMarker: true }),
        expect.objectContaining({ Id: 'abort-incomplete-multipart-uploads' }),
      ]),
    );
  });

  it("sends uploads and deletes under 'incoming/' to the queue", () => {
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        QueueConfigurations: Match.arrayWith([
          Match.objectLike({
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'incoming/' }] } },
          }),
          Match.objectLike({ Events: ['s3:ObjectRemoved:*'] }),
        ]),
      },
    });
  });

  it('lets S3 send to the queue only for the input bucket of this account (aws:SourceAccount)', () => {
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 's3.amazonaws.com' },
            Action: Match.arrayWith(['sqs:SendMessage']),
            Condition: {
              ArnLike: { 'aws:SourceArn': Match.anyValue() },
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            },
          }),
        ]),
      },
    });
  });

  it('denies blind overwrites and deletes under the output prefixes', () => {
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Sid: 'DenyPutWithoutIfNoneMatchOrIfMatch', Effect: 'Deny' }),
          Match.objectLike({ Sid: 'DenyDeleteWithoutIfMatch', Effect: 'Deny' }),
        ]),
      },
    });
  });

  it('sends every alarm to an encrypted, TLS-only topic of its own', () => {
    const topics = template.findResources('AWS::SNS::Topic');
    const [topicId] = Object.keys(topics);
    expect(topicId).toBeDefined();
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    const alarms = template.findResources('AWS::CloudWatch::Alarm');
    // DLQ depth, oldest message, Lambda errors, throttles, duration near the timeout.
    expect(Object.keys(alarms)).toHaveLength(5);
    for (const alarm of Object.values(alarms)) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
    }
    expect(pipeline.alarms).toHaveLength(5);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    expect(pipeline.dashboard).toBeDefined();
  });

  it('exposes every resource as a public field', () => {
    for (const field of [
      'inputBucket',
      'outputBucket',
      'accessLogsBucket',
      'queue',
      'deadLetterQueue',
      'workerFunction',
      'alarmTopic',
      'worker',
      'workerRole',
      'logGroup',
    ] as const) {
      expect(pipeline[field], field).toBeDefined();
    }
  });
});

describe('RerunPipeline props', () => {
  it("defaults to the reference normalizer's input prefix; referenceWorker('normalize') declares its output prefixes", () => {
    expect(PIPELINE_DEFAULT_PREFIXES).toEqual({ inputPrefix: NORMALIZE_PREFIXES.inputPrefix });
    expect(NORMALIZE_OUTPUT_PREFIXES).toEqual([NORMALIZE_PREFIXES.outputPrefix, NORMALIZE_PREFIXES.quarantinePrefix]);
  });

  it('tells the worker its failurePrefix (FAILURE_PREFIX), where its grant lets it write its failure records', () => {
    expect(fnEnv(pipelineStack().template).FAILURE_PREFIX).toBe('failures/');
    const { template } = pipelineStack({ failurePrefix: 'ops/failures/' });
    expect(fnEnv(template).FAILURE_PREFIX).toBe('ops/failures/');
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).toContain('ops/failures/');
  });

  it('tells the worker CODE_VERSION_PREFIX, the prefix the tools list, and grants it a PutObject there and nothing else', () => {
    const { template } = pipelineStack({ outputPrefixes: ['upper/'] });
    expect(fnEnv(template).CODE_VERSION_PREFIX).toBe('code-versions/');
    expect(fnEnv(template).CODE_VERSION_PREFIX).toBe(topology.codeVersionPrefix);
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) =>
        p.Properties.PolicyDocument.Statement as {
          Action: string | string[];
          Resource: unknown;
          Condition?: unknown;
        }[],
    );
    const onMarkers = statements.filter((st) => JSON.stringify(st).includes('code-versions/'));
    // The grant of the put's API (its multipart abort with it, as every prefix grant); no read, list or delete.
    expect(onMarkers.map((st) => st.Action)).toEqual([['s3:PutObject', 's3:AbortMultipartUpload']]);
    // Only a conditional write, by the bucket policy's deny of a blind one.
    const denies = Object.values(template.findResources('AWS::S3::BucketPolicy')).flatMap(
      (p) => p.Properties.PolicyDocument.Statement as { Effect: string; Action: unknown; Resource: unknown }[],
    );
    const blindPutDenied = denies.filter(
      (st) => st.Effect === 'Deny' && JSON.stringify(st.Action).includes('s3:PutObject'),
    );
    expect(JSON.stringify(blindPutDenied.map((st) => st.Resource))).toContain('/code-versions/*');
  });

  it('grants the prefixes the worker source declares, or the outputPrefixes prop over them, and no other', () => {
    const writes = (template: Template) =>
      JSON.stringify(
        Object.values(template.findResources('AWS::IAM::Policy')).map((p) => p.Properties.PolicyDocument.Statement),
      );
    const declared = writes(pipelineStack().template);
    expect(declared).toContain('/normalized/*');
    expect(declared).toContain('/quarantine/*');
    const given = writes(pipelineStack({ outputPrefixes: ['upper/'] }).template);
    expect(given).toContain('/upper/*');
    expect(given).not.toContain('/normalized/*');
    expect(given).not.toContain('/quarantine/*');
  });

  it('derives memory and timeout from maxInputBytes, and passes the declared limit', () => {
    const maxInputBytes = 8 * 1024 ** 3;
    const sized = sizeWorker({ maxInputBytes, mibPerCpuSecond: NORMALIZE_MIB_PER_CPU_SECOND, minMemoryMiB: 512 });
    const { template } = pipelineStack({ maxInputBytes });
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: sized.memoryMiB,
      Timeout: sized.timeoutSeconds,
      Environment: { Variables: Match.objectLike({ MAX_INPUT_BYTES: String(maxInputBytes) }) },
    });
    expect(sized.memoryMiB).toBeGreaterThan(512);
  });

  it('takes memory and timeout from functionProps over the sizing, and derives the limit from them', () => {
    const { template } = pipelineStack({ functionProps: { memorySize: 1024, timeout: Duration.seconds(300) } });
    const limit = maxInputBytesFor({
      memoryMiB: 1024,
      timeoutSeconds: 300,
      mibPerCpuSecond: NORMALIZE_MIB_PER_CPU_SECOND,
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 1024,
      Timeout: 300,
      Environment: { Variables: Match.objectLike({ MAX_INPUT_BYTES: String(limit) }) },
    });
    template.hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 1800 });
  });

  it("plans with the declared formats' figure: an NDJSON-only pipeline accepts larger inputs at the same memory and timeout", () => {
    const settings = { memorySize: 512, timeout: Duration.seconds(60) };
    const { template } = pipelineStack({ inputFormats: ['ndjson'], functionProps: settings });
    const ndjson = maxInputBytesFor({
      memoryMiB: 512,
      timeoutSeconds: 60,
      mibPerCpuSecond: planningMibPerCpuSecond(['ndjson']),
    });
    const csv = maxInputBytesFor({ memoryMiB: 512, timeoutSeconds: 60, mibPerCpuSecond: NORMALIZE_MIB_PER_CPU_SECOND });
    expect(ndjson).toBeGreaterThan(csv);
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 512,
      Timeout: 60,
      Environment: { Variables: Match.objectLike({ MAX_INPUT_BYTES: String(ndjson) }) },
    });
    // Declaring CSV too plans with CSV's figure, the slower one.
    const both = pipelineStack({ inputFormats: ['ndjson', 'csv'], functionProps: settings });
    expect(both.pipeline.maxInputBytes).toBe(csv);
    // Sized from maxInputBytes, a 1 GiB NDJSON-only pipeline needs a shorter timeout than the default's.
    const sized = sizeWorker({
      maxInputBytes: 1024 ** 3,
      mibPerCpuSecond: planningMibPerCpuSecond(['ndjson']),
      minMemoryMiB: 512,
    });
    pipelineStack({ inputFormats: ['ndjson'] }).template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: sized.memoryMiB,
      Timeout: sized.timeoutSeconds,
    });
  });

  it('writes the stack outputs rerun --stack reads when asked (outputs: true), with the keys the CLI reads', () => {
    expect(PIPELINE_STACK_OUTPUTS).toEqual({
      INPUT_BUCKET: StackOutput.INPUT_BUCKET,
      OUTPUT_BUCKET: StackOutput.OUTPUT_BUCKET,
      QUEUE_URL: StackOutput.QUEUE_URL,
      DLQ_URL: StackOutput.DLQ_URL,
      ALARM_TOPIC_ARN: StackOutput.ALARM_TOPIC_ARN,
    });
    const outputs = pipelineStack({ outputs: true }).template.toJSON().Outputs ?? {};
    expect(Object.keys(outputs).sort()).toEqual(
      ['AlarmTopicArn', 'DeadLetterQueueUrl', 'InputBucketName', 'OutputBucketName', 'QueueUrl'].sort(),
    );
    expect(outputs.QueueUrl.Value).toEqual({ Ref: expect.stringMatching(/^PipelineWorkerQueue/) });
    expect(pipelineStack().template.toJSON().Outputs).toBeUndefined();
  });

  it('acknowledges the checkov checks it meets otherwise on each resource, with a reason, and only known ones', () => {
    const { template } = pipelineStack();
    const skips = Object.values(
      template.toJSON().Resources as Record<
        string,
        { Metadata?: { checkov?: { skip: { id: string; comment: string }[] } } }
      >,
    ).flatMap((r) => r.Metadata?.checkov?.skip ?? []);
    expect(skips.length).toBeGreaterThan(5);
    const known = new Set<string>(Object.values(CheckovCheck));
    for (const skip of skips) {
      expect(known.has(skip.id), skip.id).toBe(true);
      expect(skip.comment.length, skip.id).toBeGreaterThan(40);
    }
    // The concurrency check is met by default (reserved concurrency) and acknowledged only when opted out.
    const checkovIds = (p: Partial<RerunPipelineProps>) => {
      const { stack, pipeline } = pipelineStack(p);
      const worker = Template.fromStack(stack).toJSON().Resources[workerLogicalId(stack, pipeline)];
      return (worker?.Metadata?.checkov?.skip ?? []).map((s: { id: string }) => s.id);
    };
    expect(checkovIds({})).not.toContain(CheckovCheck.LAMBDA_CONCURRENCY);
    expect(checkovIds({})).toContain(CheckovCheck.LAMBDA_DLQ);
    expect(checkovIds({ reserveConcurrency: false })).toContain(CheckovCheck.LAMBDA_CONCURRENCY);
  });

  it("reserves the mapping's maximum concurrency by default, so other functions cannot starve the worker", () => {
    const reservedAndMaximum = (p: Partial<RerunPipelineProps>) => {
      const { stack, pipeline, template } = pipelineStack(p);
      const id = workerLogicalId(stack, pipeline);
      const reserved = template.toJSON().Resources[id].Properties.ReservedConcurrentExecutions;
      const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).filter(
        (m) => m.Properties.FunctionName.Ref === id,
      );
      expect(mappings).toHaveLength(1);
      return [reserved, mappings[0]?.Properties.ScalingConfig.MaximumConcurrency];
    };
    expect(reservedAndMaximum({})).toEqual([4, 4]);
    expect(reservedAndMaximum({ workerSettings: { maxConcurrency: 10 } })).toEqual([10, 10]);
    // More than the maximum when asked (room for invocations from elsewhere), never less (refused below).
    expect(reservedAndMaximum({ reservedConcurrentExecutions: 8 })).toEqual([8, 4]);
    expect(reservedAndMaximum({ reserveConcurrency: false })).toEqual([undefined, 4]);
  });

  it('warns at synth when opted out of reserved concurrency, and only then', () => {
    const warning = Match.stringLikeRegexp('reserves no concurrency \\(reserveConcurrency: false\\).*DLQ');
    expect(
      Annotations.fromStack(pipelineStack({ reserveConcurrency: false }).stack).findWarning('*', warning),
    ).toHaveLength(1);
    expect(Annotations.fromStack(pipelineStack().stack).findWarning('*', warning)).toHaveLength(0);
  });

  it('no dashboard when asked', () => {
    const { template, pipeline } = pipelineStack({ dashboard: false });
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(pipeline.dashboard).toBeUndefined();
  });

  it('turns tracing off when asked (and then needs no X-Ray grant)', () => {
    const { template, app } = pipelineStack({ tracing: Tracing.DISABLED });
    const fns = template.findResources('AWS::Lambda::Function', { Properties: { Handler: 'index.handler' } });
    expect(Object.values(fns)[0]?.Properties.TracingConfig).toBeUndefined();
    expect(Object.values(fns)[0]?.Properties.Environment.Variables.RERUN_TRACE_AWS_SDK).toBeUndefined();
    expect(JSON.stringify(template.toJSON())).not.toContain('xray:PutTraceSegments');
    expect(new AwsSolutionsChecks(app).validateScope(app).violations).toEqual([]);
  });

  it('creates the ledger for a worker that uses it (ledger: true): a retained table, LEDGER_TABLE, PutItem and UpdateItem only', () => {
    const { template, pipeline } = pipelineStack({ ledger: true });
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] }),
    });
    const [tableId] = Object.keys(template.findResources('AWS::DynamoDB::Table'));
    expect(pipeline.ledgerTable).toBeDefined();
    expect(fnEnv(template).LEDGER_TABLE).toEqual({ Ref: tableId });
    const dynamodb = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
      .filter((st) => JSON.stringify(st.Action).includes('dynamodb:'));
    expect(dynamodb).toHaveLength(1);
    expect(dynamodb[0]?.Action).toEqual(['dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(JSON.stringify(dynamodb[0]?.Resource)).toContain(tableId);
  });

  it('creates the ledger when a webhook needs it (the reference normalizer notifies through it)', () => {
    const { template } = pipelineStack({ webhook: { parameterName: '/team/webhook-url' } });
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    expect(fnEnv(template).LEDGER_TABLE).toBeDefined();
    // Without the webhook, the same worker gets none.
    pipelineStack().template.resourceCountIs('AWS::DynamoDB::Table', 0);
  });

  it('uses existing buckets, ledger and topic instead of creating them', () => {
    const { template, pipeline } = pipelineStack({}, (stack) => ({
      existingInputBucketObj: new Bucket(stack, 'MyInput'),
      existingOutputBucketObj: new Bucket(stack, 'MyOutput'),
      existingLedgerTableObj: Table.fromTableName(stack, 'MyLedger', 'my-ledger'),
      existingAlarmTopicObj: Topic.fromTopicArn(stack, 'Ops', 'arn:aws:sns:us-east-1:123456789012:ops'),
    }));
    template.resourceCountIs('AWS::S3::Bucket', 2);
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    template.resourceCountIs('AWS::SNS::Topic', 0);
    expect(pipeline.accessLogsBucket).toBeUndefined();
    expect(fnEnv(template).LEDGER_TABLE).toBe('my-ledger');
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.every((a) => JSON.stringify(a.Properties.AlarmActions).includes(':ops'))).toBe(true);
  });

  it('encrypts with the given KMS keys (buckets with an S3 Bucket Key, queue, ledger), cdk-nag clean and without warnings', () => {
    const { template, app, stack } = pipelineStack({}, (s) => ({
      inputBucketProps: { encryptionKey: new Key(s, 'InputKey', { enableKeyRotation: true }) },
      outputBucketProps: { encryptionKey: new Key(s, 'OutputKey', { enableKeyRotation: true }) },
      queueProps: { encryption: QueueEncryption.KMS },
      ledgerTableProps: { encryptionKey: new Key(s, 'LedgerKey', { enableKeyRotation: true }) },
    }));
    const sse = Object.values(template.findResources('AWS::S3::Bucket')).map(
      (b) => b.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0],
    );
    // Input and output under their keys; the access-log bucket stays SSE-S3 (log delivery needs it).
    expect(
      sse.filter((c) => c.ServerSideEncryptionByDefault.SSEAlgorithm === 'aws:kms' && c.BucketKeyEnabled),
    ).toHaveLength(2);
    expect(sse.filter((c) => c.ServerSideEncryptionByDefault.SSEAlgorithm === 'AES256')).toHaveLength(1);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: Match.anyValue() },
    });
    // S3 may use the work queue's key to put events into it.
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 's3.amazonaws.com' },
            Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
          }),
        ]),
      },
    });
    expect(new AwsSolutionsChecks(app).validateScope(app).violations).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it("warns when the work queue's KMS key policy is not ours to extend", () => {
    const { stack } = pipelineStack({
      queueProps: {
        encryption: QueueEncryption.KMS,
        encryptionMasterKey: Key.fromKeyArn(new Stack(), 'K', 'arn:aws:kms:us-east-1:123456789012:key/abc'),
      },
    });
    expect(
      Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('s3.amazonaws.com kms:GenerateDataKey')),
    ).toHaveLength(1);
  });

  it('warns when the output bucket policy is not ours to extend', () => {
    const { stack } = pipelineStack({}, (s) => ({
      existingOutputBucketObj: Bucket.fromBucketName(s, 'Imported', 'someone-elses-bucket'),
    }));
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('conditional-write'));
    expect(warnings).toHaveLength(1);
  });

  it('takes the webhook URL from Secrets Manager as a dynamic reference, never as text', () => {
    const { template } = pipelineStack({}, (stack) => ({
      webhook: { secret: Secret.fromSecretNameV2(stack, 'Hook', 'team/webhook'), jsonField: 'url' },
    }));
    expect(JSON.stringify(fnEnv(template).NOTIFY_URL)).toContain('{{resolve:secretsmanager:');
    expect(JSON.stringify(fnEnv(template).NOTIFY_URL)).toContain(':SecretString:url::');
    expect(template.toJSON().Parameters ?? {}).not.toHaveProperty('NotifyUrl');
  });

  it('takes the webhook URL from an SSM parameter as a dynamic reference', () => {
    const { template } = pipelineStack({ webhook: { parameterName: '/team/webhook-url' } });
    expect(fnEnv(template).NOTIFY_URL).toBe('{{resolve:ssm:/team/webhook-url}}');
  });

  it('sets no NOTIFY_URL without a webhook', () => {
    const { template } = pipelineStack();
    expect(fnEnv(template)).not.toHaveProperty('NOTIFY_URL');
  });

  it('merges the escape hatches over the defaults', () => {
    const { template } = pipelineStack({
      functionProps: { environment: { EXTRA: 'yes' }, description: 'mine' },
      queueProps: { retentionPeriod: Duration.days(2) },
      deadLetterQueueProps: { retentionPeriod: Duration.days(10) },
      inputPrefix: 'uploads/',
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'mine',
      Environment: { Variables: Match.objectLike({ EXTRA: 'yes', OUTPUT_BUCKET: Match.anyValue() }) },
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 2 * 86_400,
      RedrivePolicy: Match.anyValue(),
      SqsManagedSseEnabled: true,
    });
    template.hasResourceProperties('AWS::SQS::Queue', { MessageRetentionPeriod: 10 * 86_400 });
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        QueueConfigurations: Match.arrayWith([
          Match.objectLike({ Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'uploads/' }] } } }),
        ]),
      },
    });
  });
});

describe('RerunPipeline fails fast on contradictory props', () => {
  const refused = (props: (stack: Stack) => Partial<RerunPipelineProps>, message: RegExp) => {
    const stack = new Stack(new App(), 'Bad');
    let caught: unknown;
    try {
      new RerunPipeline(stack, 'Pipeline', { worker: prebuilt, ...props(stack) });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StackConfigurationInvalidError);
    expect((caught as Error).message).toMatch(message);
    // Nothing half-built is left in the tree.
    expect(stack.node.tryFindChild('Pipeline')).toBeUndefined();
  };

  it('an existing bucket and props to create one', () => {
    refused(
      (s) => ({ existingInputBucketObj: new Bucket(s, 'B'), inputBucketProps: {} }),
      /existingInputBucketObj and inputBucketProps contradict/,
    );
    refused(
      (s) => ({ existingOutputBucketObj: new Bucket(s, 'B'), outputBucketProps: {} }),
      /existingOutputBucketObj and outputBucketProps/,
    );
  });

  it('an existing ledger or topic and props to create one', () => {
    refused(
      (s) => ({ existingLedgerTableObj: Table.fromTableName(s, 'T', 't'), ledgerTableProps: {} }),
      /existingLedgerTableObj and ledgerTableProps/,
    );
    refused(
      (s) => ({ existingAlarmTopicObj: Topic.fromTopicArn(s, 'T', 'arn:aws:sns:us-east-1:1:t'), alarmTopicProps: {} }),
      /existingAlarmTopicObj and alarmTopicProps/,
    );
  });

  it('ledger: false with a webhook, an existing table or table settings', () => {
    refused(
      () => ({ ledger: false, webhook: { parameterName: '/hook' } }),
      /ledger: false contradicts webhook: the worker notifies the webhook once per output through the dedupe ledger/,
    );
    refused(
      (s) => ({ ledger: false, existingLedgerTableObj: Table.fromTableName(s, 'T', 't') }),
      /ledger: false contradicts existingLedgerTableObj/,
    );
    refused(() => ({ ledger: false, ledgerTableProps: {} }), /ledger: false contradicts ledgerTableProps/);
  });

  it('a worker that does not say where it writes (the README pipeline that got a 403 on every message)', () => {
    refused(
      () => ({ worker: { entry: plainWorker } }),
      /outputPrefixes: name the prefixes your worker writes its outputs under.*e\.g\. outputPrefixes: \['upper\/'\]/,
    );
    refused(() => ({ worker: { code: prebuilt.code, handler: 'index.handler' } }), /outputPrefixes: name the prefixes/);
    refused(() => ({ outputPrefixes: [] }), /outputPrefixes must name at least one prefix/);
  });

  it('a worker with both entry and code, or code without its handler', () => {
    refused(() => ({ worker: { ...prebuilt, entry: plainWorker } as never }), /either entry or code, not both/);
    refused(() => ({ worker: { code: prebuilt.code } as never, outputPrefixes: ['out/'] }), /code needs its handler/);
  });

  it('a webhook with both sources, or a plain NOTIFY_URL', () => {
    refused(
      (s) => ({ webhook: { secret: Secret.fromSecretNameV2(s, 'H', 'h'), parameterName: '/x' } as never }),
      /either secret or parameterName/,
    );
    refused(() => ({ environment: { NOTIFY_URL: 'https://example.com' } }), /never a plain value/);
  });

  it('a CODE_VERSION_PREFIX of its own in environment, which the worker could not write and the tools would not read', () => {
    refused(
      () => ({ environment: { CODE_VERSION_PREFIX: 'versions/' } }),
      /environment\.CODE_VERSION_PREFIX: RerunPipeline sets it to code-versions\//,
    );
  });

  it('a maxInputBytes the given memory and timeout cannot finish, or no Lambda can', () => {
    refused(
      () => ({ maxInputBytes: 4 * 1024 ** 3, functionProps: { memorySize: 256, timeout: Duration.seconds(60) } }),
      /maxInputBytes 4294967296 cannot finish at 256 MB and 60 s/,
    );
    refused(() => ({ maxInputBytes: 100 * 1024 ** 3 }), /cannot finish in one invocation/);
  });

  it('input formats that name none, an unknown one, or come with mibPerCpuSecond', () => {
    refused(() => ({ inputFormats: [] }), /inputFormats must name at least one of csv, ndjson/);
    refused(
      () => ({ inputFormats: ['parquet'] as never }),
      /inputFormats must name at least one of csv, ndjson \(got \["parquet"\]\)/,
    );
    refused(
      () => ({ inputFormats: ['ndjson'], mibPerCpuSecond: 80 }),
      /give mibPerCpuSecond or inputFormats, not both/,
    );
  });

  it('one bucket for input and output with overlapping prefixes (a trigger loop)', () => {
    refused((s) => {
      const bucket = new Bucket(s, 'One');
      return { existingInputBucketObj: bucket, existingOutputBucketObj: bucket, outputPrefixes: ['incoming/out/'] };
    }, /overlaps the input prefix incoming\//);
  });

  it("reserved concurrency below the mapping's maximum concurrency (Lambda would throttle it)", () => {
    refused(
      () => ({ reservedConcurrentExecutions: 2, workerSettings: { maxConcurrency: 4 } }),
      /reservedConcurrentExecutions \(2\) must be an integer of at least the mapping's maxConcurrency \(4\)/,
    );
  });

  it('reserveConcurrency: false with a reservedConcurrentExecutions', () => {
    refused(
      () => ({ reserveConcurrency: false, reservedConcurrentExecutions: 8 }),
      /reserveConcurrency: false contradicts reservedConcurrentExecutions/,
    );
  });

  it('queue settings the worker would refuse', () => {
    refused(() => ({ queueProps: { visibilityTimeout: Duration.seconds(30) } }), /visibilityTimeoutSeconds \(30\)/);
    refused(() => ({ queueProps: { fifo: true } }), /queueProps.fifo contradicts/);
  });
});

describe('requireConditionalWrites', () => {
  it('takes prefixes one by one and keeps one statement per bucket', () => {
    const stack = new Stack(new App(), 'Policy');
    const bucket = new Bucket(stack, 'B');
    const first = requireConditionalWrites(bucket, 'a/', 'b/');
    const second = requireConditionalWrites(bucket, ['c/']);
    expect(second).toBe(first);
    const template = Template.fromStack(stack);
    const policies = Object.values(template.findResources('AWS::S3::BucketPolicy'));
    const statements = (policies[0]?.Properties.PolicyDocument.Statement ?? []) as {
      Sid?: string;
      Resource: unknown;
    }[];
    const denies = statements.filter((s) => s.Sid === 'DenyPutWithoutIfNoneMatchOrIfMatch');
    expect(denies).toHaveLength(1);
    expect(JSON.stringify(denies[0]?.Resource)).toMatch(/\/a\/\*.*\/b\/\*.*\/c\/\*/);
  });
});
