import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionSummaryStage } from '../../app/partition/provisionSummaryStage.js';
import { parseSummaryTask, scheduleMessageGroupAt } from '../../app/partition/summaryTask.js';
import { topology, workerQueueNames } from '../../app/topology.js';
import { StackOutput } from '../../infra/RerunStack.js';
import { workerTopologyViolations } from '../../src/topology/workerTopologyRules.js';
import { testClients, uniqueName } from '../support/aws.js';
import { handlerTypeInIsolation } from '../support/isolatedBundle.js';
import { isAllowed, isExplicitlyDenied, type PolicyStatementJson } from './support/iamPolicy.js';
import {
  type CfnResourceJson,
  type CfnTemplate,
  functionAssetDir,
  logicalIdsOfType,
  resourceOf,
  type SynthesizedRerun,
  synthRerun,
} from './support/synth.js';

// One synthesis for the file (bundling both workers + validation plugins take seconds).
let synth: SynthesizedRerun;
let json: CfnTemplate;
let ids: {
  queue: string;
  dlq: string;
  fn: string;
  role: string;
  rule: string;
  scheduleDlq: string;
  input: string;
  output: string;
  normalizeRole: string;
};
const w = topology.summarize;
const props = (id: string): Record<string, unknown> => (json.Resources[id] as CfnResourceJson).Properties ?? {};
const policyOf = (type: string, key: string, ref: string): PolicyStatementJson[] => {
  const found = logicalIdsOfType(json, type).filter((id) => {
    const target = props(id)[key];
    return (Array.isArray(target) ? target : [target]).some((r) => (r as { Ref?: string })?.Ref === ref);
  });
  expect(found, `${type} attached to ${ref}`).toHaveLength(1);
  return (props(found[0] as string).PolicyDocument as { Statement: PolicyStatementJson[] }).Statement;
};

beforeAll(() => {
  synth = synthRerun();
  json = synth.json;
  ids = {
    queue: resourceOf(json, 'AWS::SQS::Queue', `${w.name}Queue`).id,
    dlq: resourceOf(json, 'AWS::SQS::Queue', `${w.name}DeadLetterQueue`).id,
    fn: resourceOf(json, 'AWS::Lambda::Function', `${w.name}Function`).id,
    role: resourceOf(json, 'AWS::IAM::Role', `${w.name}Role`).id,
    rule: resourceOf(json, 'AWS::Events::Rule', 'DailySummaryScheduleMON').id,
    scheduleDlq: resourceOf(json, 'AWS::SQS::Queue', 'ScheduleDeadLetterQueue').id,
    input: resourceOf(json, 'AWS::S3::Bucket', 'InputBucket').id,
    output: resourceOf(json, 'AWS::S3::Bucket', 'OutputBucket').id,
    normalizeRole: resourceOf(json, 'AWS::IAM::Role', 'NormalizeWorkerRole').id,
  };
}, 120_000);
afterAll(() => synth?.dispose());

describe('the summarize worker in the stack', () => {
  it('has FIFO queues with generated names, the topology settings and content-based deduplication', () => {
    expect(props(ids.queue).QueueName).toBeUndefined();
    expect(props(ids.dlq).QueueName).toBeUndefined();
    expect(props(ids.queue)).toMatchObject({
      FifoQueue: true,
      ContentBasedDeduplication: true,
      VisibilityTimeout: w.visibilityTimeoutSeconds,
      MessageRetentionPeriod: w.queueRetentionDays * 86_400,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [ids.dlq, 'Arn'] }, maxReceiveCount: w.maxReceiveCount },
      RedriveAllowPolicy: { redrivePermission: 'denyAll' },
    });
    expect(props(ids.dlq)).toMatchObject({ FifoQueue: true, MessageRetentionPeriod: 14 * 86_400 });
  });

  it('is one partition per invocation, with partial batch responses and no batching window (FIFO)', () => {
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [ids.queue, 'Arn'] },
      FunctionName: { Ref: ids.fn },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: w.batchSize,
      ScalingConfig: { MaximumConcurrency: w.maxConcurrency },
    });
    const mapping = logicalIdsOfType(json, 'AWS::Lambda::EventSourceMapping').find(
      (id) => (props(id).FunctionName as { Ref?: string }).Ref === ids.fn,
    );
    expect(props(mapping as string).MaximumBatchingWindowInSeconds).toBeUndefined();
    expect(props(ids.fn)).toMatchObject({
      Timeout: w.functionTimeoutSeconds,
      MemorySize: w.memoryMiB,
      Architectures: ['arm64'],
    });
    expect((props(ids.fn).Environment as { Variables: unknown }).Variables).toEqual({
      OUTPUT_BUCKET: { Ref: ids.output },
      INPUT_BUCKET: { Ref: ids.input },
      MAX_RECEIVE_COUNT: String(w.maxReceiveCount),
      LOG_LEVEL: 'info',
      NODE_OPTIONS: '--enable-source-maps',
      RERUN_TRACE_AWS_SDK: 'true',
    });
  });

  it('has DLQ-depth and oldest-message alarms of its own', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.dlq, 'QueueName'] } }],
      Threshold: 1,
    });
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.queue, 'QueueName'] } }],
      Threshold: 2 * w.visibilityTimeoutSeconds,
    });
  });

  it('loads as an ES module in plain Node.js with no node_modules in reach (the SDK is inside)', () => {
    const env = { OUTPUT_BUCKET: 'o', INPUT_BUCKET: 'i', AWS_REGION: 'us-east-1', LOG_LEVEL: 'warn' };
    expect(handlerTypeInIsolation(join(functionAssetDir(synth, ids.fn), 'index.mjs'), env)).toBe('function');
  });
});

describe('the daily schedule', () => {
  it("sends the event's own time to the summarize queue daily, one rule and one message group per weekday", () => {
    const rules = logicalIdsOfType(json, 'AWS::Events::Rule');
    expect(rules).toHaveLength(7);
    const { minuteUtc, hourUtc } = topology.summarySchedule;
    const seen = rules.map((id) => {
      const r = props(id);
      const [t] = r.Targets as { Arn: unknown; SqsParameters: { MessageGroupId: string } }[];
      expect(t?.Arn).toEqual({ 'Fn::GetAtt': [ids.queue, 'Arn'] });
      return [r.ScheduleExpression, t?.SqsParameters.MessageGroupId];
    });
    expect(seen.sort()).toEqual(
      ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT']
        .map((day) => [`cron(${minuteUtc} ${hourUtc} ? * ${day} *)`, `schedule-${day}`])
        .sort(),
    );
    // The local schedule (rerun dev) sends the group of the weekday it fires on, as the stack does.
    expect(scheduleMessageGroupAt(Date.parse('2026-01-05T01:15:00Z'))).toBe('schedule-MON');
    const rule = props(ids.rule);
    const [target] = rule.Targets as {
      Arn: unknown;
      SqsParameters: { MessageGroupId: string };
      InputTransformer: { InputPathsMap: Record<string, string>; InputTemplate: string };
    }[];
    expect(target?.SqsParameters).toEqual({ MessageGroupId: 'schedule-MON' });
    expect(target?.InputTransformer.InputPathsMap).toEqual({ time: '$.time' });
    // What EventBridge delivers for the 2026-01-06 01:15 run resolves to the day before.
    const delivered =
      target?.InputTransformer.InputTemplate.replace('<time>', JSON.stringify('2026-01-06T01:15:00Z')) ?? '';
    expect(parseSummaryTask(delivered)).toMatchObject({ kind: 'task', day: '2026-01-05' });
  });

  it('retries a failed delivery for up to 12 hours, then dead-letters it to a queue of its own', () => {
    for (const id of logicalIdsOfType(json, 'AWS::Events::Rule')) {
      const [target] = props(id).Targets as Record<string, unknown>[];
      expect(target?.RetryPolicy).toEqual({ MaximumEventAgeInSeconds: 12 * 3600, MaximumRetryAttempts: 50 });
      expect(target?.DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [ids.scheduleDlq, 'Arn'] } });
    }
    // EventBridge needs a standard queue; encrypted, retained, 14 days.
    const dlq = json.Resources[ids.scheduleDlq] as CfnResourceJson;
    expect(dlq.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    expect(dlq.Properties?.FifoQueue).toBeUndefined();
    expect(dlq.DeletionPolicy).toBe('Retain');
    // Only the schedule's rules may put dead letters there.
    const statements = policyOf('AWS::SQS::QueuePolicy', 'Queues', ids.scheduleDlq);
    const send = { action: 'sqs:SendMessage', resource: `arn:${ids.scheduleDlq}` };
    const bucketIds = new Set([ids.input, ids.output]);
    const from = (source: string) => ({ ...send, context: { 'aws:SecureTransport': 'true', 'aws:SourceArn': source } });
    expect(isAllowed(statements, from(`arn:${ids.rule}`), bucketIds)).toBe(true);
    expect(isAllowed(statements, from('arn:other-rule'), bucketIds)).toBe(false);
  });

  it('alarms on any dead-lettered schedule message, to the alarm topic', () => {
    synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.scheduleDlq, 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ Ref: resourceOf(json, 'AWS::SNS::Topic', 'NormalizeAlarmTopic').id }],
    });
  });

  it('may send to the summarize queue, and only the rule may', () => {
    const statements = policyOf('AWS::SQS::QueuePolicy', 'Queues', ids.queue);
    const send = { action: 'sqs:SendMessage', resource: `arn:${ids.queue}` };
    const bucketIds = new Set([ids.input, ids.output]);
    expect(
      isAllowed(
        statements,
        { ...send, context: { 'aws:SecureTransport': 'true', 'aws:SourceArn': `arn:${ids.rule}` } },
        bucketIds,
      ),
    ).toBe(true);
    expect(
      isAllowed(
        statements,
        { ...send, context: { 'aws:SecureTransport': 'true', 'aws:SourceArn': 'arn:other-rule' } },
        bucketIds,
      ),
    ).toBe(false);
    expect(isExplicitlyDenied(statements, { ...send, context: { 'aws:SecureTransport': 'false' } }, bucketIds)).toBe(
      true,
    );
  });
});

describe('least privilege for the second stage', () => {
  const arn = (bucket: string, key: string) => `arn:aws:s3:::${bucket}/${key}`;
  const can = (role: string, action: string, resource: string, context: Record<string, string> = {}) =>
    isAllowed(
      policyOf('AWS::IAM::Policy', 'Roles', role),
      { action, resource, context },
      new Set([ids.input, ids.output]),
    );

  it("the summarize role lists and reads its lineage, lists the day's inputs, writes and deletes summaries, records failures, and nothing else", () => {
    const r = ids.role;
    for (const prefix of [topology.outputPrefix, topology.quarantinePrefix]) {
      expect(can(r, 's3:GetObject', arn(ids.output, `${prefix}in/dt=2026-01-05/a.ndjson`))).toBe(true);
      expect(can(r, 's3:ListBucket', `arn:aws:s3:::${ids.output}`, { 's3:prefix': `${prefix}in/dt=2026-01-05/` })).toBe(
        true,
      );
      expect(can(r, 's3:PutObject', arn(ids.output, `${prefix}in/dt=2026-01-05/a.ndjson`))).toBe(false);
      expect(can(r, 's3:DeleteObject', arn(ids.output, `${prefix}in/a.ndjson`))).toBe(false);
    }
    for (const key of ['summaries/in/dt=2026-01-05/summary.json', 'summaries/_staging/in/dt=2026-01-05/h.json']) {
      for (const action of ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'])
        expect(can(r, action, arn(ids.output, key)), action).toBe(true);
    }
    expect(can(r, 's3:ListBucket', `arn:aws:s3:::${ids.output}`, { 's3:prefix': 'summaries/in/' })).toBe(true);
    // The implicit ListBucket check of a HEAD (no s3:prefix): a missing summary answers 404, not 403.
    expect(can(r, 's3:ListBucket', `arn:aws:s3:::${ids.output}`)).toBe(true);
    expect(can(r, 's3:PutObject', arn(ids.output, 'failures/q/m.json'))).toBe(true);
    // The provisional record of a last attempt that then succeeded is removed (If-Match).
    expect(can(r, 's3:DeleteObject', arn(ids.output, 'failures/q/m.json'))).toBe(true);
    expect(can(r, 's3:GetObject', arn(ids.input, 'incoming/a.csv'))).toBe(false);
    // A summary records which inputs of its day it covers: the day's inputs are listed, never read.
    expect(can(r, 's3:ListBucket', `arn:aws:s3:::${ids.input}`, { 's3:prefix': 'incoming/dt=2026-01-05/' })).toBe(true);
    expect(can(r, 's3:ListBucket', `arn:aws:s3:::${ids.input}`, { 's3:prefix': 'elsewhere/' })).toBe(false);
    expect(can(r, 's3:PutObject', arn(ids.input, 'incoming/a.csv'))).toBe(false);
    expect(can(r, 'sqs:SendMessage', `arn:${ids.queue}`)).toBe(false);
    expect(can(r, 'sqs:ReceiveMessage', `arn:${ids.queue}`)).toBe(true);
  });

  it('the normalize role may record failures but not touch summaries', () => {
    expect(can(ids.normalizeRole, 's3:PutObject', arn(ids.output, 'failures/q/m.json'))).toBe(true);
    expect(can(ids.normalizeRole, 's3:PutObject', arn(ids.output, 'summaries/in/dt=2026-01-05/summary.json'))).toBe(
      false,
    );
  });

  it('summaries, markers, staging copies and failure records can only be written conditionally', () => {
    const statements = policyOf('AWS::S3::BucketPolicy', 'Bucket', ids.output);
    const put = (key: string, context: Record<string, string>) =>
      isExplicitlyDenied(
        statements,
        {
          action: 's3:PutObject',
          resource: arn(ids.output, key),
          context: {
            'aws:SecureTransport': 'true',
            's3:TlsVersion': '1.3',
            's3:ObjectCreationOperation': 'true',
            ...context,
          },
        },
        new Set([ids.input, ids.output]),
      );
    for (const key of [
      'summaries/in/dt=2026-01-05/summary.json',
      'summaries/in/dt=2026-01-05/_manifest/h/e/v',
      'failures/q/m.json',
    ]) {
      expect(put(key, {}), key).toBe(true);
      expect(put(key, { 's3:if-none-match': '*' }), key).toBe(false);
      expect(put(key, { 's3:if-match': '"e"' }), key).toBe(false);
    }
  });

  it('staging copies expire after a day and failure records after 30 days', () => {
    const rules = (props(ids.output).LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    expect(rules).toContainEqual({
      Id: 'expire-summary-staging',
      Prefix: 'summaries/_staging/',
      ExpirationInDays: 1,
      Status: 'Enabled',
    });
    expect(rules).toContainEqual({
      Id: 'expire-failure-records',
      Prefix: 'failures/',
      ExpirationInDays: 30,
      Status: 'Enabled',
    });
  });

  it('exports the summary stage outputs', () => {
    const outputs = json.Outputs ?? {};
    expect(outputs[StackOutput.SUMMARY_QUEUE_URL]?.Value).toEqual({ Ref: ids.queue });
    expect(outputs[StackOutput.SUMMARY_DLQ_URL]?.Value).toEqual({ Ref: ids.dlq });
    expect(outputs[StackOutput.SUMMARIZE_FUNCTION_NAME]?.Value).toEqual({ Ref: ids.fn });
    const rules = JSON.stringify(outputs[StackOutput.SUMMARY_SCHEDULE_RULES]?.Value);
    for (const id of logicalIdsOfType(json, 'AWS::Events::Rule')) expect(rules).toContain(`"Ref":"${id}"`);
    expect(outputs[StackOutput.SCHEDULE_DLQ_URL]?.Value).toEqual({ Ref: ids.scheduleDlq });
  });
});

describe('the local summary stage (rerun dev) agrees with the stack', () => {
  it('provisions the same FIFO queues and settings, idempotently', async () => {
    const clients = testClients();
    const t = { ...topology, appName: uniqueName('sumstage') };
    const names = workerQueueNames(t.appName, w);
    const first = await provisionSummaryStage({ clients, names, topology: t });
    // moto does not report RedriveAllowPolicy back, so it is sent at every run, and said to be "sent".
    expect(first.actions.map((a) => a.action)).toEqual(['created', 'created', 'sent']);
    const again = await provisionSummaryStage({ clients, names, topology: t });
    expect(again.actions.map((a) => a.action)).toEqual(['unchanged', 'unchanged', 'sent']);
    const attributes = async (url: string) =>
      (await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))).Attributes ??
      {};
    const queue = await attributes(first.queueUrl);
    expect(first.queueUrl.endsWith(names.queue)).toBe(true);
    expect(queue).toMatchObject({
      FifoQueue: 'true',
      ContentBasedDeduplication: String(props(ids.queue).ContentBasedDeduplication),
      VisibilityTimeout: String(props(ids.queue).VisibilityTimeout),
      MessageRetentionPeriod: String(props(ids.queue).MessageRetentionPeriod),
    });
    const redrive = JSON.parse(queue.RedrivePolicy ?? '{}');
    expect(Number(redrive.maxReceiveCount)).toBe(
      (props(ids.queue).RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount,
    );
    expect(redrive.deadLetterTargetArn).toBe(first.dlqArn);
    expect((await attributes(first.dlqUrl)).MessageRetentionPeriod).toBe(String(props(ids.dlq).MessageRetentionPeriod));
  });

  it('refuses FIFO settings Lambda would refuse', () => {
    expect(workerTopologyViolations(w)).toEqual([]);
    expect(workerTopologyViolations({ ...w, batchSize: 11, maxBatchingWindowSeconds: 1 }).join()).toMatch(
      /FIFO queue allows a batchSize of at most 10/,
    );
    expect(workerTopologyViolations({ ...w, maxBatchingWindowSeconds: 1 }).join()).toMatch(
      /does not support a batching window/,
    );
  });
});
