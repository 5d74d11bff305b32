import {
  GetBucketLifecycleConfigurationCommand,
  GetBucketNotificationConfigurationCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { provisionLocalStack } from '../../app/dev/provisionLocalStack.js';
import { localResourceNames, type Topology, topology } from '../../app/topology.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';

/** The topology with a unique app name (tests share one emulator) and short local timings. */
function testTopology(): Topology {
  return {
    ...topology,
    appName: uniqueName('prov'),
    normalize: { ...topology.normalize, visibilityTimeoutSeconds: 5, maxReceiveCount: 2 },
  };
}

/** Requests that create or change something. */
const MUTATING = /^(Create|Put|Set|Delete|Tag|Untag)/;

describe('provisionLocalStack', () => {
  it('creates the buckets, queues, policies and notification from the topology', async () => {
    const t = testTopology();
    const names = localResourceNames(t);
    const clients = testClients();
    const stack = await provisionLocalStack({ clients, names, topology: t });

    expect(stack).toMatchObject({ inputBucket: names.inputBucket, outputBucket: names.outputBucket });
    expect(stack.queueArn).toBe(`arn:aws:sqs:us-east-1:123456789012:${names.queue}`);
    expect(stack.dlqArn).toBe(`arn:aws:sqs:us-east-1:123456789012:${names.dlq}`);
    expect(stack.actions).toEqual([
      { resource: `bucket ${names.inputBucket}`, action: 'created' },
      { resource: `lifecycle rule ${names.inputBucket} abort-incomplete-multipart-uploads`, action: 'created' },
      { resource: `bucket ${names.outputBucket}`, action: 'created' },
      { resource: `lifecycle rule ${names.outputBucket} abort-incomplete-multipart-uploads`, action: 'created' },
      { resource: `queue ${names.dlq}`, action: 'created' },
      { resource: `queue ${names.queue}`, action: 'created' },
      // moto 5 does not report RedriveAllowPolicy back: sent, neither "updated" nor "unchanged".
      { resource: `queue ${names.dlq} redrive-allow policy`, action: 'sent' },
      { resource: `notification ${names.inputBucket}/incoming/* -> ${names.queue}`, action: 'created' },
    ]);
    for (const bucket of [names.inputBucket, names.outputBucket]) {
      await expect(clients.s3.send(new HeadBucketCommand({ Bucket: bucket }))).resolves.toBeDefined();
      // As in the stack: a worker killed mid-upload leaves no multipart upload billed for long.
      const lifecycle = await clients.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
      expect(lifecycle.Rules).toEqual([
        expect.objectContaining({
          ID: 'abort-incomplete-multipart-uploads',
          Status: 'Enabled',
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        }),
      ]);
      // Not versioned for rerun dev: moto sends no event for a delete in a versioned bucket.
      expect((await clients.s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status).toBeUndefined();
    }

    const queue = (
      await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: stack.queueUrl, AttributeNames: ['All'] }))
    ).Attributes;
    expect(queue?.VisibilityTimeout).toBe('5');
    expect(queue?.MessageRetentionPeriod).toBe(String(t.normalize.queueRetentionDays * 86_400));
    expect(JSON.parse(queue?.RedrivePolicy ?? '{}')).toEqual({ deadLetterTargetArn: stack.dlqArn, maxReceiveCount: 2 });
    const policy = JSON.parse(queue?.Policy ?? '{}');
    expect(policy.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 's3.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: stack.queueArn,
        Condition: {
          ArnLike: { 'aws:SourceArn': `arn:aws:s3:::${names.inputBucket}` },
          StringEquals: { 'aws:SourceAccount': '123456789012' },
        },
      }),
    ]);
    const dlq = (
      await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: stack.dlqUrl, AttributeNames: ['All'] }))
    ).Attributes;
    expect(dlq?.MessageRetentionPeriod).toBe(String(14 * 86_400));

    const notification = await clients.s3.send(
      new GetBucketNotificationConfigurationCommand({ Bucket: names.inputBucket }),
    );
    expect(notification.QueueConfigurations).toEqual([
      {
        Id: `${t.appName}-normalize`,
        QueueArn: stack.queueArn,
        // Uploads build outputs, deletes remove them (as the stack subscribes).
        Events: ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'],
        Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'incoming/' }] } },
      },
    ]);
  });

  it('versions the input bucket when asked, as the stack does, with its noncurrent-version rule; idempotent', async () => {
    const t = testTopology();
    const names = localResourceNames(t);
    const clients = testClients();
    const first = await provisionLocalStack({ clients, names, topology: t, versionedInput: true });
    expect(first.actions).toContainEqual({ resource: `versioning ${names.inputBucket}`, action: 'created' });
    const input = await clients.s3.send(new GetBucketVersioningCommand({ Bucket: names.inputBucket }));
    expect(input.Status).toBe('Enabled');
    const rules = (await clients.s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: names.inputBucket })))
      .Rules;
    expect(rules).toContainEqual(
      expect.objectContaining({ ID: 'expire-noncurrent-versions', NoncurrentVersionExpiration: { NoncurrentDays: 1 } }),
    );
    const output = await clients.s3.send(new GetBucketVersioningCommand({ Bucket: names.outputBucket }));
    expect(output.Status).toBeUndefined();
    const again = await provisionLocalStack({ clients, names, topology: t, versionedInput: true });
    expect(again.actions.filter((a) => a.action !== 'unchanged' && a.action !== 'sent')).toEqual([]);
  });

  it('is idempotent: a second run reuses everything and changes nothing', async () => {
    const t = testTopology();
    const names = localResourceNames(t);
    const first = await provisionLocalStack({ clients: testClients(), names, topology: t });
    const log = new RequestLog();
    const second = await provisionLocalStack({ clients: testClients(log), names, topology: t });

    expect(second).toMatchObject({
      queueUrl: first.queueUrl,
      queueArn: first.queueArn,
      dlqUrl: first.dlqUrl,
      dlqArn: first.dlqArn,
    });
    const mutations = log.requests.filter((r) => MUTATING.test(r.operation));
    // moto 5 does not return RedriveAllowPolicy from GetQueueAttributes, so that one attribute is set
    // again (to the same value); against AWS or LocalStack the second run sends no mutation at all.
    for (const m of mutations) {
      expect(m.operation).toBe('SetQueueAttributes');
      expect(m.input).toEqual({
        QueueUrl: first.dlqUrl,
        Attributes: {
          RedriveAllowPolicy: JSON.stringify({ redrivePermission: 'byQueue', sourceQueueArns: [first.queueArn] }),
        },
      });
    }
    // Nothing is said to have changed: the resent attribute is "sent", never "updated".
    expect(second.actions.filter((a) => a.action !== 'unchanged')).toEqual(
      mutations.length > 0 ? [{ resource: `queue ${names.dlq} redrive-allow policy`, action: 'sent' }] : [],
    );
  });

  it('sets changed attributes again on reuse (e.g. a shorter local visibility timeout), keeping the queue policy', async () => {
    const t = testTopology();
    const names = localResourceNames(t);
    const clients = testClients();
    await provisionLocalStack({ clients, names, topology: t });
    const shorter = { ...t, normalize: { ...t.normalize, visibilityTimeoutSeconds: 3 } };
    const again = await provisionLocalStack({ clients, names, topology: shorter });

    expect(again.actions).toContainEqual({ resource: `queue ${names.queue}`, action: 'updated' });
    const attributes = (
      await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: again.queueUrl, AttributeNames: ['All'] }))
    ).Attributes;
    expect(attributes?.VisibilityTimeout).toBe('3');
    expect(attributes?.Policy).toContain('s3.amazonaws.com');
    expect(JSON.parse(attributes?.RedrivePolicy ?? '{}').maxReceiveCount).toBe(2);
  });

  it('routes uploads under the input prefix to the work queue, and nothing else', async () => {
    const t = testTopology();
    const names = localResourceNames(t);
    const clients = testClients();
    const stack = await provisionLocalStack({ clients, names, topology: t });

    await clients.s3.send(new PutObjectCommand({ Bucket: names.inputBucket, Key: 'elsewhere/a.csv', Body: 'x' }));
    await clients.s3.send(new PutObjectCommand({ Bucket: names.inputBucket, Key: 'incoming/b c.csv', Body: 'y' }));
    const received = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stack.queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const bodies = (received.Messages ?? []).map((m) => JSON.parse(m.Body ?? '{}'));
    // S3 sends a test event when the notification is configured (real S3 does too).
    expect(bodies.filter((b) => b.Event === 's3:TestEvent')).toHaveLength(1);
    const keys = bodies
      .flatMap((b) => b.Records ?? [])
      .map((r: { s3: { object: { key: string } } }) => decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')));
    expect(keys).toEqual(['incoming/b c.csv']);
  });
});
