import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetBucketNotificationConfigurationCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provisionLocalStack } from '../../app/dev/provisionLocalStack.js';
import { runDev } from '../../app/dev/runDev.js';
import { INPUT_EVENTS, localResourceNames, type Topology, topology } from '../../app/topology.js';
import { projectRoot } from '../../infra/paths.js';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { LedgerAttribute } from '../../src/ledger/ledgerRecord.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import type { ProbeInvocation } from './fixtures/probeHandler.js';
import { renderIntrinsic } from './support/iamPolicy.js';
import { type CfnResourceJson, type CfnTemplate, resourceOf, synthRerun } from './support/synth.js';

/**
 * Local and deployed cannot drift: the stack takes every setting from app/topology.ts (checked
 * with the shipped topology and with a changed one), and the local provisioner, the local runner
 * of `rerun dev` and the ledger library produce the same settings as the synthesized stack.
 */

/** The topology-derived settings of a synthesized stack, read back from its template. */
interface DeployedSettings {
  inputPrefix: string;
  /** Events of every queue configuration of the input bucket (CDK writes one per event type). */
  inputEvents: string[];
  ownedPrefixes: string[];
  visibilityTimeoutSeconds: number;
  queueRetentionSeconds: number;
  maxReceiveCount: number;
  dlqRetentionSeconds: number;
  batchSize: number;
  maxBatchingWindowSeconds: number | undefined;
  maxConcurrency: number;
  functionTimeoutSeconds: number;
  memoryMiB: number;
  ledgerPartitionKey: string;
  ledgerTtlAttribute: string;
}

/** The value at `path` inside a template fragment (fails loudly when a step is missing). */
function dig(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const step of path) {
    if (current === null || typeof current !== 'object' || !(step in current)) {
      throw new Error(`template has no ${path.join('.')} (stopped at ${String(step)})`);
    }
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

function deployedSettings(json: CfnTemplate): DeployedSettings {
  const p = (type: string, prefix: string): unknown =>
    (resourceOf(json, type, prefix).resource as CfnResourceJson).Properties;
  // The normalize stage is the stack's RerunPipeline 'Normalize'; its worker is 'Worker'.
  const worker = 'NormalizeWorker';
  const queue = p('AWS::SQS::Queue', `${worker}Queue`);
  const dlq = p('AWS::SQS::Queue', `${worker}DeadLetterQueue`);
  const fn = p('AWS::Lambda::Function', `${worker}Function`);
  const mapping = p('AWS::Lambda::EventSourceMapping', `${worker}Function`);
  const table = p('AWS::DynamoDB::Table', 'Ledger');
  const notification = p('Custom::S3BucketNotifications', 'InputBucket');
  const filterRules = dig(
    notification,
    'NotificationConfiguration',
    'QueueConfigurations',
    0,
    'Filter',
    'Key',
    'FilterRules',
  ) as {
    Name: string;
    Value: string;
  }[];
  const outputBucketId = resourceOf(json, 'AWS::S3::Bucket', 'OutputBucket').id;
  const statements = dig(p('AWS::S3::BucketPolicy', 'OutputBucketPolicy'), 'PolicyDocument', 'Statement') as {
    Sid?: string;
    Resource: unknown[];
  }[];
  const deny = statements.find((s) => s.Sid === 'DenyPutWithoutIfNoneMatchOrIfMatch');
  const bucketArn = `arn:aws:s3:::${outputBucketId}/`;
  const windowSeconds = (mapping as Record<string, unknown>).MaximumBatchingWindowInSeconds;
  return {
    inputPrefix: filterRules.find((r) => r.Name === 'prefix')?.Value as string,
    inputEvents: (dig(notification, 'NotificationConfiguration', 'QueueConfigurations') as { Events: string[] }[])
      .flatMap((q) => q.Events)
      .sort(),
    ownedPrefixes: (deny?.Resource ?? [])
      .map((r) =>
        renderIntrinsic(r, new Set([outputBucketId]))
          .replace(bucketArn, '')
          .replace(/\*$/, ''),
      )
      .sort(),
    visibilityTimeoutSeconds: dig(queue, 'VisibilityTimeout') as number,
    queueRetentionSeconds: dig(queue, 'MessageRetentionPeriod') as number,
    maxReceiveCount: dig(queue, 'RedrivePolicy', 'maxReceiveCount') as number,
    dlqRetentionSeconds: dig(dlq, 'MessageRetentionPeriod') as number,
    batchSize: dig(mapping, 'BatchSize') as number,
    maxBatchingWindowSeconds: windowSeconds as number | undefined,
    maxConcurrency: dig(mapping, 'ScalingConfig', 'MaximumConcurrency') as number,
    functionTimeoutSeconds: dig(fn, 'Timeout') as number,
    memoryMiB: dig(fn, 'MemorySize') as number,
    ledgerPartitionKey: dig(table, 'KeySchema', 0, 'AttributeName') as string,
    ledgerTtlAttribute: dig(table, 'TimeToLiveSpecification', 'AttributeName') as string,
  };
}

function expectedSettings(t: Topology): DeployedSettings {
  const w = t.normalize;
  return {
    inputPrefix: t.inputPrefix,
    inputEvents: [...INPUT_EVENTS].sort(),
    // Every prefix a worker writes (CDK sorts a statement's resources, so compare them sorted).
    ownedPrefixes: [t.outputPrefix, t.quarantinePrefix, t.summaryPrefix, t.failurePrefix, t.codeVersionPrefix].sort(),
    visibilityTimeoutSeconds: w.visibilityTimeoutSeconds,
    queueRetentionSeconds: w.queueRetentionDays * 86_400,
    maxReceiveCount: w.maxReceiveCount,
    dlqRetentionSeconds: w.dlqRetentionDays * 86_400,
    batchSize: w.batchSize,
    maxBatchingWindowSeconds: w.maxBatchingWindowSeconds,
    maxConcurrency: w.maxConcurrency,
    functionTimeoutSeconds: w.functionTimeoutSeconds,
    memoryMiB: w.memoryMiB,
    ledgerPartitionKey: t.ledger.partitionKey,
    ledgerTtlAttribute: t.ledger.ttlAttribute,
  };
}

// Validation plugins (cdk-nag, CloudFormation rules) are exercised by stack.test.ts; here they would
// only add seconds to the two synths.
const quickSynth = (options: Parameters<typeof synthRerun>[0] = {}): CfnTemplate => {
  const synth = synthRerun({ nag: false, ...options, appProps: { builtinCloudFormationValidation: false } });
  synth.dispose();
  return synth.json;
};

let deployed: DeployedSettings;

beforeAll(() => {
  deployed = deployedSettings(quickSynth());
}, 120_000);

describe('the synthesized stack', () => {
  it('takes every setting of the shipped topology (its queue names are generated; only local names are fixed)', () => {
    expect(deployed).toEqual(expectedSettings(topology));
  });

  it('follows a changed topology (the values come from it, they are not repeated in infra/)', () => {
    const changed: Topology = {
      ...topology,
      appName: 'other',
      inputPrefix: 'uploads/',
      outputPrefix: 'clean/',
      quarantinePrefix: 'rejected/',
      normalize: {
        ...topology.normalize,
        functionTimeoutSeconds: 120,
        memoryMiB: 1024,
        batchSize: 25,
        maxBatchingWindowSeconds: 3,
        maxConcurrency: 7,
        visibilityTimeoutSeconds: 900,
        maxReceiveCount: 6,
        dlqRetentionDays: 10,
        queueRetentionDays: 2,
      },
      ledger: { name: 'dedupe', partitionKey: 'id', ttlAttribute: 'expiresAt' },
    };
    const json = quickSynth({ stackName: 'other', stackProps: { topology: changed } });
    expect(deployedSettings(json)).toEqual(expectedSettings(changed));
  }, 120_000);
});

describe('the local pipeline of `rerun dev`', () => {
  it('uses the key and TTL attribute of the topology in the ledger library and its local table', async () => {
    expect(LedgerAttribute.KEY).toBe(deployed.ledgerPartitionKey);
    expect(LedgerAttribute.TTL).toBe(deployed.ledgerTtlAttribute);
    const { dynamodb } = testClients();
    const tableName = uniqueName('topology-ledger');
    await createLedgerTable({ client: dynamodb, tableName });
    const table = (await dynamodb.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    expect(table?.KeySchema).toEqual([{ AttributeName: deployed.ledgerPartitionKey, KeyType: 'HASH' }]);
    expect(table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe(deployed.ledgerTtlAttribute);
  });

  it('is provisioned with the same queue settings and notification filter as the stack', async () => {
    const clients = testClients();
    const names = localResourceNames({ ...topology, appName: uniqueName('topo') });
    const local = await provisionLocalStack({ clients, names, topology });
    const attributes = async (url: string) =>
      (await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))).Attributes ??
      {};
    const queue = await attributes(local.queueUrl);
    const dlq = await attributes(local.dlqUrl);
    expect(Number(queue.VisibilityTimeout)).toBe(deployed.visibilityTimeoutSeconds);
    expect(Number(queue.MessageRetentionPeriod)).toBe(deployed.queueRetentionSeconds);
    const redrive = JSON.parse(queue.RedrivePolicy ?? '{}') as { maxReceiveCount: number; deadLetterTargetArn: string };
    expect(Number(redrive.maxReceiveCount)).toBe(deployed.maxReceiveCount);
    expect(redrive.deadLetterTargetArn).toBe(local.dlqArn);
    expect(Number(dlq.MessageRetentionPeriod)).toBe(deployed.dlqRetentionSeconds);
    const notification = await clients.s3.send(
      new GetBucketNotificationConfigurationCommand({ Bucket: local.inputBucket }),
    );
    expect(notification.QueueConfigurations).toHaveLength(1);
    const rule = notification.QueueConfigurations?.[0];
    expect(rule?.QueueArn).toBe(local.queueArn);
    expect([...(rule?.Events ?? [])].sort()).toEqual([...deployed.inputEvents].sort());
    expect(rule?.Filter?.Key?.FilterRules?.map((r) => [String(r.Name).toLowerCase(), r.Value])).toEqual([
      ['prefix', deployed.inputPrefix],
    ]);
  });

  describe('runs the handler with the deployed function and event source mapping settings', () => {
    const probe = (): ProbeInvocation[] =>
      (globalThis as { __rerunTopologyProbe?: ProbeInvocation[] }).__rerunTopologyProbe ?? [];
    let dir: string;
    const files = 25;

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'rerun-topology-'));
      for (let i = 0; i < files; i++) writeFileSync(join(dir, `f${i}.csv`), `id\n${i}\n`);
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('batch size, concurrency, timeout and memory', async () => {
      const results: string[] = [];
      const summary = await runDev({
        endpoint: awsEndpoint(),
        region: 'us-east-1',
        appName: uniqueName('topo'),
        once: true,
        demo: true,
        examplesDir: dir,
        handlerPath: join(projectRoot, 'test', 'infra', 'fixtures', 'probeHandler.ts'),
        env: { ...process.env },
        drainTimeoutMs: 60_000,
        writeResult: (line) => results.push(line),
        writeHuman: () => {},
      });
      expect(summary.ended).toBe('drained');
      const seen = probe();
      // Every upload, plus the s3:TestEvent S3 sends when the notification is configured.
      expect(seen.reduce((n, i) => n + i.records, 0)).toBe(files + 1);
      // The 26 messages wait in the queue before the runner starts, so batches fill up to the batch size.
      expect(Math.max(...seen.map((i) => i.records))).toBe(deployed.batchSize);
      expect(Math.max(...seen.map((i) => i.inFlightAtStart))).toBeLessThanOrEqual(deployed.maxConcurrency);
      for (const invocation of seen) {
        expect(invocation.memoryLimitInMB).toBe(String(deployed.memoryMiB));
        expect(invocation.remainingMsAtStart).toBeLessThanOrEqual(deployed.functionTimeoutSeconds * 1000);
        expect(invocation.remainingMsAtStart).toBeGreaterThan(deployed.functionTimeoutSeconds * 1000 - 10_000);
      }
    }, 120_000);
  });
});
