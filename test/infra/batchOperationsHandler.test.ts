import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_OUTPUTS } from '../../app/reprocess/jobRunner.js';
import { BATCH_OPERATIONS_STACK_OUTPUTS } from '../../src/cdk/pipelineStackOutputs.js';
import { RerunPipeline } from '../../src/cdk/RerunPipeline.js';

const prebuilt = {
  code: Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });'),
  handler: 'index.handler',
  outputPrefixes: ['normalized/', 'quarantine/'],
};
const batchHandler = {
  code: Code.fromInline('exports.handler = async () => ({ results: [] });'),
  handler: 'index.batch',
};

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

type Statement = { Action: unknown; Effect: string; Resource: unknown; Condition?: unknown; Principal?: unknown };

describe('RerunPipeline with batchOperations: the handler function and the job role', () => {
  let app: App;
  let stack: Stack;
  let template: Template;
  let pipeline: RerunPipeline;
  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as never);

  beforeAll(() => {
    const outdir = mkdtempSync(join(tmpdir(), 'rerun-batch-ops-test-'));
    outdirs.push(outdir);
    app = new App({ outdir });
    stack = new Stack(app, 'Consumer');
    pipeline = new RerunPipeline(stack, 'Pipeline', {
      worker: prebuilt,
      batchOperations: { handler: batchHandler },
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

  it('trusts only S3 Batch Operations acting for this account (aws:SourceAccount)', () => {
    const role = pipeline.batchOperations?.jobRole;
    expect(role).toBeDefined();
    const resource = template.toJSON().Resources[logicalId(role as never)];
    expect(resource.Properties.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Action: 'sts:AssumeRole',
          Effect: 'Allow',
          Principal: { Service: 'batchoperations.s3.amazonaws.com' },
          Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
        },
      ],
    });
    expect(resource.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it("grants the job role exactly: read the manifests, invoke the one function, write the reports, the bucket's location", () => {
    const role = pipeline.batchOperations?.jobRole as never;
    const output = logicalId(pipeline.outputBucket as never);
    const fn = logicalId(pipeline.batchOperations?.function as never);
    const policies = Object.values(
      template.findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: logicalId(role) }] } }),
    ) as { Properties: { PolicyDocument: { Statement: Statement[] } } }[];
    expect(policies).toHaveLength(1);
    expect(policies[0]?.Properties.PolicyDocument.Statement).toEqual([
      {
        Action: ['s3:GetObject', 's3:GetObjectVersion'],
        Effect: 'Allow',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [output, 'Arn'] }, '/batch-operations/manifests/*']] },
      },
      { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { 'Fn::GetAtt': [fn, 'Arn'] } },
      {
        Action: 's3:PutObject',
        Effect: 'Allow',
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [output, 'Arn'] }, '/batch-operations/reports/*']] },
      },
      { Action: 's3:GetBucketLocation', Effect: 'Allow', Resource: { 'Fn::GetAtt': [output, 'Arn'] } },
    ]);
    // No other policy names the job role.
    const attached = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify((p as { Properties: { Roles: unknown } }).Properties.Roles).includes(logicalId(role)),
    );
    expect(attached).toHaveLength(1);
  });

  it('gives the handler the worker settings and prefix grants, no SQS, and its own log group', () => {
    const fn = pipeline.batchOperations?.function;
    const resource = template.toJSON().Resources[logicalId(fn as never)];
    const worker = template.toJSON().Resources[logicalId(pipeline.workerFunction as never)];
    expect(resource.Properties).toMatchObject({
      Handler: 'index.batch',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: worker.Properties.MemorySize,
      Timeout: worker.Properties.Timeout,
      Environment: {
        Variables: {
          OUTPUT_BUCKET: { Ref: logicalId(pipeline.outputBucket as never) },
          INPUT_BUCKETS: { Ref: logicalId(pipeline.inputBucket as never) },
          MAX_INPUT_BYTES: String(pipeline.maxInputBytes),
        },
      },
    });
    const execution = JSON.stringify(
      Object.values(
        template.findResources('AWS::IAM::Policy', {
          Properties: { Roles: [{ Ref: logicalId(pipeline.batchOperations?.role as never) }] },
        }),
      ),
    );
    expect(execution).toContain('/incoming/*');
    expect(execution).toContain('/normalized/*');
    expect(execution).toContain('/failures/*');
    expect(execution).not.toContain('sqs:');
    expect(execution).not.toContain('batch-operations/');
  });

  it('makes manifest writes create-only in the output bucket policy', () => {
    const policy = JSON.stringify(template.findResources('AWS::S3::BucketPolicy'));
    expect(policy).toContain('/batch-operations/manifests/*');
    expect(policy).not.toContain('/batch-operations/reports/*');
  });

  it('writes the function and role ARNs rerun reprocess --stack reads, under the keys the CLI reads', () => {
    expect(BATCH_OPERATIONS_STACK_OUTPUTS).toEqual(BATCH_OUTPUTS);
    const outputs = template.toJSON().Outputs ?? {};
    expect(outputs.BatchOperationsFunctionArn.Value).toEqual({
      'Fn::GetAtt': [logicalId(pipeline.batchOperations?.function as never), 'Arn'],
    });
    expect(outputs.BatchOperationsRoleArn.Value).toEqual({
      'Fn::GetAtt': [logicalId(pipeline.batchOperations?.jobRole as never), 'Arn'],
    });
  });

  it("on an SSE-KMS output bucket, lets the job role use the bucket's key through S3 only (manifest read, report write)", () => {
    const kms = new Stack(new App(), 'Kms');
    const key = new Key(kms, 'OutputKey', { enableKeyRotation: true });
    const encrypted = new RerunPipeline(kms, 'Pipeline', {
      worker: prebuilt,
      outputBucketProps: { encryptionKey: key },
      batchOperations: { handler: batchHandler },
    });
    const jobRole = kms.getLogicalId(encrypted.batchOperations?.jobRole.node.defaultChild as never);
    const statements = Object.values(
      Template.fromStack(kms).findResources('AWS::IAM::Policy', { Properties: { Roles: [{ Ref: jobRole }] } }),
    ).flatMap(
      (p) => (p as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument.Statement,
    );
    expect(statements).toContainEqual({
      Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
      Effect: 'Allow',
      Resource: { 'Fn::GetAtt': [kms.getLogicalId(key.node.defaultChild as never), 'Arn'] },
      Condition: {
        StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
      },
    });
  });

  it('adds nothing without the prop', () => {
    const plain = new RerunPipeline(new Stack(new App(), 'Plain'), 'Pipeline', { worker: prebuilt, outputs: true });
    expect(plain.batchOperations).toBeUndefined();
    const json = Template.fromStack(Stack.of(plain)).toJSON();
    expect(JSON.stringify(json)).not.toContain('batchoperations.s3.amazonaws.com');
    expect(Object.keys(json.Outputs ?? {})).not.toContain('BatchOperationsRoleArn');
  });
});
