/**
 * Every service-to-service edge of the synthesized templates, decided by MiniStack's IAM evaluator
 * used as a library (test/infra/support/policyEngine.py): S3 to SQS, CloudWatch to SNS and its key,
 * EventBridge to SQS, S3 server access logging, and each role to S3, SQS, DynamoDB, KMS, CloudWatch
 * Logs, X-Ray, Secrets Manager and SSM. The deployed tier (MiniStack with AUTH=true) judges the
 * requests the deployed stack really makes with the same engine; this file covers the edges that
 * tier cannot reach or MiniStack does not check live (docs/EMULATORS.md, "Its IAM evaluator"),
 * and the refusals, which a working pipeline never shows.
 *
 * Each stack's file ends with a coverage check: every Allow statement of a role, every statement
 * of a resource policy that names a service principal, and every Deny of a resource policy must
 * have decided at least one case here, so a new grant cannot go unexamined.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RerunPipeline } from '../../src/cdk/RerunPipeline.js';
import type { RerunPipelineProps } from '../../src/cdk/RerunPipelineProps.js';
import { decideCases, type EdgeCase } from './support/edgeCases.js';
import { type PolicyEngine, policyEngine } from './support/policyEngine.js';
import { s3As } from './support/s3Requests.js';
import { type CfnTemplate, logicalIdsOfType, resourceOf, type SynthesizedRerun, synthRerun } from './support/synth.js';
import { ACCOUNT, OTHER_ACCOUNT, REGION, type TemplatePolicies, templatePolicies } from './support/templatePolicies.js';

/** Every statement a test must have seen decide something (see the file comment). */
function statementsToExercise(policies: TemplatePolicies): string[] {
  const roleArns = new Set([...policies.roles.values()].map((r) => r.arn));
  return [...policies.statements.entries()]
    .filter(([, { statement, attachedTo }]) => {
      if (roleArns.has(attachedTo)) return statement.Effect === 'Allow';
      if (statement.Effect === 'Deny') return true;
      // The key policy's delegation to the account's IAM policies decides through them.
      return JSON.stringify(statement.Principal ?? '').includes('"Service"');
    })
    .map(([sid]) => sid)
    .sort();
}

const alarmArn = (account = ACCOUNT) => `arn:aws:cloudwatch:${REGION}:${account}:alarm:rerun-Alarm-1A2B3C`;

describe('the reference stack (infra/RerunStack.ts)', () => {
  let synth: SynthesizedRerun;
  let policies: TemplatePolicies;
  let engine: PolicyEngine;
  let id: Record<string, string>;
  let input: string;
  let output: string;
  let logs: string;
  let bucketIds: Record<string, string>;

  beforeAll(async () => {
    synth = synthRerun({ nag: false });
    policies = templatePolicies(synth.json);
    engine = await policyEngine(policies);
    const one = (type: string, prefix: string) => resourceOf(synth.json, type, prefix).id;
    id = {
      normalizeRole: one('AWS::IAM::Role', 'NormalizeWorkerRole'),
      summarizeRole: one('AWS::IAM::Role', 'summarizeRole'),
      notificationsRole: one('AWS::IAM::Role', 'BucketNotificationsHandler'),
      queue: one('AWS::SQS::Queue', 'NormalizeWorkerQueue'),
      dlq: one('AWS::SQS::Queue', 'NormalizeWorkerDeadLetterQueue'),
      summaryQueue: one('AWS::SQS::Queue', 'summarizeQueue'),
      summaryDlq: one('AWS::SQS::Queue', 'summarizeDeadLetterQueue'),
      scheduleDlq: one('AWS::SQS::Queue', 'ScheduleDeadLetterQueue'),
      topic: one('AWS::SNS::Topic', 'NormalizeAlarmTopic'),
      key: one('AWS::KMS::Key', 'NormalizeAlarmTopicKey'),
      table: one('AWS::DynamoDB::Table', 'Ledger'),
      normalizeLogs: one('AWS::Logs::LogGroup', 'NormalizeWorkerLogGroup'),
      summarizeLogs: one('AWS::Logs::LogGroup', 'summarizeLogGroup'),
    };
    input = policies.nameOf(one('AWS::S3::Bucket', 'InputBucket'));
    output = policies.nameOf(one('AWS::S3::Bucket', 'OutputBucket'));
    logs = policies.nameOf(one('AWS::S3::Bucket', 'AccessLogsBucket'));
    bucketIds = Object.fromEntries(
      logicalIdsOfType(synth.json, 'AWS::S3::Bucket').map((bucket) => [policies.nameOf(bucket), bucket]),
    );
  }, 180_000);
  afterAll(() => synth?.dispose());

  const check = (cases: () => EdgeCase[]) => () => {
    const { actual, expected } = decideCases(engine, cases());
    expect(actual).toEqual(expected);
  };

  it(
    'CloudWatch alarms of this account may publish to the alarm topic and use its key, no other account',
    check(() => {
      const topic = policies.arnOf(id.topic as string);
      const key = policies.arnOf(id.key as string);
      const from = (account: string) => ({ 'aws:SourceArn': alarmArn(account), 'aws:SourceAccount': account });
      const cw = 'cloudwatch.amazonaws.com';
      return [
        {
          name: 'publish',
          requests: [{ service: cw, action: 'sns:Publish', resource: topic, context: from(ACCOUNT) }],
          expect: 'Allow',
        },
        {
          name: 'data key',
          requests: [{ service: cw, action: 'kms:GenerateDataKey', resource: key, context: from(ACCOUNT) }],
          expect: 'Allow',
        },
        {
          name: 'decrypt',
          requests: [{ service: cw, action: 'kms:Decrypt', resource: key, context: from(ACCOUNT) }],
          expect: 'Allow',
        },
        {
          name: 'publish for another account',
          requests: [{ service: cw, action: 'sns:Publish', resource: topic, context: from(OTHER_ACCOUNT) }],
          expect: 'refused',
        },
        {
          name: 'key for another account',
          requests: [{ service: cw, action: 'kms:GenerateDataKey', resource: key, context: from(OTHER_ACCOUNT) }],
          expect: 'refused',
        },
        {
          name: 'publish with no source (the grant is not unconditioned)',
          requests: [{ service: cw, action: 'sns:Publish', resource: topic }],
          expect: 'refused',
        },
        {
          name: 'another service publishes',
          requests: [
            { service: 'events.amazonaws.com', action: 'sns:Publish', resource: topic, context: from(ACCOUNT) },
          ],
          expect: 'refused',
        },
        {
          name: 'a worker publishes over plain HTTP',
          requests: [
            { as: id.normalizeRole as string, action: 'sns:Publish', resource: topic, secureTransport: false },
          ],
          expect: 'Deny',
        },
        {
          name: 'a worker may not use the alarm key',
          requests: [{ as: id.normalizeRole as string, action: 'kms:Decrypt', resource: key }],
          expect: 'refused',
        },
      ];
    }),
  );

  it(
    "S3 may deliver the input bucket's events to the work queue, for this account only",
    check(() => {
      const queue = policies.arnOf(id.queue as string);
      const from = (bucket: string, account = ACCOUNT) => ({
        'aws:SourceArn': `arn:aws:s3:::${bucket}`,
        'aws:SourceAccount': account,
      });
      const s3 = 's3.amazonaws.com';
      return [
        {
          name: 'send',
          requests: [{ service: s3, action: 'sqs:SendMessage', resource: queue, context: from(input) }],
          expect: 'Allow',
        },
        {
          name: 'a same-named bucket of another account',
          requests: [{ service: s3, action: 'sqs:SendMessage', resource: queue, context: from(input, OTHER_ACCOUNT) }],
          expect: 'refused',
        },
        {
          name: 'the output bucket',
          requests: [{ service: s3, action: 'sqs:SendMessage', resource: queue, context: from(output) }],
          expect: 'refused',
        },
        {
          name: 'the summary queue',
          requests: [
            {
              service: s3,
              action: 'sqs:SendMessage',
              resource: policies.arnOf(id.summaryQueue as string),
              context: from(input),
            },
          ],
          expect: 'refused',
        },
      ];
    }),
  );

  it(
    'each daily schedule rule may send to the summary queue and, failing that, to the schedule DLQ; nothing else',
    check(() => {
      const rules = logicalIdsOfType(synth.json, 'AWS::Events::Rule');
      expect(rules).toHaveLength(7);
      const events = 'events.amazonaws.com';
      const send = (queue: string, rule: string) => ({
        service: events,
        action: 'sqs:SendMessage',
        resource: policies.arnOf(queue),
        context: { 'aws:SourceArn': rule, 'aws:SourceAccount': ACCOUNT },
      });
      const otherRule = `arn:aws:events:${REGION}:${ACCOUNT}:rule/SomeoneElsesRule`;
      return [
        ...rules.map(
          (rule): EdgeCase => ({
            name: `${rule} -> summary queue`,
            requests: [send(id.summaryQueue as string, policies.arnOf(rule))],
            expect: 'Allow',
          }),
        ),
        ...rules.map(
          (rule): EdgeCase => ({
            name: `${rule} -> schedule DLQ`,
            requests: [send(id.scheduleDlq as string, policies.arnOf(rule))],
            expect: 'Allow',
          }),
        ),
        {
          name: 'another rule -> summary queue',
          requests: [send(id.summaryQueue as string, otherRule)],
          expect: 'refused',
        },
        {
          name: 'another rule -> schedule DLQ',
          requests: [send(id.scheduleDlq as string, otherRule)],
          expect: 'refused',
        },
        {
          name: 'a rule -> the normalize queue',
          requests: [send(id.queue as string, policies.arnOf(rules[0] as string))],
          expect: 'refused',
        },
      ];
    }),
  );

  it(
    'S3 server access logs of both data buckets, and of this account only, reach the access-log bucket',
    check(() => {
      // Each bucket logs under its LogFilePrefix.
      const prefixOf = (bucket: string) => {
        const logging = synth.json.Resources[bucketIds[bucket] as string]?.Properties?.LoggingConfiguration;
        return (logging as { LogFilePrefix: string }).LogFilePrefix;
      };
      const put = (source: string, account = ACCOUNT, prefix = prefixOf(source)) => ({
        service: 'logging.s3.amazonaws.com',
        action: 's3:PutObject',
        resource: `arn:aws:s3:::${logs}/${prefix}2026-01-01-00-00-00-ABC`,
        context: { 'aws:SourceArn': `arn:aws:s3:::${source}`, 'aws:SourceAccount': account },
      });
      return [
        { name: 'input', requests: [put(input)], expect: 'Allow' },
        { name: 'output', requests: [put(output)], expect: 'Allow' },
        { name: 'another account', requests: [put(input, OTHER_ACCOUNT)], expect: 'refused' },
        {
          name: 'a bucket not logged here',
          requests: [put('someone-elses-bucket', ACCOUNT, 'Input/')],
          expect: 'refused',
        },
        { name: "under the other bucket's prefix", requests: [put(input, ACCOUNT, 'Output/')], expect: 'refused' },
        {
          name: 'a worker writes the access logs',
          requests: s3As(id.normalizeRole as string).putObject(logs, 'Input/x', { ifNoneMatch: '*' }),
          expect: 'ImplicitDeny',
        },
        {
          name: 'the access logs over plain HTTP',
          requests: [
            {
              as: id.normalizeRole as string,
              action: 's3:GetObject',
              resource: `arn:aws:s3:::${logs}/Input/x`,
              secureTransport: false,
            },
          ],
          expect: 'Deny',
        },
        {
          name: 'the access logs below TLS 1.2',
          requests: [
            {
              as: id.normalizeRole as string,
              action: 's3:GetObject',
              resource: `arn:aws:s3:::${logs}/Input/x`,
              context: { 's3:TlsVersion': '1.1' },
            },
          ],
          expect: 'Deny',
        },
      ];
    }),
  );

  it(
    'the normalize role reads uploads, writes (conditionally) and deletes (If-Match) its outputs, and nothing else in S3',
    check(() => {
      const s3 = s3As(id.normalizeRole as string);
      const out = 'normalized/in/dt=2026-01-01/a.csv.ndjson';
      const q = 'quarantine/in/dt=2026-01-01/a.csv.ndjson';
      const etag = '"0123abcd"';
      return [
        { name: 'get an upload', requests: s3.getObject(input, 'incoming/dt=2026-01-01/a.csv'), expect: 'Allow' },
        { name: 'get outside incoming/', requests: s3.getObject(input, 'private/a.csv'), expect: 'ImplicitDeny' },
        {
          name: 'write an input',
          requests: s3.putObject(input, 'incoming/a.csv', { ifNoneMatch: '*' }),
          expect: 'ImplicitDeny',
        },
        {
          name: 'delete an input',
          requests: s3.deleteObject(input, 'incoming/a.csv', { ifMatch: etag }),
          expect: 'ImplicitDeny',
        },
        { name: 'list incoming/', requests: s3.listObjects(input, 'incoming/dt=2026-01-01/'), expect: 'Allow' },
        {
          name: 'list another prefix of the input',
          requests: s3.listObjects(input, 'private/'),
          expect: 'ImplicitDeny',
        },
        // The price of StringLikeIfExists (docs/DEPLOY.md, "Permissions: why ListBucket").
        { name: 'list without a prefix', requests: s3.listObjects(input), expect: 'Allow' },
        { name: 'done-check HEAD', requests: s3.getObject(output, out), expect: 'Allow' },
        { name: 'create an output', requests: s3.putObject(output, out, { ifNoneMatch: '*' }), expect: 'Allow' },
        {
          name: 'replace an output (If-Match)',
          requests: s3.putObject(output, out, { ifMatch: etag }),
          expect: 'Allow',
        },
        { name: 'blind overwrite of an output', requests: s3.putObject(output, out), expect: 'Deny' },
        { name: 'start a multipart output', requests: s3.createMultipartUpload(output, out), expect: 'Allow' },
        { name: 'upload a part', requests: s3.uploadPart(output, out), expect: 'Allow' },
        {
          name: 'complete a multipart output (If-None-Match)',
          requests: s3.completeMultipartUpload(output, out, { ifNoneMatch: '*' }),
          expect: 'Allow',
        },
        {
          name: 'complete a multipart output blind',
          requests: s3.completeMultipartUpload(output, out),
          expect: 'Deny',
        },
        { name: 'abort a multipart output', requests: s3.abortMultipartUpload(output, out), expect: 'Allow' },
        {
          name: 'seal an output: CopyObject onto itself with If-Match',
          requests: s3.copyObject(output, out, { bucket: output, key: out }, { ifMatch: etag }),
          expect: 'Allow',
        },
        {
          name: 'CopyObject onto an output without a condition',
          requests: s3.copyObject(output, out, { bucket: output, key: out }),
          expect: 'Deny',
        },
        {
          name: 'seal an output: UploadPartCopy of itself, completed with If-Match',
          requests: s3.sealByPartCopy(output, out, { ifMatch: etag }),
          expect: 'Allow',
        },
        {
          name: 'a part-copy seal completed without a condition',
          requests: s3.sealByPartCopy(output, out, {}),
          expect: 'Deny',
        },
        {
          name: 'write a quarantine side output',
          requests: s3.putObject(output, q, { ifNoneMatch: '*' }),
          expect: 'Allow',
        },
        {
          name: 'delete an output (If-Match)',
          requests: s3.deleteObject(output, out, { ifMatch: etag }),
          expect: 'Allow',
        },
        { name: 'delete an output blind', requests: s3.deleteObject(output, out), expect: 'Deny' },
        { name: 'delete a quarantine object blind', requests: s3.deleteObject(output, q), expect: 'Deny' },
        { name: 'list its outputs', requests: s3.listObjects(output, 'normalized/in/'), expect: 'Allow' },
        { name: 'list summaries', requests: s3.listObjects(output, 'summaries/'), expect: 'ImplicitDeny' },
        {
          name: 'write a summary',
          requests: s3.putObject(output, 'summaries/dt=2026-01-01/s.json', { ifNoneMatch: '*' }),
          expect: 'ImplicitDeny',
        },
        {
          name: 'record a failure',
          requests: s3.putObject(output, 'failures/q/m.json', { ifNoneMatch: '*' }),
          expect: 'Allow',
        },
        {
          name: 'complete a failure record (If-Match)',
          requests: s3.putObject(output, 'failures/q/m.json', { ifMatch: etag }),
          expect: 'Allow',
        },
        {
          name: 'overwrite a failure record blind',
          requests: s3.putObject(output, 'failures/q/m.json'),
          expect: 'Deny',
        },
        {
          name: 'remove a provisional failure record',
          requests: s3.deleteObject(output, 'failures/q/m.json', { ifMatch: etag }),
          expect: 'Allow',
        },
        { name: 'list failure records', requests: s3.listObjects(output, 'failures/q/'), expect: 'Allow' },
        {
          name: 'mark its code version (create-only)',
          requests: s3.putObject(output, 'code-versions/normalize/normalize%402', { ifNoneMatch: '*' }),
          expect: 'Allow',
        },
        {
          name: 'overwrite a code-version marker blind',
          requests: s3.putObject(output, 'code-versions/normalize/x'),
          expect: 'Deny',
        },
        { name: 'read the access logs', requests: s3.getObject(logs, 'input/2026-01-01'), expect: 'ImplicitDeny' },
        {
          name: 'any S3 request over plain HTTP',
          requests: [
            {
              as: id.normalizeRole as string,
              action: 's3:GetObject',
              resource: `arn:aws:s3:::${input}/incoming/a.csv`,
              secureTransport: false,
            },
          ],
          expect: 'Deny',
        },
        {
          name: 'an S3 request below TLS 1.2',
          requests: [
            {
              as: id.normalizeRole as string,
              action: 's3:GetObject',
              resource: `arn:aws:s3:::${input}/incoming/a.csv`,
              context: { 's3:TlsVersion': '1.1' },
            },
          ],
          expect: 'Deny',
        },
      ];
    }),
  );

  it(
    "the summarize role reads its lineage, lists the day's inputs, writes and deletes (conditionally) summaries, and cannot touch inputs or outputs",
    check(() => {
      const s3 = s3As(id.summarizeRole as string);
      const summary = 'summaries/in/dt=2026-01-01/summary.json';
      const etag = '"0123abcd"';
      return [
        {
          name: 'list the inputs of a day',
          requests: s3.listObjects(input, 'incoming/dt=2026-01-01/'),
          expect: 'Allow',
        },
        {
          name: 'read an input',
          requests: s3.getObject(input, 'incoming/dt=2026-01-01/a.csv'),
          expect: 'ImplicitDeny',
        },
        {
          name: 'read a normalized output',
          requests: s3.getObject(output, 'normalized/in/dt=2026-01-01/a.ndjson'),
          expect: 'Allow',
        },
        {
          name: 'read a quarantine object',
          requests: s3.getObject(output, 'quarantine/in/dt=2026-01-01/a.ndjson'),
          expect: 'Allow',
        },
        { name: 'list the lineage', requests: s3.listObjects(output, 'normalized/in/dt=2026-01-01/'), expect: 'Allow' },
        {
          name: 'write a normalized output',
          requests: s3.putObject(output, 'normalized/in/dt=2026-01-01/a.ndjson', { ifNoneMatch: '*' }),
          expect: 'ImplicitDeny',
        },
        { name: 'create a summary', requests: s3.putObject(output, summary, { ifNoneMatch: '*' }), expect: 'Allow' },
        {
          name: 'replace a summary (If-Match)',
          requests: s3.putObject(output, summary, { ifMatch: etag }),
          expect: 'Allow',
        },
        { name: 'overwrite a summary blind', requests: s3.putObject(output, summary), expect: 'Deny' },
        { name: 'upload a summary part', requests: s3.uploadPart(output, summary), expect: 'Allow' },
        { name: 'abort a summary upload', requests: s3.abortMultipartUpload(output, summary), expect: 'Allow' },
        {
          name: 'delete a staging copy (If-Match)',
          requests: s3.deleteObject(output, 'summaries/.staging/x', { ifMatch: etag }),
          expect: 'Allow',
        },
        { name: 'delete a summary blind', requests: s3.deleteObject(output, summary), expect: 'Deny' },
        { name: 'list summaries', requests: s3.listObjects(output, 'summaries/in/'), expect: 'Allow' },
        {
          name: 'record a failure',
          requests: s3.putObject(output, 'failures/q/m.json', { ifNoneMatch: '*' }),
          expect: 'Allow',
        },
        { name: 'list the failure index', requests: s3.listObjects(output, 'failures/.by-input/'), expect: 'Allow' },
        {
          name: 'write a code-version marker',
          requests: s3.putObject(output, 'code-versions/x', { ifNoneMatch: '*' }),
          expect: 'ImplicitDeny',
        },
        {
          name: 'read the lineage over plain HTTP',
          requests: [
            {
              as: id.summarizeRole as string,
              action: 's3:GetObject',
              resource: `arn:aws:s3:::${output}/normalized/a`,
              secureTransport: false,
            },
          ],
          expect: 'Deny',
        },
        {
          name: 'read the lineage below TLS 1.2',
          requests: [
            {
              as: id.summarizeRole as string,
              action: 's3:GetObject',
              resource: `arn:aws:s3:::${output}/normalized/a`,
              context: { 's3:TlsVersion': '1.0' },
            },
          ],
          expect: 'Deny',
        },
      ];
    }),
  );

  it(
    'each worker consumes and defers messages of its own queue only; normalize may requeue to it, none may purge or read another queue',
    check(() => {
      const sqs = (as: string, action: string, queue: string, secureTransport = true) => ({
        name: `${as} ${action} ${queue}${secureTransport ? '' : ' over plain HTTP'}`,
        requests: [{ as, action, resource: policies.arnOf(queue), secureTransport }],
      });
      const n = id.normalizeRole as string;
      const s = id.summarizeRole as string;
      const consume = [
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
      ];
      return [
        ...consume.map((a): EdgeCase => ({ ...sqs(n, a, id.queue as string), expect: 'Allow' })),
        ...consume.map((a): EdgeCase => ({ ...sqs(s, a, id.summaryQueue as string), expect: 'Allow' })),
        // The records a deadline leaves go back to its own queue as a new message (requeue).
        { ...sqs(n, 'sqs:SendMessage', id.queue as string), expect: 'Allow' },
        { ...sqs(n, 'sqs:SendMessage', id.summaryQueue as string), expect: 'ImplicitDeny' },
        { ...sqs(n, 'sqs:SendMessage', id.dlq as string), expect: 'ImplicitDeny' },
        { ...sqs(n, 'sqs:PurgeQueue', id.queue as string), expect: 'ImplicitDeny' },
        { ...sqs(n, 'sqs:ReceiveMessage', id.summaryQueue as string), expect: 'ImplicitDeny' },
        { ...sqs(n, 'sqs:ReceiveMessage', id.dlq as string), expect: 'ImplicitDeny' },
        { ...sqs(s, 'sqs:ReceiveMessage', id.queue as string), expect: 'ImplicitDeny' },
        { ...sqs(s, 'sqs:SendMessage', id.summaryQueue as string), expect: 'ImplicitDeny' },
        { ...sqs(s, 'sqs:ReceiveMessage', id.summaryDlq as string), expect: 'ImplicitDeny' },
        { ...sqs(n, 'sqs:ReceiveMessage', id.queue as string, false), expect: 'Deny' },
        { ...sqs(n, 'sqs:GetQueueAttributes', id.dlq as string, false), expect: 'Deny' },
        { ...sqs(s, 'sqs:ReceiveMessage', id.summaryQueue as string, false), expect: 'Deny' },
        { ...sqs(s, 'sqs:GetQueueAttributes', id.summaryDlq as string, false), expect: 'Deny' },
        { ...sqs(s, 'sqs:GetQueueAttributes', id.scheduleDlq as string, false), expect: 'Deny' },
      ];
    }),
  );

  it(
    'the normalize role uses the ledger with item operations only; the summarize role not at all',
    check(() => {
      const table = policies.arnOf(id.table as string);
      const item = (as: string, action: string) => ({
        name: `${as} ${action}`,
        requests: [{ as, action, resource: table }],
      });
      const n = id.normalizeRole as string;
      return [
        ...['dynamodb:PutItem', 'dynamodb:UpdateItem'].map((a): EdgeCase => ({ ...item(n, a), expect: 'Allow' })),
        // Never sent by the ledger adapter (src/ledger/DynamoDBLedger.ts): not granted.
        { ...item(n, 'dynamodb:GetItem'), expect: 'ImplicitDeny' },
        { ...item(n, 'dynamodb:DeleteItem'), expect: 'ImplicitDeny' },
        { ...item(n, 'dynamodb:Scan'), expect: 'ImplicitDeny' },
        { ...item(n, 'dynamodb:Query'), expect: 'ImplicitDeny' },
        { ...item(n, 'dynamodb:DeleteTable'), expect: 'ImplicitDeny' },
        { ...item(id.summarizeRole as string, 'dynamodb:GetItem'), expect: 'ImplicitDeny' },
      ];
    }),
  );

  it(
    'each worker writes its own log group and traces; neither reads secrets, parameters or keys at run time',
    check(() => {
      const stream = (logGroup: string) =>
        `${policies.arnOf(logGroup).replace(/:\*$/, '')}:log-stream:2026/01/01/[$LATEST]abc`;
      const n = id.normalizeRole as string;
      const s = id.summarizeRole as string;
      const secret = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:rerun/webhook-AbCdEf`;
      const parameter = `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter/rerun/webhook-url`;
      const call = (as: string, action: string, resource: string) => ({
        name: `${as} ${action} ${resource}`,
        requests: [{ as, action, resource }],
      });
      return [
        { ...call(n, 'logs:PutLogEvents', stream(id.normalizeLogs as string)), expect: 'Allow' },
        { ...call(n, 'logs:CreateLogStream', stream(id.normalizeLogs as string)), expect: 'Allow' },
        { ...call(s, 'logs:PutLogEvents', stream(id.summarizeLogs as string)), expect: 'Allow' },
        { ...call(s, 'logs:CreateLogStream', stream(id.summarizeLogs as string)), expect: 'Allow' },
        { ...call(n, 'logs:PutLogEvents', stream(id.summarizeLogs as string)), expect: 'ImplicitDeny' },
        { ...call(s, 'logs:PutLogEvents', stream(id.normalizeLogs as string)), expect: 'ImplicitDeny' },
        { ...call(n, 'xray:PutTraceSegments', '*'), expect: 'Allow' },
        { ...call(n, 'xray:PutTelemetryRecords', '*'), expect: 'Allow' },
        { ...call(s, 'xray:PutTraceSegments', '*'), expect: 'Allow' },
        { ...call(s, 'xray:PutTelemetryRecords', '*'), expect: 'Allow' },
        // The webhook URL is a dynamic reference CloudFormation resolves at deploy time.
        { ...call(n, 'secretsmanager:GetSecretValue', secret), expect: 'refused' },
        { ...call(n, 'ssm:GetParameter', parameter), expect: 'ImplicitDeny' },
        { ...call(s, 'secretsmanager:GetSecretValue', secret), expect: 'refused' },
        { ...call(s, 'kms:Decrypt', policies.arnOf(id.key as string)), expect: 'refused' },
      ];
    }),
  );

  it(
    "CDK's bucket-notification handler may configure the input bucket's notifications and nothing else",
    check(() => {
      const h = id.notificationsRole as string;
      return [
        {
          name: 'input',
          requests: [{ as: h, action: 's3:PutBucketNotification', resource: `arn:aws:s3:::${input}` }],
          expect: 'Allow',
        },
        {
          name: 'output',
          requests: [{ as: h, action: 's3:PutBucketNotification', resource: `arn:aws:s3:::${output}` }],
          expect: 'ImplicitDeny',
        },
        { name: 'read', requests: s3As(h).getObject(input, 'incoming/a.csv'), expect: 'ImplicitDeny' },
      ];
    }),
  );

  it('every grant and every resource-policy statement of the template decided some case above', () => {
    const missing = statementsToExercise(policies).filter((sid) => !engine.exercised.has(sid));
    expect(missing.map((sid) => `${sid}: ${JSON.stringify(policies.statements.get(sid)?.statement)}`)).toEqual([]);
  });
});

/** A user's app with one RerunPipeline (prebuilt inline code: the policies do not depend on the bundle). */
function synthPipeline(props: (stack: Stack) => Partial<RerunPipelineProps>) {
  const outdir = mkdtempSync(join(tmpdir(), 'rerun-policy-test-'));
  const app = new App({ outdir });
  const stack = new Stack(app, 'Uploads');
  new RerunPipeline(stack, 'Pipeline', {
    worker: {
      code: Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });'),
      handler: 'index.handler',
    },
    ...props(stack),
  });
  const json = Template.fromStack(stack).toJSON() as CfnTemplate;
  rmSync(outdir, { recursive: true, force: true });
  return json;
}

/** The logical ids of a RerunPipeline stack's resources. */
function pipelineIds(json: CfnTemplate) {
  const one = (type: string, prefix: string) => resourceOf(json, type, prefix).id;
  return {
    role: one('AWS::IAM::Role', 'PipelineWorkerRole'),
    notificationsRole: one('AWS::IAM::Role', 'BucketNotificationsHandler'),
    queue: one('AWS::SQS::Queue', 'PipelineWorkerQueue'),
    dlq: one('AWS::SQS::Queue', 'PipelineWorkerDeadLetterQueue'),
    topic: one('AWS::SNS::Topic', 'PipelineAlarmTopic'),
    topicKey: one('AWS::KMS::Key', 'PipelineAlarmTopicKey'),
    logGroup: one('AWS::Logs::LogGroup', 'PipelineWorkerLogGroup'),
    // Only a pipeline whose worker uses the ledger has one (RerunPipeline's `ledger`).
    table: logicalIdsOfType(json, 'AWS::DynamoDB::Table').find((t) => t.startsWith('PipelineLedger')),
  };
}

/** A synthesized RerunPipeline stack, for the case builders below. */
interface PipelineUnderTest {
  readonly policies: TemplatePolicies;
  readonly id: ReturnType<typeof pipelineIds>;
  readonly input: string;
  readonly output: string;
  readonly logs: string;
}

/** Cases that need the input bucket's own policy and access logging (an existing bucket has neither here). */
const CREATED_INPUT_ONLY = new Set([
  'TLS 1.1',
  'input over plain HTTP',
  'logs of input',
  'logs, another account',
  'notifications handler',
]);

/**
 * The worker reads uploads and writes (conditionally), seals and deletes (If-Match) under upper/ and failures/ only,
 * and creates its code-version markers under code-versions/ (create-only, nothing else).
 */
function workerS3Cases(p: PipelineUnderTest): EdgeCase[] {
  const { id, input, output, logs } = p;
  const s3 = s3As(id.role);
  const out = 'upper/in/a.csv';
  const etag = '"e1"';
  const http = {
    as: id.role,
    action: 's3:GetObject',
    resource: `arn:aws:s3:::${output}/${out}`,
    secureTransport: false,
  };
  const oldTls = {
    as: id.role,
    action: 's3:GetObject',
    resource: `arn:aws:s3:::${input}/incoming/a.csv`,
    context: { 's3:TlsVersion': '1.1' },
  };
  return [
    { name: 'get an upload', requests: s3.getObject(input, 'incoming/a.csv'), expect: 'Allow' },
    { name: 'list the uploads', requests: s3.listObjects(input, 'incoming/'), expect: 'Allow' },
    { name: 'done-check HEAD', requests: s3.getObject(output, out), expect: 'Allow' },
    { name: 'create the output', requests: s3.putObject(output, out, { ifNoneMatch: '*' }), expect: 'Allow' },
    { name: 'replace the output', requests: s3.putObject(output, out, { ifMatch: etag }), expect: 'Allow' },
    { name: 'blind overwrite', requests: s3.putObject(output, out), expect: 'Deny' },
    { name: 'multipart: start', requests: s3.createMultipartUpload(output, out), expect: 'Allow' },
    { name: 'multipart: part', requests: s3.uploadPart(output, out), expect: 'Allow' },
    {
      name: 'multipart: complete',
      requests: s3.completeMultipartUpload(output, out, { ifNoneMatch: '*' }),
      expect: 'Allow',
    },
    { name: 'multipart: abort', requests: s3.abortMultipartUpload(output, out), expect: 'Allow' },
    {
      name: 'seal: CopyObject onto itself with If-Match',
      requests: s3.copyObject(output, out, { bucket: output, key: out }, { ifMatch: etag }),
      expect: 'Allow',
    },
    {
      name: 'CopyObject without a condition',
      requests: s3.copyObject(output, out, { bucket: output, key: out }),
      expect: 'Deny',
    },
    {
      name: 'seal: UploadPartCopy of itself, completed with If-Match',
      requests: s3.sealByPartCopy(output, out, { ifMatch: etag }),
      expect: 'Allow',
    },
    { name: 'delete (If-Match)', requests: s3.deleteObject(output, out, { ifMatch: etag }), expect: 'Allow' },
    { name: 'delete blind', requests: s3.deleteObject(output, out), expect: 'Deny' },
    { name: 'list upper/', requests: s3.listObjects(output, 'upper/'), expect: 'Allow' },
    {
      name: 'record a failure',
      requests: s3.putObject(output, 'failures/q/m.json', { ifNoneMatch: '*' }),
      expect: 'Allow',
    },
    {
      name: 'overwrite a failure record blind',
      requests: s3.putObject(output, 'failures/q/m.json'),
      expect: 'Deny',
    },
    { name: 'list failures', requests: s3.listObjects(output, 'failures/'), expect: 'Allow' },
    {
      name: 'mark its code version (create-only)',
      requests: s3.putObject(output, 'code-versions/upper/upper%401', { ifNoneMatch: '*' }),
      expect: 'Allow',
    },
    {
      name: 'overwrite a code-version marker blind',
      requests: s3.putObject(output, 'code-versions/upper/upper%401'),
      expect: 'Deny',
    },
    {
      name: 'read a code-version marker',
      requests: s3.getObject(output, 'code-versions/upper/upper%401'),
      expect: 'ImplicitDeny',
    },
    {
      name: 'delete a code-version marker',
      requests: s3.deleteObject(output, 'code-versions/upper/upper%401', { ifMatch: etag }),
      expect: 'ImplicitDeny',
    },
    {
      name: 'list the code-version markers',
      requests: s3.listObjects(output, 'code-versions/'),
      expect: 'ImplicitDeny',
    },
    {
      name: "write the normalizer's prefix",
      requests: s3.putObject(output, 'normalized/a', { ifNoneMatch: '*' }),
      expect: 'ImplicitDeny',
    },
    {
      name: 'write an input',
      requests: s3.putObject(input, 'incoming/a', { ifNoneMatch: '*' }),
      expect: 'ImplicitDeny',
    },
    { name: 'plain HTTP', requests: [http], expect: 'Deny' },
    { name: 'TLS 1.1', requests: [oldTls], expect: 'Deny' },
    {
      name: 'output bucket below TLS 1.2',
      requests: [{ ...oldTls, resource: `arn:aws:s3:::${output}/${out}` }],
      expect: 'Deny',
    },
    {
      name: 'input over plain HTTP',
      requests: [{ ...http, resource: `arn:aws:s3:::${input}/incoming/a.csv` }],
      expect: 'Deny',
    },
    {
      name: 'access logs over plain HTTP',
      requests: [{ ...http, resource: `arn:aws:s3:::${logs}/Input/x` }],
      expect: 'Deny',
    },
    {
      name: 'access logs below TLS 1.2',
      requests: [{ ...oldTls, resource: `arn:aws:s3:::${logs}/Input/x` }],
      expect: 'Deny',
    },
  ];
}
/** Its services: S3 events to the queue, access logs, CloudWatch alarms to the topic and its key; this account only. */
function serviceCases(p: PipelineUnderTest): EdgeCase[] {
  const { policies, id, input, output, logs } = p;
  const mine = (source: string) => ({ 'aws:SourceArn': source, 'aws:SourceAccount': ACCOUNT });
  const theirs = (source: string) => ({ 'aws:SourceArn': source, 'aws:SourceAccount': OTHER_ACCOUNT });
  const queue = policies.arnOf(id.queue);
  const topic = policies.arnOf(id.topic);
  const key = policies.arnOf(id.topicKey);
  const log = (prefix: string) => `arn:aws:s3:::${logs}/${prefix}x`;
  return [
    {
      name: 'S3 -> queue',
      requests: [
        {
          service: 's3.amazonaws.com',
          action: 'sqs:SendMessage',
          resource: queue,
          context: mine(`arn:aws:s3:::${input}`),
        },
      ],
      expect: 'Allow',
    },
    {
      name: 'S3 -> queue, another account',
      requests: [
        {
          service: 's3.amazonaws.com',
          action: 'sqs:SendMessage',
          resource: queue,
          context: theirs(`arn:aws:s3:::${input}`),
        },
      ],
      expect: 'refused',
    },
    {
      name: 'logs of input',
      requests: [
        {
          service: 'logging.s3.amazonaws.com',
          action: 's3:PutObject',
          resource: log('Input/'),
          context: mine(`arn:aws:s3:::${input}`),
        },
      ],
      expect: 'Allow',
    },
    {
      name: 'logs of output',
      requests: [
        {
          service: 'logging.s3.amazonaws.com',
          action: 's3:PutObject',
          resource: log('Output/'),
          context: mine(`arn:aws:s3:::${output}`),
        },
      ],
      expect: 'Allow',
    },
    {
      name: 'logs, another account',
      requests: [
        {
          service: 'logging.s3.amazonaws.com',
          action: 's3:PutObject',
          resource: log('Input/'),
          context: theirs(`arn:aws:s3:::${input}`),
        },
      ],
      expect: 'refused',
    },
    {
      name: 'alarm -> topic',
      requests: [
        { service: 'cloudwatch.amazonaws.com', action: 'sns:Publish', resource: topic, context: mine(alarmArn()) },
      ],
      expect: 'Allow',
    },
    {
      name: 'alarm -> key',
      requests: [
        {
          service: 'cloudwatch.amazonaws.com',
          action: 'kms:GenerateDataKey',
          resource: key,
          context: mine(alarmArn()),
        },
      ],
      expect: 'Allow',
    },
    {
      name: 'alarm of another account -> topic',
      requests: [
        {
          service: 'cloudwatch.amazonaws.com',
          action: 'sns:Publish',
          resource: topic,
          context: theirs(alarmArn(OTHER_ACCOUNT)),
        },
      ],
      expect: 'refused',
    },
    {
      name: 'alarm of another account -> key',
      requests: [
        {
          service: 'cloudwatch.amazonaws.com',
          action: 'kms:Decrypt',
          resource: key,
          context: theirs(alarmArn(OTHER_ACCOUNT)),
        },
      ],
      expect: 'refused',
    },
    {
      name: 'publish over plain HTTP',
      requests: [{ as: id.role, action: 'sns:Publish', resource: topic, secureTransport: false }],
      expect: 'Deny',
    },
  ];
}
/**
 * The worker consumes its queue, uses the ledger when it has one (and no table at all otherwise),
 * writes its logs and traces; no secret, parameter or key.
 */
function workerOtherCases(p: PipelineUnderTest): EdgeCase[] {
  const { policies, id, input } = p;
  const r = (action: string, resource: string, secureTransport = true) => ({
    name: `${action} ${resource}${secureTransport ? '' : ' over HTTP'}`,
    requests: [{ as: id.role, action, resource, secureTransport }],
  });
  const queue = policies.arnOf(id.queue);
  // Without a ledger, any table of the account: the worker may touch none.
  const table = id.table ? policies.arnOf(id.table) : `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/any-ledger`;
  const stream = `${policies.arnOf(id.logGroup).replace(/:\*$/, '')}:log-stream:s`;
  return [
    ...[
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
    ].map((a): EdgeCase => ({ ...r(a, queue), expect: 'Allow' })),
    // Requeue: the records a deadline leaves go back to its own queue, never to the DLQ.
    { ...r('sqs:SendMessage', queue), expect: 'Allow' },
    { ...r('sqs:SendMessage', policies.arnOf(id.dlq)), expect: 'ImplicitDeny' },
    { ...r('sqs:ReceiveMessage', policies.arnOf(id.dlq)), expect: 'ImplicitDeny' },
    { ...r('sqs:ReceiveMessage', queue, false), expect: 'Deny' },
    { ...r('sqs:GetQueueAttributes', policies.arnOf(id.dlq), false), expect: 'Deny' },
    ...['dynamodb:PutItem', 'dynamodb:UpdateItem'].map(
      (a): EdgeCase => ({ ...r(a, table), expect: id.table ? 'Allow' : 'ImplicitDeny' }),
    ),
    ...['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:Scan'].map(
      (a): EdgeCase => ({ ...r(a, table), expect: 'ImplicitDeny' }),
    ),
    { ...r('logs:CreateLogStream', stream), expect: 'Allow' },
    { ...r('logs:PutLogEvents', stream), expect: 'Allow' },
    { ...r('xray:PutTraceSegments', '*'), expect: 'Allow' },
    { ...r('xray:PutTelemetryRecords', '*'), expect: 'Allow' },
    {
      ...r('secretsmanager:GetSecretValue', `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:hook-AbCdEf`),
      expect: 'refused',
    },
    { ...r('ssm:GetParameter', `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter/hook`), expect: 'ImplicitDeny' },
    { ...r('kms:Decrypt', policies.arnOf(id.topicKey)), expect: 'refused' },
    {
      name: 'notifications handler',
      requests: [{ as: id.notificationsRole, action: 's3:PutBucketNotification', resource: `arn:aws:s3:::${input}` }],
      expect: 'Allow',
    },
  ];
}

describe("a RerunPipeline stack as the README deploys it (outputPrefixes: ['upper/'])", () => {
  let p: PipelineUnderTest;
  let engine: PolicyEngine;

  beforeAll(async () => {
    const json = synthPipeline(() => ({ outputPrefixes: ['upper/'], outputs: true }));
    const policies = templatePolicies(json);
    engine = await policyEngine(policies);
    p = {
      policies,
      id: pipelineIds(json),
      input: policies.nameOf(resourceOf(json, 'AWS::S3::Bucket', 'PipelineInput').id),
      output: policies.nameOf(resourceOf(json, 'AWS::S3::Bucket', 'PipelineOutput').id),
      logs: policies.nameOf(resourceOf(json, 'AWS::S3::Bucket', 'PipelineAccessLogs').id),
    };
  }, 120_000);

  const check = (cases: () => EdgeCase[]) => () => {
    const { actual, expected } = decideCases(engine, cases());
    expect(actual).toEqual(expected);
  };

  it(
    'the worker reads uploads and writes (conditionally), seals and deletes (If-Match) under upper/ and failures/ only',
    check(() => workerS3Cases(p)),
  );

  it(
    'its services: S3 events to the queue, access logs, CloudWatch alarms to the topic and its key; this account only',
    check(() => serviceCases(p)),
  );

  it(
    'the worker consumes its queue, writes its logs and traces; no ledger table, no DynamoDB grant, no secret, parameter or key',
    check(() => {
      expect(p.id.table).toBeUndefined();
      return workerOtherCases(p);
    }),
  );

  it('every grant and every resource-policy statement of the template decided some case above', () => {
    const missing = statementsToExercise(p.policies).filter((sid) => !engine.exercised.has(sid));
    expect(missing.map((sid) => `${sid}: ${JSON.stringify(p.policies.statements.get(sid)?.statement)}`)).toEqual([]);
  });
});

describe('a RerunPipeline stack with KMS everywhere: an existing SSE-KMS input bucket, an SSE-KMS output bucket, a KMS queue and ledger', () => {
  let policies: TemplatePolicies;
  let engine: PolicyEngine;
  let id: ReturnType<typeof pipelineIds> & { inputKey: string; outputKey: string; queueKey: string; ledgerKey: string };
  const input = 'existing-input-bucket';
  let output: string;
  let json: CfnTemplate;

  beforeAll(async () => {
    json = synthPipeline((stack) => {
      const inputKey = new Key(stack, 'InputKey', { enableKeyRotation: true });
      return {
        existingInputBucketObj: Bucket.fromBucketAttributes(stack, 'ExistingInput', {
          bucketName: input,
          encryptionKey: inputKey,
        }),
        outputBucketProps: { encryptionKey: new Key(stack, 'OutputKey', { enableKeyRotation: true }) },
        queueProps: { encryption: QueueEncryption.KMS },
        ledgerTableProps: { encryptionKey: new Key(stack, 'LedgerKey', { enableKeyRotation: true }) },
        outputPrefixes: ['upper/'],
      };
    });
    policies = templatePolicies(json);
    engine = await policyEngine(policies);
    id = {
      ...pipelineIds(json),
      inputKey: resourceOf(json, 'AWS::KMS::Key', 'InputKey').id,
      outputKey: resourceOf(json, 'AWS::KMS::Key', 'OutputKey').id,
      queueKey: resourceOf(json, 'AWS::KMS::Key', 'PipelineWorkerQueueKey').id,
      ledgerKey: resourceOf(json, 'AWS::KMS::Key', 'LedgerKey').id,
    };
    output = policies.nameOf(resourceOf(json, 'AWS::S3::Bucket', 'PipelineOutput').id);
  }, 120_000);

  const check = (cases: () => EdgeCase[]) => () => {
    const { actual, expected } = decideCases(engine, cases());
    expect(actual).toEqual(expected);
  };
  /** A KMS request S3, SQS or DynamoDB makes with the worker's credentials. */
  const via = (service: string, action: string, key: string) => ({
    as: id.role,
    action,
    resource: policies.arnOf(key),
    context: { 'kms:ViaService': `${service}.${REGION}.amazonaws.com`, 'kms:CallerAccount': ACCOUNT },
  });

  it(
    'the worker reads SSE-KMS uploads and writes SSE-KMS outputs (single, multipart, sealed by CopyObject) through S3 only',
    check(() => {
      const s3 = s3As(id.role);
      const out = 'upper/a.csv';
      const etag = '"e1"';
      return [
        {
          name: 'GET an upload',
          requests: [...s3.getObject(input, 'incoming/a.csv'), via('s3', 'kms:Decrypt', id.inputKey)],
          expect: 'Allow',
        },
        {
          name: 'PUT an output',
          requests: [
            ...s3.putObject(output, out, { ifNoneMatch: '*' }),
            via('s3', 'kms:GenerateDataKey', id.outputKey),
          ],
          expect: 'Allow',
        },
        {
          name: 'multipart output (parts under one data key, decrypted to complete)',
          requests: [
            ...s3.createMultipartUpload(output, out),
            via('s3', 'kms:GenerateDataKey', id.outputKey),
            ...s3.uploadPart(output, out),
            via('s3', 'kms:Decrypt', id.outputKey),
            ...s3.completeMultipartUpload(output, out, { ifNoneMatch: '*' }),
          ],
          expect: 'Allow',
        },
        {
          name: 'seal by CopyObject onto itself',
          requests: [
            ...s3.copyObject(output, out, { bucket: output, key: out }, { ifMatch: etag }),
            via('s3', 'kms:Decrypt', id.outputKey),
            via('s3', 'kms:GenerateDataKey', id.outputKey),
          ],
          expect: 'Allow',
        },
        {
          name: 'done-check GET of an output',
          requests: [...s3.getObject(output, out), via('s3', 'kms:Decrypt', id.outputKey)],
          expect: 'Allow',
        },
        {
          name: 'encrypt under the input key (read only)',
          requests: [via('s3', 'kms:GenerateDataKey', id.inputKey)],
          expect: 'refused',
        },
        {
          name: 'the input key outside S3',
          requests: [{ as: id.role, action: 'kms:Decrypt', resource: policies.arnOf(id.inputKey) }],
          expect: 'refused',
        },
        {
          name: 'the input key through another service',
          requests: [via('sqs', 'kms:Decrypt', id.inputKey)],
          expect: 'refused',
        },
        {
          name: 'the output key through DynamoDB',
          requests: [via('dynamodb', 'kms:Decrypt', id.outputKey)],
          expect: 'refused',
        },
      ];
    }),
  );

  it(
    "S3 may encrypt events into the KMS queue; the worker may decrypt them, and only its queue's key through SQS",
    check(() => {
      const queue = policies.arnOf(id.queue);
      const key = policies.arnOf(id.queueKey);
      const from = { 'aws:SourceArn': `arn:aws:s3:::${input}`, 'aws:SourceAccount': ACCOUNT };
      const s3 = 's3.amazonaws.com';
      return [
        {
          name: 'S3 sends an event',
          requests: [
            { service: s3, action: 'sqs:SendMessage', resource: queue, context: from },
            { service: s3, action: 'kms:GenerateDataKey', resource: key, context: from },
            { service: s3, action: 'kms:Decrypt', resource: key, context: from },
          ],
          expect: 'Allow',
        },
        {
          name: 'another service uses the queue key',
          requests: [{ service: 'sns.amazonaws.com', action: 'kms:GenerateDataKey', resource: key }],
          expect: 'refused',
        },
        {
          name: 'the worker receives',
          requests: [
            { as: id.role, action: 'sqs:ReceiveMessage', resource: queue },
            via('sqs', 'kms:Decrypt', id.queueKey),
          ],
          expect: 'Allow',
        },
        {
          // The records a deadline leaves go back to its own queue: a send encrypts a new data key.
          name: 'the worker requeues to its own queue',
          requests: [
            { as: id.role, action: 'sqs:SendMessage', resource: queue },
            via('sqs', 'kms:GenerateDataKey', id.queueKey),
            via('sqs', 'kms:Decrypt', id.queueKey),
          ],
          expect: 'Allow',
        },
        {
          name: 'the queue key through S3',
          requests: [via('s3', 'kms:GenerateDataKey', id.queueKey)],
          expect: 'refused',
        },
      ];
    }),
  );

  it(
    'the worker uses the CMK ledger through DynamoDB',
    check(() => {
      expect(id.table, 'ledgerTableProps implies the ledger').toBeDefined();
      const table = policies.arnOf(id.table as string);
      const item = (action: string) => ({ as: id.role, action, resource: table });
      return [
        {
          name: 'claim (PutItem)',
          requests: [
            item('dynamodb:PutItem'),
            via('dynamodb', 'kms:GenerateDataKey', id.ledgerKey),
            via('dynamodb', 'kms:Encrypt', id.ledgerKey),
          ],
          expect: 'Allow',
        },
        {
          // A lost claim's item comes back on the failed write (ALL_OLD): decrypted through DynamoDB.
          name: 'complete or read back a lost claim (UpdateItem)',
          requests: [
            item('dynamodb:UpdateItem'),
            via('dynamodb', 'kms:Decrypt', id.ledgerKey),
            via('dynamodb', 'kms:DescribeKey', id.ledgerKey),
          ],
          expect: 'Allow',
        },
        { name: 'the ledger key through S3', requests: [via('s3', 'kms:Decrypt', id.ledgerKey)], expect: 'refused' },
      ];
    }),
  );

  it(
    "and everything the README stack may and may not do, except on the input bucket, which is not this app's",
    check(() => {
      const p: PipelineUnderTest = {
        policies,
        id,
        input,
        output,
        logs: policies.nameOf(
          logicalIdsOfType(json, 'AWS::S3::Bucket').find((b) => b.startsWith('PipelineAccessLogs')) as string,
        ),
      };
      const common = [...workerS3Cases(p), ...serviceCases(p), ...workerOtherCases(p)];
      const handler = resourceOf(json, 'AWS::IAM::Role', 'BucketNotificationsHandler').id;
      return [
        ...common.filter((c) => !CREATED_INPUT_ONLY.has(c.name)),
        {
          name: "the notifications handler reads and sets the existing bucket's notifications",
          requests: ['s3:GetBucketNotification', 's3:PutBucketNotification'].map((action) => ({
            as: handler,
            action,
            resource: `arn:aws:s3:::${input}`,
          })),
          expect: 'Allow',
        },
      ];
    }),
  );

  it('every KMS grant of the worker names its key and the service that uses it (kms:ViaService)', () => {
    const kms = [...policies.statements.values()]
      .filter(({ attachedTo }) => attachedTo === policies.arnOf(id.role))
      .map(({ statement }) => statement)
      .filter((s) => JSON.stringify(s.Action).includes('kms:'));
    expect(kms.length).toBeGreaterThanOrEqual(3);
    for (const s of kms) {
      expect(String(s.Resource)).toMatch(/^arn:aws:kms:/);
      // CDK's grantConsumeMessages adds the queue key's Decrypt without a condition.
      if (s.Resource !== policies.arnOf(id.queueKey))
        expect(s.Condition?.StringEquals?.['kms:ViaService']).toBeDefined();
    }
  });

  it('every grant and every resource-policy statement of the template decided some case above', () => {
    const missing = statementsToExercise(policies).filter((sid) => !engine.exercised.has(sid));
    expect(missing.map((sid) => `${sid}: ${JSON.stringify(policies.statements.get(sid)?.statement)}`)).toEqual([]);
  });
});
