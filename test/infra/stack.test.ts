import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Runtime, RuntimeFamily } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referencePipeline } from '../../app/referencePipeline.js';
import { topology } from '../../app/topology.js';
import { StackOutput } from '../../infra/RerunStack.js';
import { parsePipelineDescription } from '../../src/pipeline/parsePipelineDescription.js';
import { describePipeline } from '../../src/pipeline/pipelineDescription.js';
import { maxInputBytesFor, NORMALIZE_MIB_PER_CPU_SECOND } from '../../src/sizing/sizeWorker.js';
import { externalSdkImports } from '../support/externalSdkImports.js';
import { handlerTypeInIsolation } from '../support/isolatedBundle.js';
import {
  actionsOf,
  isAllowed,
  isExplicitlyDenied,
  type PolicyStatementJson,
  resourcesOf,
} from './support/iamPolicy.js';
import {
  type CfnResourceJson,
  type CfnTemplate,
  functionAssetDir,
  logicalIdsOfType,
  resourceOf,
  type SynthesizedRerun,
  synthRerun,
} from './support/synth.js';

// One synthesis for the whole file (bundling + validation plugins take seconds).
let synth: SynthesizedRerun;
let json: CfnTemplate;
let ids: {
  input: string;
  output: string;
  accessLogs: string;
  queue: string;
  dlq: string;
  fn: string;
  table: string;
  role: string;
  logGroup: string;
  topic: string;
};
let bucketIds: Set<string>;

const w = topology.normalize;
const props = (id: string): Record<string, unknown> => (json.Resources[id] as CfnResourceJson).Properties ?? {};
const statementsOfPolicyOn = (type: string, key: string, ref: string): PolicyStatementJson[] => {
  const policies = logicalIdsOfType(json, type).filter((id) => {
    const target = props(id)[key];
    const refs = Array.isArray(target) ? target : [target];
    return refs.some((r) => (r as { Ref?: string })?.Ref === ref);
  });
  expect(policies, `${type} attached to ${ref}`).toHaveLength(1);
  return (props(policies[0] as string).PolicyDocument as { Statement: PolicyStatementJson[] }).Statement;
};
const roleStatements = (): PolicyStatementJson[] => statementsOfPolicyOn('AWS::IAM::Policy', 'Roles', ids.role);
const bucketPolicy = (bucket: string) => statementsOfPolicyOn('AWS::S3::BucketPolicy', 'Bucket', bucket);
const queuePolicy = (queue: string) => statementsOfPolicyOn('AWS::SQS::QueuePolicy', 'Queues', queue);
const arn = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`;
const dig = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((v, step) => (v as Record<string, unknown> | undefined)?.[step], value);

beforeAll(() => {
  synth = synthRerun();
  json = synth.json;
  ids = {
    input: resourceOf(json, 'AWS::S3::Bucket', 'InputBucket').id,
    output: resourceOf(json, 'AWS::S3::Bucket', 'OutputBucket').id,
    accessLogs: resourceOf(json, 'AWS::S3::Bucket', 'AccessLogsBucket').id,
    // The normalize stage is the RerunPipeline construct 'Normalize' (its worker: 'Worker').
    queue: resourceOf(json, 'AWS::SQS::Queue', 'NormalizeWorkerQueue').id,
    dlq: resourceOf(json, 'AWS::SQS::Queue', 'NormalizeWorkerDeadLetterQueue').id,
    fn: resourceOf(json, 'AWS::Lambda::Function', 'NormalizeWorkerFunction').id,
    table: resourceOf(json, 'AWS::DynamoDB::Table', 'Ledger').id,
    role: resourceOf(json, 'AWS::IAM::Role', 'NormalizeWorkerRole').id,
    logGroup: resourceOf(json, 'AWS::Logs::LogGroup', 'NormalizeWorkerLogGroup').id,
    topic: resourceOf(json, 'AWS::SNS::Topic', 'NormalizeAlarmTopic').id,
  };
  bucketIds = new Set([ids.input, ids.output, ids.accessLogs]);
}, 120_000);
afterAll(() => synth?.dispose());

describe('the worker function', () => {
  it('runs on the newest Node.js runtime aws-cdk-lib knows, on ARM64, with the topology timeout and memory', () => {
    const newestNode = Runtime.ALL.filter((r) => r.family === RuntimeFamily.NODEJS)
      .map((r) => r.name)
      .sort((a, b) => Number(a.match(/\d+/)?.[0]) - Number(b.match(/\d+/)?.[0]))
      .pop();
    expect(props(ids.fn)).toMatchObject({
      Runtime: newestNode,
      Architectures: ['arm64'],
      Handler: 'index.handler',
      Timeout: w.functionTimeoutSeconds,
      MemorySize: w.memoryMiB,
    });
  });

  it('logs structured JSON to its own log group, which has a retention', () => {
    expect(props(ids.fn).LoggingConfig).toEqual({
      LogFormat: 'JSON',
      LogGroup: { Ref: ids.logGroup },
      ApplicationLogLevel: 'INFO',
      SystemLogLevel: 'INFO',
    });
    expect(props(ids.logGroup).RetentionInDays).toBe(30);
  });

  it('gets the output bucket and the ledger table from the stack, never literals, and no webhook by default', () => {
    expect((props(ids.fn).Environment as { Variables: unknown }).Variables).toEqual({
      OUTPUT_BUCKET: { Ref: ids.output },
      // Where its failure records go, as granted: a worker wired from the environment writes there.
      FAILURE_PREFIX: 'failures/',
      // The only bucket it reads: an event naming any other (the output bucket too) is refused.
      INPUT_BUCKETS: { Ref: ids.input },
      LEDGER_TABLE: { Ref: ids.table },
      // The topology's prefix for the code-version markers that reprocess planning reads.
      CODE_VERSION_PREFIX: topology.codeVersionPrefix,
      MAX_INPUT_BYTES: String(
        maxInputBytesFor({
          memoryMiB: topology.normalize.memoryMiB,
          timeoutSeconds: topology.normalize.functionTimeoutSeconds,
          mibPerCpuSecond: NORMALIZE_MIB_PER_CPU_SECOND,
        }),
      ),
      // The redrive count of its queue: no SQS request before a cold sandbox's first item.
      MAX_RECEIVE_COUNT: String(topology.normalize.maxReceiveCount),
      LOG_LEVEL: 'info',
      NODE_OPTIONS: '--enable-source-maps',
      // Active tracing: the worker records its AWS SDK calls too.
      RERUN_TRACE_AWS_SDK: 'true',
    });
  });

  it('refuses inputs one invocation cannot finish: MAX_INPUT_BYTES from its memory, timeout and planned throughput', () => {
    const limit = Number(
      (props(ids.fn).Environment as { Variables: Record<string, unknown> }).Variables.MAX_INPUT_BYTES,
    );
    // 512 MB (0.29 vCPU) for 60 s at 35 MiB/s per core, twice over with 10 s of overhead: about 253 MiB.
    expect(Math.round(limit / 1024 ** 2)).toBe(253);
  });

  it('writes its outcome metrics in CloudWatch embedded metric format (namespace rerun)', () => {
    const bundle = readFileSync(join(functionAssetDir(synth, ids.fn), 'index.mjs'), 'utf8');
    expect(bundle).toContain('CloudWatchMetrics');
    expect(bundle).toContain('RecordsProcessed');
  });

  it('is bundled locally as minified ESM with a source map and the AWS SDK inside', () => {
    const dir = functionAssetDir(synth, ids.fn);
    const bundle = readFileSync(join(dir, 'index.mjs'), 'utf8');
    // ESM: an `export` of the handler and `import` statements, no CommonJS wrapper.
    expect(bundle).toMatch(/export\s*\{[^}]*\bhandler\b[^}]*\}/);
    expect(bundle).not.toMatch(/\bmodule\.exports\b/);
    // The SDK is inside the bundle (docs/AWS-BEHAVIOUR.md, "SDK versions in the runtime"): its PutObject
    // serializer, which writes the If-None-Match header, is part of the asset.
    expect(bundle).toContain('If-None-Match');
    expect(statSync(join(dir, 'index.mjs')).size).toBeLessThan(1024 * 1024);
    // Minified: very long lines (only the SDK's multi-line template strings break them), not one
    // statement per line.
    expect(bundle.length / bundle.split('\n').length).toBeGreaterThan(2000);
    // CommonJS dependencies get a require() in ESM through the banner.
    expect(bundle.startsWith('import { createRequire as __rerunCreateRequire }')).toBe(true);
    const map = JSON.parse(readFileSync(join(dir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
    expect(map.sources.some((s) => s.endsWith('functions/normalize/handler.ts'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules'))).toBe(false);
  });

  it('loads as an ES module in plain Node.js with no node_modules in reach', () => {
    // A folder outside the project: nothing can resolve @aws-sdk/* but the bundle itself.
    const env = {
      OUTPUT_BUCKET: 'probe-bucket',
      AWS_REGION: 'us-east-1',
      LOG_LEVEL: 'warn',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    expect(handlerTypeInIsolation(join(functionAssetDir(synth, ids.fn), 'index.mjs'), env)).toBe('function');
  });

  it('traces its AWS SDK calls as the function traces: RERUN_TRACE_AWS_SDK, and the X-Ray SDK inside the bundle', () => {
    expect(dig(props(ids.fn), 'Environment', 'Variables', 'RERUN_TRACE_AWS_SDK')).toBe('true');
    expect(dig(props(ids.fn), 'TracingConfig', 'Mode')).toBe('Active');
    // The lazily imported X-Ray SDK resolves inside the bundle, with no node_modules in reach.
    const env = {
      OUTPUT_BUCKET: 'probe-bucket',
      AWS_REGION: 'us-east-1',
      LOG_LEVEL: 'warn',
      RERUN_TRACE_AWS_SDK: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    expect(handlerTypeInIsolation(join(functionAssetDir(synth, ids.fn), 'index.mjs'), env)).toBe('function');
  });
});

describe('every synthesized asset', () => {
  it('is checked by a scan that finds each form of external SDK import', () => {
    const bundle =
      'import{S3Client}from"@aws-sdk/client-s3";await import("@aws-sdk/client-sqs");require("@aws-sdk/lib-dynamodb");';
    expect(externalSdkImports(bundle)).toEqual(['@aws-sdk/client-s3', '@aws-sdk/client-sqs', '@aws-sdk/lib-dynamodb']);
  });

  it('imports no @aws-sdk/* module from outside the bundle', () => {
    const assets = readdirSync(synth.assemblyDir).filter((name) => name.startsWith('asset.'));
    const bundles = assets.filter((asset) => existsSync(join(synth.assemblyDir, asset, 'index.mjs')));
    // Both workers (normalize and summarize); CDK's own custom-resource handlers are .js assets.
    expect(bundles.length).toBeGreaterThanOrEqual(2);
    // Each worker's entry and the chunks beside it (split bundles).
    const files = bundles.flatMap((asset) =>
      readdirSync(join(synth.assemblyDir, asset))
        .filter((name) => name.endsWith('.mjs'))
        .map((name) => join(synth.assemblyDir, asset, name)),
    );
    for (const file of files) {
      expect(externalSdkImports(readFileSync(file, 'utf8')), file).toEqual([]);
    }
  });
});

describe('the event source mapping', () => {
  it('reports batch item failures and applies the topology batch size, window and concurrency', () => {
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [ids.queue, 'Arn'] },
      FunctionName: { Ref: ids.fn },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: w.batchSize,
      MaximumBatchingWindowInSeconds: w.maxBatchingWindowSeconds,
      ScalingConfig: { MaximumConcurrency: w.maxConcurrency },
    });
    // One mapping per worker function (the summarize worker's is checked in summaryStack.test.ts).
    const mappingsOfFn = logicalIdsOfType(json, 'AWS::Lambda::EventSourceMapping').filter(
      (id) => (props(id).FunctionName as { Ref?: string }).Ref === ids.fn,
    );
    expect(mappingsOfFn).toHaveLength(1);
  });

  it("is never starved: each worker reserves its mapping's maximum concurrency (Lambda Developer Guide, SQS scaling)", () => {
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: `rerun ${w.name} worker`,
      ReservedConcurrentExecutions: w.maxConcurrency,
    });
    synth.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: `rerun ${topology.summarize.name} worker`,
      ReservedConcurrentExecutions: topology.summarize.maxConcurrency,
    });
  });

  it('reserves none with -c rerun:reserveConcurrency=false (an account whose limit refuses any), and warns for each worker', () => {
    const optedOut = synthRerun({ nag: false, appProps: { context: { 'rerun:reserveConcurrency': 'false' } } });
    try {
      const fns = Object.values(optedOut.template.findResources('AWS::Lambda::Function')).filter((f) =>
        String(f.Properties.Description).endsWith(' worker'),
      );
      expect(fns).toHaveLength(2);
      for (const fn of fns) expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
      const warnings = Annotations.fromStack(optedOut.stack).findWarning(
        '*',
        Match.stringLikeRegexp('reserves no concurrency \\(reserveConcurrency: false\\)'),
      );
      expect(warnings).toHaveLength(2);
    } finally {
      optedOut.dispose();
    }
  }, 120_000);
});

describe('the queues', () => {
  it('give a batch at least 6 x the function timeout before it reappears', () => {
    expect(props(ids.queue).VisibilityTimeout).toBeGreaterThanOrEqual(6 * (props(ids.fn).Timeout as number));
  });

  it('move a message to the DLQ after at least 5 receives, and keep dead letters 14 days', () => {
    const redrive = props(ids.queue).RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
    expect(redrive.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': [ids.dlq, 'Arn'] });
    expect(redrive.maxReceiveCount).toBeGreaterThanOrEqual(5);
    // The function is told the same count, so a cold sandbox need not ask the queue for it.
    expect(dig(props(ids.fn), 'Environment', 'Variables', 'MAX_RECEIVE_COUNT')).toBe(String(redrive.maxReceiveCount));
    expect(props(ids.dlq).MessageRetentionPeriod).toBe(14 * 86_400);
    // A moved message keeps its original enqueue time: the DLQ must keep messages longer than the source.
    expect(props(ids.queue).MessageRetentionPeriod as number).toBeLessThan(14 * 86_400);
  });

  it('have generated names, are retained on stack delete, and no queue may use the work queue as its DLQ', () => {
    // Fixed names blocked every update that replaces a queue; operators read the URLs from the outputs.
    for (const id of logicalIdsOfType(json, 'AWS::SQS::Queue')) {
      const queue = json.Resources[id] as CfnResourceJson;
      expect(queue.Properties?.QueueName, id).toBeUndefined();
      expect(queue.DeletionPolicy, id).toBe('Retain');
      expect(queue.UpdateReplacePolicy, id).toBe('Retain');
    }
    expect(logicalIdsOfType(json, 'AWS::SQS::Queue')).toHaveLength(5);
    expect(props(ids.queue).RedriveAllowPolicy).toEqual({ redrivePermission: 'denyAll' });
  });

  it('are encrypted at rest and refuse any request not made over TLS', () => {
    for (const queue of [ids.queue, ids.dlq]) {
      expect(props(queue).SqsManagedSseEnabled).toBe(true);
      const statements = queuePolicy(queue);
      const request = { action: 'sqs:ReceiveMessage', resource: `arn:${queue}` };
      expect(
        isExplicitlyDenied(statements, { ...request, context: { 'aws:SecureTransport': 'false' } }, bucketIds),
      ).toBe(true);
      expect(
        isExplicitlyDenied(statements, { ...request, context: { 'aws:SecureTransport': 'true' } }, bucketIds),
      ).toBe(false);
    }
  });

  it('accept S3 notifications from the input bucket only', () => {
    const statements = queuePolicy(ids.queue);
    const send = { action: 'sqs:SendMessage', resource: `arn:${ids.queue}` };
    const fromInput = {
      'aws:SecureTransport': 'true',
      'aws:SourceArn': `arn:aws:s3:::${ids.input}`,
      'aws:SourceAccount': 'AWS::AccountId',
    };
    expect(isAllowed(statements, { ...send, context: fromInput }, bucketIds)).toBe(true);
    // A bucket of the same name in another account (bucket names are global) is refused.
    const otherAccount = { ...fromInput, 'aws:SourceAccount': '999999999999' };
    expect(isAllowed(statements, { ...send, context: otherAccount }, bucketIds)).toBe(false);
    const fromElsewhere = { 'aws:SecureTransport': 'true', 'aws:SourceArn': 'arn:aws:s3:::someone-elses-bucket' };
    expect(isAllowed(statements, { ...send, context: fromElsewhere }, bucketIds)).toBe(false);
    const s3Statements = statements.filter((s) => JSON.stringify(s.Principal ?? '').includes('s3.amazonaws.com'));
    expect(s3Statements).toHaveLength(1);
  });

  it("accept them only from this account's bucket (aws:SourceAccount, against a same-named bucket elsewhere)", () => {
    synth.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: ids.queue }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 's3.amazonaws.com' },
            Condition: {
              ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [ids.input, 'Arn'] } },
              StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
            },
          }),
        ]),
      },
    });
  });
});

describe('the input bucket', () => {
  it('sends ObjectCreated and ObjectRemoved events under the input prefix, and only those, to the work queue', () => {
    const rule = (event: string) => ({
      Events: [event],
      Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: topology.inputPrefix }] } },
      QueueArn: { 'Fn::GetAtt': [ids.queue, 'Arn'] },
    });
    synth.template.hasResourceProperties('Custom::S3BucketNotifications', {
      BucketName: { Ref: ids.input },
      NotificationConfiguration: {
        QueueConfigurations: [rule('s3:ObjectCreated:*'), rule('s3:ObjectRemoved:*')],
      },
    });
    expect(logicalIdsOfType(json, 'Custom::S3BucketNotifications')).toHaveLength(1);
  });
});

describe('the data buckets', () => {
  it('are encrypted, private, ACL-free, retained on stack delete and abort stale multipart uploads', () => {
    for (const bucket of [ids.input, ids.output, ids.accessLogs]) {
      const resource = json.Resources[bucket] as CfnResourceJson;
      expect(resource.DeletionPolicy).toBe('Retain');
      expect(resource.UpdateReplacePolicy).toBe('Retain');
      expect(props(bucket)).toMatchObject({
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      });
      const rules = (props(bucket).LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
      expect(rules).toContainEqual(
        expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
      );
    }
  });

  it('log server access to the access-log bucket', () => {
    for (const [bucket, prefix] of [
      [ids.input, 'Input/'],
      [ids.output, 'Output/'],
    ] as const) {
      expect(props(bucket).LoggingConfiguration).toEqual({
        DestinationBucketName: { Ref: ids.accessLogs },
        LogFilePrefix: prefix,
      });
    }
  });

  it('refuse plain HTTP and TLS below 1.2', () => {
    for (const bucket of [ids.input, ids.output, ids.accessLogs]) {
      const statements = bucketPolicy(bucket);
      const get = { action: 's3:GetObject', resource: arn(bucket, 'incoming/a.csv') };
      const deny = (context: Record<string, string>) => isExplicitlyDenied(statements, { ...get, context }, bucketIds);
      expect(deny({ 'aws:SecureTransport': 'false', 's3:TlsVersion': '1.3' })).toBe(true);
      expect(deny({ 'aws:SecureTransport': 'true', 's3:TlsVersion': '1.1' })).toBe(true);
      expect(deny({ 'aws:SecureTransport': 'true', 's3:TlsVersion': '1.2' })).toBe(false);
    }
  });
});

describe('the output bucket policy (no blind overwrite of what workers own)', () => {
  const tls = { 'aws:SecureTransport': 'true', 's3:TlsVersion': '1.3' };
  // Condition keys S3 sets per request: https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes-enforce.html
  const requests = {
    putWithoutCondition: { 's3:ObjectCreationOperation': 'true' },
    putIfNoneMatch: { 's3:ObjectCreationOperation': 'true', 's3:if-none-match': '*' },
    putIfMatch: { 's3:ObjectCreationOperation': 'true', 's3:if-match': '"etag"' },
    createMultipartUpload: { 's3:ObjectCreationOperation': 'false' },
    uploadPart: { 's3:ObjectCreationOperation': 'false' },
    completeWithoutCondition: { 's3:ObjectCreationOperation': 'true' },
    completeIfNoneMatch: { 's3:ObjectCreationOperation': 'true', 's3:if-none-match': '*' },
  };
  const denied = (key: string, context: Record<string, string>) =>
    isExplicitlyDenied(
      bucketPolicy(ids.output),
      { action: 's3:PutObject', resource: arn(ids.output, key), context: { ...tls, ...context } },
      bucketIds,
    );

  it('denies PutObject and CompleteMultipartUpload without If-None-Match or If-Match under every owned prefix', () => {
    for (const prefix of [topology.outputPrefix, topology.quarantinePrefix]) {
      expect(denied(`${prefix}b/a.ndjson`, requests.putWithoutCondition)).toBe(true);
      expect(denied(`${prefix}b/a.ndjson`, requests.completeWithoutCondition)).toBe(true);
    }
  });

  it('lets conditional creates and compare-and-swap writes through', () => {
    for (const prefix of [topology.outputPrefix, topology.quarantinePrefix]) {
      expect(denied(`${prefix}b/a.ndjson`, requests.putIfNoneMatch)).toBe(false);
      expect(denied(`${prefix}b/a.ndjson`, requests.putIfMatch)).toBe(false);
      expect(denied(`${prefix}b/a.ndjson`, requests.completeIfNoneMatch)).toBe(false);
    }
  });

  it('does not break multipart uploads: CreateMultipartUpload and UploadPart carry no condition and pass', () => {
    expect(denied(`${topology.outputPrefix}b/big.ndjson`, requests.createMultipartUpload)).toBe(false);
    expect(denied(`${topology.outputPrefix}b/big.ndjson`, requests.uploadPart)).toBe(false);
  });

  it('has exactly the documented statement shape, scoped to the owned prefixes', () => {
    const statement = bucketPolicy(ids.output).find((s) => s.Sid === 'DenyPutWithoutIfNoneMatchOrIfMatch');
    expect(statement).toBeDefined();
    expect(statement).toMatchObject({
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 's3:PutObject',
      Condition: {
        Null: { 's3:if-none-match': 'true', 's3:if-match': 'true' },
        Bool: { 's3:ObjectCreationOperation': 'true' },
      },
    });
    expect(resourcesOf(statement as PolicyStatementJson, bucketIds).sort()).toEqual(
      [
        arn(ids.output, `${topology.outputPrefix}*`),
        arn(ids.output, `${topology.quarantinePrefix}*`),
        arn(ids.output, `${topology.summaryPrefix}*`),
        arn(ids.output, `${topology.failurePrefix}*`),
        arn(ids.output, `${topology.codeVersionPrefix}*`),
      ].sort(),
    );
    expect(denied('elsewhere/a.txt', requests.putWithoutCondition)).toBe(false);
  });
});

describe('the ledger table', () => {
  it('is on-demand, encrypted, point-in-time recoverable, has TTL and is retained on stack delete', () => {
    const table = json.Resources[ids.table] as CfnResourceJson;
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(props(ids.table)).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: topology.ledger.partitionKey, KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: topology.ledger.ttlAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
    });
  });
});

describe('the output bucket policy (no blind delete of an output)', () => {
  const tls = { 'aws:SecureTransport': 'true', 's3:TlsVersion': '1.3' };
  const denied = (key: string, context: Record<string, string>) =>
    isExplicitlyDenied(
      bucketPolicy(ids.output),
      { action: 's3:DeleteObject', resource: arn(ids.output, key), context: { ...tls, ...context } },
      bucketIds,
    );
  const outputPrefixes = [topology.outputPrefix, topology.quarantinePrefix, topology.summaryPrefix];

  it('denies DeleteObject without If-Match under every output prefix, and lets If-Match deletes through', () => {
    for (const prefix of outputPrefixes) {
      expect(denied(`${prefix}b/a.ndjson`, {}), prefix).toBe(true);
      expect(denied(`${prefix}b/a.ndjson`, { 's3:if-match': '"etag"' }), prefix).toBe(false);
    }
    expect(denied('elsewhere/a.txt', {})).toBe(false);
  });

  it('has exactly the documented statement shape (S3 User Guide, "Enforce conditional deletes")', () => {
    const statement = bucketPolicy(ids.output).find((s) => s.Sid === 'DenyDeleteWithoutIfMatch');
    expect(statement).toMatchObject({
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 's3:DeleteObject',
      Condition: { Null: { 's3:if-match': 'true' } },
    });
    expect(resourcesOf(statement as PolicyStatementJson, bucketIds).sort()).toEqual(
      outputPrefixes.map((p) => arn(ids.output, `${p}*`)).sort(),
    );
  });
});

describe('the worker role (least privilege)', () => {
  const can = (action: string, resource: string, context: Record<string, string> = {}) =>
    isAllowed(roleStatements(), { action, resource, context }, bucketIds);

  it('has no managed policy and no wildcard action anywhere in the stack', () => {
    expect(props(ids.role).ManagedPolicyArns).toBeUndefined();
    const policies = logicalIdsOfType(json, 'AWS::IAM::Policy');
    const actions = policies.flatMap((id) =>
      (props(id).PolicyDocument as { Statement: PolicyStatementJson[] }).Statement.flatMap(actionsOf),
    );
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
  });

  it('reads uploads under the input prefix only, and may list only that prefix (404, not 403, for a missing key)', () => {
    expect(can('s3:GetObject', arn(ids.input, `${topology.inputPrefix}2026/a.csv`))).toBe(true);
    expect(can('s3:GetObject', arn(ids.input, 'private/a.csv'))).toBe(false);
    expect(can('s3:PutObject', arn(ids.input, `${topology.inputPrefix}a.csv`))).toBe(false);
    expect(can('s3:ListBucket', `arn:aws:s3:::${ids.input}`, { 's3:prefix': `${topology.inputPrefix}a.csv` })).toBe(
      true,
    );
    expect(can('s3:ListBucket', `arn:aws:s3:::${ids.input}`, { 's3:prefix': '' })).toBe(false);
    expect(can('s3:ListBucket', `arn:aws:s3:::${ids.input}`, { 's3:prefix': 'private/' })).toBe(false);
    // The implicit ListBucket check behind "404, not 403, for a missing key" carries no s3:prefix
    // (a HEAD has none): it must pass, or every first done-check fails (docs/AWS-BEHAVIOUR.md, "404 or 403 for a missing key").
    expect(can('s3:ListBucket', `arn:aws:s3:::${ids.input}`)).toBe(true);
  });

  it('records failures, and removes (If-Match) the provisional record of a last attempt that then succeeded', () => {
    for (const key of ['failures/q/m.json', 'failures/.by-input/b/dt=2026-01-05/abc/q.m.last-receive']) {
      for (const action of ['s3:GetObject', 's3:PutObject', 's3:DeleteObject']) {
        expect(can(action, arn(ids.output, key)), `${action} ${key}`).toBe(true);
      }
    }
  });

  it('reads, writes (incl. multipart abort) and deletes (outputs of deleted inputs) its output prefixes only', () => {
    for (const prefix of [topology.outputPrefix, topology.quarantinePrefix]) {
      for (const action of ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload']) {
        expect(can(action, arn(ids.output, `${prefix}b/a.ndjson`)), `${action} ${prefix}`).toBe(true);
      }
      expect(can('s3:ListBucket', `arn:aws:s3:::${ids.output}`, { 's3:prefix': `${prefix}b/a.ndjson` })).toBe(true);
    }
    // A done-check HEAD of an output that does not exist yet: 404 only with this ListBucket.
    expect(can('s3:ListBucket', `arn:aws:s3:::${ids.output}`)).toBe(true);
    expect(can('s3:DeleteObject', arn(ids.output, `${topology.quarantinePrefix}b/a.ndjson`))).toBe(true);
    expect(can('s3:DeleteObject', arn(ids.output, `${topology.outputPrefix}b/a.ndjson`))).toBe(true);
    expect(can('s3:DeleteObject', arn(ids.output, `${topology.summaryPrefix}b/dt=2026-01-01/summary.json`))).toBe(
      false,
    );
    expect(can('s3:DeleteObject', arn(ids.input, `${topology.inputPrefix}a.csv`))).toBe(false);
    // The code-version marker: created (conditionally), never read, listed or deleted by the worker.
    expect(can('s3:PutObject', arn(ids.output, `${topology.codeVersionPrefix}normalize/normalize%401`))).toBe(true);
    expect(can('s3:DeleteObject', arn(ids.output, `${topology.codeVersionPrefix}normalize/normalize%401`))).toBe(false);
    // Hashed outputs of an earlier release (outside their day) are removed once rebuilt in their partition.
    expect(can('s3:DeleteObject', arn(ids.output, `${topology.outputPrefix}b/_long/${'a'.repeat(64)}.ndjson`))).toBe(
      true,
    );
    expect(can('s3:PutObject', arn(ids.output, 'other/a.ndjson'))).toBe(false);
    expect(can('s3:ListBucket', `arn:aws:s3:::${ids.output}`, { 's3:prefix': 'other/' })).toBe(false);
  });

  it('uses the ledger with item operations only', () => {
    const tableArn = `arn:${ids.table}`;
    for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem']) {
      expect(can(action, tableArn), action).toBe(true);
    }
    // What the ledger adapter never sends is not granted either.
    for (const action of [
      'dynamodb:GetItem',
      'dynamodb:DeleteItem',
      'dynamodb:Scan',
      'dynamodb:Query',
      'dynamodb:BatchWriteItem',
      'dynamodb:DeleteTable',
    ]) {
      expect(can(action, tableArn), action).toBe(false);
    }
  });

  it('consumes, defers and requeues to its own queue only, and cannot purge or send to the DLQ', () => {
    const queueArn = `arn:${ids.queue}`;
    for (const action of [
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
    ]) {
      expect(can(action, queueArn), action).toBe(true);
    }
    // The records a deadline leaves go back to its own queue as a new message.
    expect(can('sqs:SendMessage', queueArn)).toBe(true);
    expect(can('sqs:SendMessage', `arn:${ids.dlq}`)).toBe(false);
    expect(can('sqs:PurgeQueue', queueArn)).toBe(false);
    expect(can('sqs:ReceiveMessage', `arn:${ids.dlq}`)).toBe(false);
  });

  it('writes its own log group and no other', () => {
    expect(can('logs:PutLogEvents', `arn:${ids.logGroup}`)).toBe(true);
    expect(can('logs:CreateLogGroup', `arn:${ids.logGroup}`)).toBe(false);
    const logResources = roleStatements()
      .filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')))
      .flatMap((s) => resourcesOf(s, bucketIds));
    expect(logResources).toEqual([`arn:${ids.logGroup}`]);
  });
});

describe('the alarms', () => {
  it('fire on any message in the DLQ', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.dlq, 'QueueName'] } }],
      Statistic: 'Maximum',
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('fire when the oldest work-queue message is older than two visibility timeouts', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.queue, 'QueueName'] } }],
      Statistic: 'Maximum',
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 2 * w.visibilityTimeoutSeconds,
    });
  });

  it('fire on Lambda errors, throttles and a duration near the timeout, for each worker', () => {
    for (const [fn, worker] of [
      [ids.fn, topology.normalize],
      [resourceOf(json, 'AWS::Lambda::Function', 'summarizeFunction').id, topology.summarize],
    ] as const) {
      const dimensions = [{ Name: 'FunctionName', Value: { Ref: fn } }];
      for (const metric of ['Errors', 'Throttles']) {
        synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          Namespace: 'AWS/Lambda',
          MetricName: metric,
          Dimensions: dimensions,
          Statistic: 'Sum',
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        });
      }
      synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: 'Duration',
        Dimensions: dimensions,
        Statistic: 'Maximum',
        Threshold: 0.8 * worker.functionTimeoutSeconds * 1000,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    }
  });

  it('notify the alarm topic on ALARM and on OK, every one of them (normalize, summarize, schedule)', () => {
    const alarms = logicalIdsOfType(json, 'AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(11);
    for (const alarm of alarms) {
      expect(props(alarm).AlarmActions, alarm).toEqual([{ Ref: ids.topic }]);
      expect(props(alarm).OKActions, alarm).toEqual([{ Ref: ids.topic }]);
    }
  });

  it('sit on one dashboard with both stages: queues, DLQs, outcomes, quarantine, duration, errors', () => {
    const [dashboard] = logicalIdsOfType(json, 'AWS::CloudWatch::Dashboard');
    expect(dashboard).toBeDefined();
    const body = JSON.stringify(props(dashboard as string).DashboardBody);
    for (const text of [
      'ApproximateNumberOfMessagesVisible',
      'ApproximateAgeOfOldestMessage',
      'RecordsProcessed',
      'RecordsFailed',
      'RecordsRequeued',
      'EntriesQuarantined',
      'Duration (ms)',
      'Errors',
      'Throttles',
      'rerun normalize',
      'rerun summarize',
    ]) {
      expect(body, text).toContain(text);
    }
  });

  it('go to an encrypted, TLS-only topic whose key CloudWatch may use', () => {
    const key = props(ids.topic).KmsMasterKeyId as { 'Fn::GetAtt': [string, string] };
    const keyId = key['Fn::GetAtt'][0];
    expect(props(keyId).EnableKeyRotation).toBe(true);
    const keyStatements = (props(keyId).KeyPolicy as { Statement: PolicyStatementJson[] }).Statement;
    expect(
      keyStatements.some(
        (s) =>
          JSON.stringify(s.Principal).includes('cloudwatch.amazonaws.com') &&
          actionsOf(s).includes('kms:GenerateDataKey*') &&
          actionsOf(s).includes('kms:Decrypt'),
      ),
    ).toBe(true);
    synth.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: ids.topic }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('parameters and outputs', () => {
  it('hold the webhook URL in no parameter (CDK adds only its bootstrap version)', () => {
    expect(Object.keys(json.Parameters ?? {})).toEqual(['BootstrapVersion']);
  });

  it('take the webhook from a secret named in the context, as a dynamic reference resolved at deploy', () => {
    const hooked = synthRerun({
      nag: false,
      appProps: { builtinCloudFormationValidation: false, context: { 'rerun:webhookSecret': 'rerun/webhook' } },
    });
    hooked.dispose();
    const fn = resourceOf(hooked.json, 'AWS::Lambda::Function', 'NormalizeWorkerFunction').resource;
    const url = JSON.stringify(dig(fn.Properties, 'Environment', 'Variables', 'NOTIFY_URL'));
    expect(url).toContain('{{resolve:secretsmanager:');
    expect(url).toContain('rerun/webhook');
    expect(Object.keys(hooked.json.Parameters ?? {})).toEqual(['BootstrapVersion']);
  }, 120_000);

  it('take the webhook from an SSM String parameter named in the context', () => {
    const hooked = synthRerun({
      nag: false,
      appProps: { builtinCloudFormationValidation: false, context: { 'rerun:webhookParameter': '/rerun/webhook-url' } },
    });
    hooked.dispose();
    const fn = resourceOf(hooked.json, 'AWS::Lambda::Function', 'NormalizeWorkerFunction').resource;
    expect(dig(fn.Properties, 'Environment', 'Variables', 'NOTIFY_URL')).toBe('{{resolve:ssm:/rerun/webhook-url}}');
  }, 120_000);

  it('export the buckets, queue URLs, ledger table, function and log group', () => {
    const outputs = json.Outputs ?? {};
    expect(Object.keys(outputs).sort()).toEqual(Object.values(StackOutput).sort());
    expect(outputs[StackOutput.INPUT_BUCKET]?.Value).toEqual({ Ref: ids.input });
    expect(outputs[StackOutput.OUTPUT_BUCKET]?.Value).toEqual({ Ref: ids.output });
    expect(outputs[StackOutput.QUEUE_URL]?.Value).toEqual({ Ref: ids.queue });
    expect(outputs[StackOutput.DLQ_URL]?.Value).toEqual({ Ref: ids.dlq });
    expect(outputs[StackOutput.LEDGER_TABLE]?.Value).toEqual({ Ref: ids.table });
    expect(outputs[StackOutput.FUNCTION_NAME]?.Value).toEqual({ Ref: ids.fn });
    expect(outputs[StackOutput.LOG_GROUP]?.Value).toEqual({ Ref: ids.logGroup });
  });

  it('publish the reference pipeline as data: the normalize stage the queue feeds, the daily summary over it', () => {
    const outputs = json.Outputs ?? {};
    const published = parsePipelineDescription(JSON.parse(outputs[StackOutput.PIPELINE_DESCRIPTION]?.Value as string));
    expect(published).toEqual(describePipeline(referencePipeline(topology)));
    expect(published.stages.summarize).toMatchObject({ kind: 'window', input: { stage: 'normalize' } });
    expect(outputs[StackOutput.PIPELINE_STAGE]?.Value).toBe(topology.normalize.name);
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged finding on the synthesized app', () => {
    const report = new AwsSolutionsChecks(synth.app).validateScope(synth.app);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath)}`)).toEqual(
      [],
    );
    expect(report.success).toBe(true);
  });

  it('acknowledges only the reviewed findings, each with a written reason', () => {
    const acknowledged: { path: string; id: string; reason: string }[] = [];
    const visit = (c: IConstruct) => {
      for (const entry of c.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
          acknowledged.push({ path: c.node.path, id: id.replace(/^annotation::/i, ''), reason });
        }
      }
      for (const child of c.node.children) visit(child);
    };
    visit(synth.app);
    const p = (bucket: string, prefix: string) => `AwsSolutions-IAM5[Resource::<${bucket}.Arn>/${prefix}*]`;
    expect(acknowledged.map((a) => a.id).sort()).toEqual(
      [
        p(ids.input, topology.inputPrefix),
        p(ids.output, topology.outputPrefix),
        p(ids.output, topology.quarantinePrefix),
        p(ids.output, topology.failurePrefix),
        p(ids.output, topology.codeVersionPrefix),
        // The summarize worker's role: its lineage, its summaries, its failure records.
        p(ids.output, topology.outputPrefix),
        p(ids.output, topology.quarantinePrefix),
        p(ids.output, topology.summaryPrefix),
        p(ids.output, topology.failurePrefix),
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        // X-Ray's two write actions have no resource-level permissions (both workers are traced).
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-IAM5[Resource::*]',
        // The schedule's DLQ is a DLQ of EventBridge targets, which cdk-nag does not follow.
        'AwsSolutions-SQS3',
      ].sort(),
    );
    for (const a of acknowledged) {
      expect(a.reason.length, a.id).toBeGreaterThan(80);
    }
  });

  it('is live: the same checks flag a wildcard grant that nobody acknowledged', () => {
    const app = new App();
    const stack = new Stack(app, 'NagProbe');
    const role = new Role(stack, 'Probe', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new PolicyStatement({ actions: ['s3:*'], resources: ['arn:aws:s3:::probe/*'] }));
    const report = new AwsSolutionsChecks(app).validateScope(app);
    expect(report.violations.map((v) => v.ruleName)).toContain('AwsSolutions-IAM5[Action::s3:*]');
  });

  it('produced no CDK warning or error annotation during synthesis', () => {
    expect(Annotations.fromStack(synth.stack).findWarning('*', Match.anyValue())).toEqual([]);
    expect(Annotations.fromStack(synth.stack).findError('*', Match.anyValue())).toEqual([]);
  });
});
