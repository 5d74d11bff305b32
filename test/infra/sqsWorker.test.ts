import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topology, type WorkerTopology } from '../../app/topology.js';
import { projectRoot } from '../../infra/paths.js';
import { denyBlindOverwriteStatement } from '../../src/cdk/conditionalWritePolicy.js';
import { StackConfigurationInvalidError } from '../../src/cdk/errors.js';
import { objectArnsUnder } from '../../src/cdk/prefixGrants.js';
import { SqsWorker } from '../../src/cdk/SqsWorker.js';
import { workerTopologyViolations } from '../../src/topology/workerTopologyRules.js';
import { type CfnTemplate, cdkJsonContext } from './support/synth.js';

const fixtureEntry = join(projectRoot, 'test', 'infra', 'fixtures', 'echoHandler.ts');

describe('workerTopologyViolations (AWS rules, checked before synth)', () => {
  const base = topology.normalize;
  const violations = (change: Partial<WorkerTopology>) => workerTopologyViolations({ ...base, ...change });

  it('accepts the shipped topology', () => {
    expect(workerTopologyViolations(base)).toEqual([]);
  });

  it('refuses a visibility timeout under 6 x the function timeout', () => {
    expect(violations({ functionTimeoutSeconds: 60, visibilityTimeoutSeconds: 359 }).join()).toMatch(
      /at least 6 x functionTimeoutSeconds \(360\)/,
    );
    expect(violations({ functionTimeoutSeconds: 60, visibilityTimeoutSeconds: 360 })).toEqual([]);
  });

  it('refuses maxReceiveCount under 5, batches over 10 without a window, and concurrency under 2', () => {
    expect(violations({ maxReceiveCount: 4 }).join()).toMatch(/maxReceiveCount/);
    expect(violations({ batchSize: 11, maxBatchingWindowSeconds: 0 }).join()).toMatch(/batchSize above 10/);
    expect(violations({ batchSize: 11, maxBatchingWindowSeconds: 1 })).toEqual([]);
    expect(violations({ maxConcurrency: 1 }).join()).toMatch(/maxConcurrency/);
  });

  it('refuses a work-queue retention not shorter than the DLQ retention, and a DLQ retention over 14 days', () => {
    expect(violations({ queueRetentionDays: 14, dlqRetentionDays: 14 }).join()).toMatch(
      /shorter than dlqRetentionDays/,
    );
    expect(violations({ dlqRetentionDays: 15 }).join()).toMatch(/dlqRetentionDays must be in 1..14/);
  });

  it('refuses names that cannot prefix resource names', () => {
    expect(violations({ name: 'Daily Summary' }).join()).toMatch(/name must be lower-case/);
  });
});

describe('SqsWorker', () => {
  it('fails fast at construction with every violation listed, leaving nothing in the tree', () => {
    const stack = new Stack(new App(), 'Bad');
    let caught: unknown;
    try {
      new SqsWorker(stack, 'bad', {
        topology: { ...topology.normalize, visibilityTimeoutSeconds: 30, maxReceiveCount: 1 },
        source: { entry: fixtureEntry, projectRoot },
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StackConfigurationInvalidError);
    const error = caught as StackConfigurationInvalidError;
    expect(error.violations).toHaveLength(2);
    expect(error.message).toMatch(/visibilityTimeoutSeconds \(30\) must be at least 6 x/);
    expect(error.retryable).toBe(false);
    expect(stack.node.tryFindChild('bad')).toBeUndefined();
  });

  describe('reused for a second stage (the daily summary is a few lines)', () => {
    let app: App;
    let outdir: string;
    let json: CfnTemplate;
    const summary: WorkerTopology = {
      ...topology.normalize,
      name: 'daily-summary',
      functionTimeoutSeconds: 120,
      visibilityTimeoutSeconds: 720,
      batchSize: 1,
      maxBatchingWindowSeconds: 0,
      maxConcurrency: 2,
    };
    const opsTopic: IAlarmAction = { bind: () => ({ alarmActionArn: 'arn:aws:sns:us-east-1:123456789012:ops' }) };

    beforeAll(() => {
      // CDK's built-in CloudFormation validation is skipped here to keep the test quick; the
      // production app runs it in stack.test.ts and in scripts/cfn-lint.sh.
      outdir = mkdtempSync(join(tmpdir(), 'rerun-cdk-test-'));
      app = new App({ outdir, context: cdkJsonContext(), builtinCloudFormationValidation: false });
      const stack = new Stack(app, 'Pipeline');
      new SqsWorker(stack, 'normalize', { topology: topology.normalize, source: { entry: fixtureEntry, projectRoot } });
      new SqsWorker(stack, 'daily-summary', {
        topology: summary,
        source: { entry: fixtureEntry, projectRoot },
        alarmActions: [opsTopic],
      });
      json = app.synth().getStackByName('Pipeline').template as CfnTemplate;
    }, 120_000);
    afterAll(() => rmSync(outdir, { recursive: true, force: true }));

    const ofType = (type: string) => Object.values(json.Resources).filter((r) => r.Type === type);

    it('creates a separate queue pair, function, role, mapping and alarms per worker', () => {
      const queues = ofType('AWS::SQS::Queue');
      expect(queues).toHaveLength(4);
      // Generated names: a fixed name would block every update that replaces a queue.
      expect(queues.map((q) => q.Properties?.QueueName)).toEqual([undefined, undefined, undefined, undefined]);
      expect(ofType('AWS::Lambda::Function')).toHaveLength(2);
      expect(ofType('AWS::IAM::Role')).toHaveLength(2);
      // Per worker: DLQ depth, oldest message, errors, throttles, duration near the timeout.
      expect(ofType('AWS::CloudWatch::Alarm')).toHaveLength(10);
      const mappings = ofType('AWS::Lambda::EventSourceMapping').map((m) => m.Properties);
      expect(mappings).toContainEqual(
        expect.objectContaining({ BatchSize: 1, ScalingConfig: { MaximumConcurrency: 2 } }),
      );
      expect(mappings.every((m) => JSON.stringify(m?.FunctionResponseTypes) === '["ReportBatchItemFailures"]')).toBe(
        true,
      );
    });

    it('retains every queue on stack delete and lets no queue use a work queue as its DLQ', () => {
      const ids = Object.entries(json.Resources).filter(([, r]) => r.Type === 'AWS::SQS::Queue');
      for (const [, q] of ids) {
        expect(q.DeletionPolicy).toBe('Retain');
        expect(q.UpdateReplacePolicy).toBe('Retain');
      }
      const work = ids.filter(([, q]) => q.Properties?.RedrivePolicy !== undefined);
      expect(work).toHaveLength(2);
      for (const [, q] of work) expect(q.Properties?.RedriveAllowPolicy).toEqual({ redrivePermission: 'denyAll' });
    });

    it('traces the functions with X-Ray by default', () => {
      const fns = ofType('AWS::Lambda::Function');
      expect(fns.map((f) => f.Properties?.TracingConfig)).toEqual([{ Mode: 'Active' }, { Mode: 'Active' }]);
    });

    it('omits the batching window when the topology has none, and wires alarm actions when given', () => {
      const summaryMapping = ofType('AWS::Lambda::EventSourceMapping').find((m) => m.Properties?.BatchSize === 1);
      expect(summaryMapping?.Properties?.MaximumBatchingWindowInSeconds).toBeUndefined();
      const withActions = ofType('AWS::CloudWatch::Alarm').filter((a) => a.Properties?.AlarmActions !== undefined);
      expect(withActions).toHaveLength(5);
      expect(withActions.every((a) => JSON.stringify(a.Properties?.AlarmActions).includes(':ops'))).toBe(true);
      // The same actions when the alarm returns to OK.
      expect(withActions.every((a) => JSON.stringify(a.Properties?.OKActions).includes(':ops'))).toBe(true);
    });

    it('is clean under cdk-nag AwsSolutions on its own, with no acknowledgement but its own (X-Ray)', () => {
      const report = new AwsSolutionsChecks(app).validateScope(app);
      expect(report.violations.map((v) => v.ruleName)).toEqual([]);
    });
  });
});

describe('policy building blocks', () => {
  it('scope object ARNs to prefixes that end with "/" and contain no wildcard', () => {
    expect(objectArnsUnder('arn:aws:s3:::b', ['incoming/', 'a/b/'])).toEqual([
      'arn:aws:s3:::b/incoming/*',
      'arn:aws:s3:::b/a/b/*',
    ]);
    for (const bad of [['incoming'], ['*/'], ['/incoming/'], ['in?/'], []]) {
      expect(() => objectArnsUnder('arn:aws:s3:::b', bad), JSON.stringify(bad)).toThrow(StackConfigurationInvalidError);
    }
  });

  it('build the conditional-write deny from the three condition keys of the AWS example', () => {
    const statement = denyBlindOverwriteStatement('arn:aws:s3:::out', ['normalized/']).toStatementJson();
    expect(statement).toEqual({
      Sid: 'DenyPutWithoutIfNoneMatchOrIfMatch',
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 's3:PutObject',
      Resource: 'arn:aws:s3:::out/normalized/*',
      Condition: {
        Null: { 's3:if-none-match': 'true', 's3:if-match': 'true' },
        Bool: { 's3:ObjectCreationOperation': 'true' },
      },
    });
  });
});
