import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutBucketNotificationConfigurationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

/**
 * What moto 5.2.1 does differently from AWS where it matters to rerun, observed, so that an upgrade
 * that changes it fails here and docs/EMULATORS.md is updated with it. (The differences in answers
 * are pinned by the simulation tier's conformance replays, test/sim/conformance.test.ts.)
 */
describe('moto 5.2.1 as seen by npm test (docs/EMULATORS.md)', () => {
  const clients = testClients();

  it('sends two ObjectCreated events for one multipart upload (Put and CompleteMultipartUpload, same ETag): every multipart input is delivered twice in rerun dev', async () => {
    const bucket = await createBucket(clients.s3, uniqueName('mp-events'));
    const queue = await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('mp-events') }));
    const queueUrl = queue.QueueUrl as string;
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    await clients.s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: {
          QueueConfigurations: [{ QueueArn: attributes.Attributes?.QueueArn, Events: ['s3:ObjectCreated:*'] }],
        },
      }),
    );
    const created = await clients.s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'big.csv' }));
    const part = await clients.s3.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: 'big.csv',
        UploadId: created.UploadId,
        PartNumber: 1,
        Body: 'only part',
      }),
    );
    await clients.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: 'big.csv',
        UploadId: created.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    const events: { eventName: string; eTag: string }[] = [];
    for (let i = 0; i < 5 && events.length < 3; i++) {
      const out = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const m of out.Messages ?? []) {
        const body = JSON.parse(m.Body ?? '{}') as {
          Records?: { eventName: string; s3: { object: { eTag: string } } }[];
        };
        for (const r of body.Records ?? []) events.push({ eventName: r.eventName, eTag: r.s3.object.eTag });
      }
    }
    // AWS sends one, ObjectCreated:CompleteMultipartUpload (S3 User Guide, "Event notification types").
    expect(events.map((e) => e.eventName).sort()).toEqual([
      'ObjectCreated:CompleteMultipartUpload',
      'ObjectCreated:Put',
    ]);
    expect(new Set(events.map((e) => e.eTag)).size).toBe(1);
  });
  it('sends no event for a delete in a versioned bucket, and no versionId in any event: rerun dev keeps its input bucket unversioned', async () => {
    const bucket = await createBucket(clients.s3, uniqueName('ver-events'));
    await clients.s3.send(
      new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
    );
    const queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('ver-events') })))
      .QueueUrl as string;
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    await clients.s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: {
          QueueConfigurations: [
            { QueueArn: attributes.Attributes?.QueueArn, Events: ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'] },
          ],
        },
      }),
    );
    const put = await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.csv', Body: 'x' }));
    expect(put.VersionId).toBeTruthy();
    await clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'a.csv' }));
    const events: { eventName: string; versionId?: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const out = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const m of out.Messages ?? []) {
        const body = JSON.parse(m.Body ?? '{}') as {
          Records?: { eventName: string; s3: { object: { versionId?: string } } }[];
        };
        for (const r of body.Records ?? []) events.push({ eventName: r.eventName, versionId: r.s3.object.versionId });
      }
    }
    // AWS sends ObjectCreated:Put with the version, then ObjectRemoved:DeleteMarkerCreated.
    expect(events).toEqual([{ eventName: 'ObjectCreated:Put', versionId: undefined }]);
  });
});
