import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudFormationClient, GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import { GetFunctionConcurrencyCommand, LambdaClient } from '@aws-sdk/client-lambda';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetBucketPolicyCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { StackOutput } from '../../app/stackOutputs.js';
import { topology } from '../../app/topology.js';
import { uniqueName } from '../support/aws.js';
import {
  createUser,
  deployedClients,
  deployedStack,
  ministackEndpoint,
  ROOT_KEY,
  waitFor,
} from './support/deployedStack.js';
import { queueArnOf } from './support/operatorIdentity.js';

/**
 * What MiniStack 1.5.33 does where AWS's behaviour matters to rerun, observed, so that an emulator
 * upgrade that changes any of it fails here and docs/EMULATORS.md is updated with it. Each test
 * names the difference; the rule itself is covered elsewhere (listed in docs/EMULATORS.md).
 * The probes make resources of their own where the stack's would not do (the event-key probe's
 * bucket and queue: the stack's queue is consumed by its function before a test could read a
 * message; IAM users with a policy of their own, whose every request MiniStack judges).
 */
describe('MiniStack 1.5.33 as seen by the deployed tier (docs/EMULATORS.md)', () => {
  const clients = deployedClients();
  const stack = deployedStack();

  it('keeps each work queue’s RedrivePolicy on deploy (older snapshots dropped it)', async () => {
    for (const [queueUrl, dlqUrl, worker] of [
      [stack.queueUrl, stack.dlqUrl, topology.normalize],
      [stack.summaryQueueUrl, stack.summaryDlqUrl, topology.summarize],
    ] as const) {
      const queue = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }),
      );
      const dlq = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
      );
      expect(JSON.parse(queue.Attributes?.RedrivePolicy ?? 'null'), queueUrl).toEqual({
        deadLetterTargetArn: dlq.Attributes?.QueueArn,
        maxReceiveCount: worker.maxReceiveCount,
      });
    }
  });

  it("drops a function's ReservedConcurrentExecutions when CloudFormation deploys it (the template has it)", async () => {
    const aws = { endpoint: ministackEndpoint(), region: 'us-east-1', credentials: ROOT_KEY };
    const template = JSON.parse(
      (await new CloudFormationClient(aws).send(new GetTemplateCommand({ StackName: stack.stackName }))).TemplateBody ??
        '{}',
    ) as { Resources: Record<string, { Type: string; Properties?: { ReservedConcurrentExecutions?: number } }> };
    const reserved = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => r.Properties?.ReservedConcurrentExecutions)
      .filter((n) => n !== undefined);
    // Both workers reserve their mapping's maximum concurrency (4 each) in the deployed template.
    expect(reserved).toEqual([topology.normalize.maxConcurrency, topology.summarize.maxConcurrency]);
    const lambda = new LambdaClient(aws);
    for (const output of [StackOutput.FUNCTION_NAME, StackOutput.SUMMARIZE_FUNCTION_NAME]) {
      const name = stack.outputs[output];
      expect(name, output).toBeTruthy();
      const concurrency = await lambda.send(new GetFunctionConcurrencyCommand({ FunctionName: name }));
      expect(concurrency.ReservedConcurrentExecutions, name).toBeUndefined();
    }
  });

  it('sends S3 event keys URL-encoded as S3 does (space "+", "+" "%2B", UTF-8 %XX), with a real sequencer (older snapshots sent raw keys and "0")', async () => {
    const name = uniqueName('probe-keys');
    await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
    const queue = await clients.sqs.send(new CreateQueueCommand({ QueueName: name }));
    const queueUrl = queue.QueueUrl ?? '';
    const arn = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    // With IAM enforced, S3 delivers only what the queue's policy allows, as on AWS.
    await clients.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: queueUrl,
        Attributes: {
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { Service: 's3.amazonaws.com' },
                Action: 'sqs:SendMessage',
                Resource: arn.Attributes?.QueueArn,
                Condition: { ArnLike: { 'aws:SourceArn': `arn:aws:s3:::${name}` } },
              },
            ],
          }),
        },
      }),
    );
    await clients.s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: name,
        NotificationConfiguration: {
          QueueConfigurations: [{ QueueArn: arn.Attributes?.QueueArn, Events: ['s3:ObjectCreated:*'] }],
        },
      }),
    );
    await clients.s3.send(new PutObjectCommand({ Bucket: name, Key: 'in/a b+c/é.csv', Body: 'x' }));
    const object = await waitFor('the probe object’s event', async () => {
      const received = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }),
      );
      for (const message of received.Messages ?? []) {
        const record = JSON.parse(message.Body ?? '{}').Records?.[0];
        if (record) return record.s3.object as { key: string; sequencer?: string };
      }
      return undefined;
    });
    expect(object.key).toBe('in/a+b%2Bc/%C3%A9.csv');
    expect(object.sequencer).toMatch(/^[0-9A-F]+$/);
    expect(object.sequencer).not.toBe('0');
  });

  it("lets the account root's key past every policy: its blind PutObject under failures/ succeeds (AWS: a bucket policy's Deny binds the root user too)", async () => {
    const policy = await clients.s3.send(new GetBucketPolicyCommand({ Bucket: stack.outputBucket }));
    expect(policy.Policy).toContain('DenyPutWithoutIfNoneMatchOrIfMatch');
    const key = `${topology.failurePrefix}${uniqueName('probe-blind-put')}.txt`;
    const put = await clients.s3.send(new PutObjectCommand({ Bucket: stack.outputBucket, Key: key, Body: 'x' }));
    expect(put.$metadata.httpStatusCode).toBe(200);
    await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: key }));
  });

  it('enforces the conditional-write and -delete statements on an IAM principal (with the S3 condition keys local/emulator/ministackWithIam.py adds)', async () => {
    // A principal allowed to write and delete anywhere in the bucket: only the bucket policy stands between.
    const writer = await createUser(uniqueName('probe-writer'), {
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'],
          Resource: `arn:aws:s3:::${stack.outputBucket}/*`,
        },
      ],
    });
    const s3 = writer.s3;
    const key = `${topology.outputPrefix}${uniqueName('probe-enforced')}.txt`;
    const denied = { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } };
    await expect(
      s3.send(new PutObjectCommand({ Bucket: stack.outputBucket, Key: key, Body: 'x' })),
    ).rejects.toMatchObject(denied);
    const created = await s3.send(
      new PutObjectCommand({ Bucket: stack.outputBucket, Key: key, Body: 'x', IfNoneMatch: '*' }),
    );
    const replaced = await s3.send(
      new PutObjectCommand({ Bucket: stack.outputBucket, Key: key, Body: 'y', IfMatch: created.ETag }),
    );
    await expect(s3.send(new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: key }))).rejects.toMatchObject(
      denied,
    );
    await expect(
      s3.send(new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: key, IfMatch: created.ETag })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
    const deleted = await s3.send(
      new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: key, IfMatch: replaced.ETag }),
    );
    expect(deleted.$metadata.httpStatusCode).toBe(204);
    // The same principal over plain HTTP would meet the TLS-only Deny: MiniStack serves HTTPS only here.
    expect(ministackEndpoint()).toMatch(/^https:/);
  });

  it("authorizes an SQS batch call as an action of its own (sqs:SendMessageBatch), where AWS takes the single action's permission", async () => {
    const name = uniqueName('probe-batch');
    const queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl ?? '';
    const sender = await createUser(uniqueName('probe-sender'), {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: queueArnOf(queueUrl) }],
    });
    const single = await sender.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'probe' }));
    expect(single.MessageId).toBeDefined();
    await expect(
      sender.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: '1', MessageBody: 'probe' }] }),
      ),
    ).rejects.toMatchObject({ message: expect.stringMatching(/not authorized to perform: sqs:SendMessageBatch/) });
  });

  it('has no StartMessageMoveTask (InvalidAction): rerun redrive falls back to receive, send, delete', async () => {
    const dlq = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.dlqUrl, AttributeNames: ['QueueArn'] }),
    );
    await expect(
      clients.sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlq.Attributes?.QueueArn })),
    ).rejects.toMatchObject({ name: 'InvalidAction' });
  });

  it('never answers 409 ConditionalRequestConflict: its S3 service has no such error at all', () => {
    const site = join(process.cwd(), '.venv', 'ministack', 'lib');
    const [python] = readdirSync(site).filter((d) => d.startsWith('python'));
    const s3Source = readFileSync(join(site, python ?? '', 'site-packages', 'ministack', 'services', 's3.py'), 'utf8');
    expect(s3Source).toContain('PreconditionFailed');
    expect(s3Source).not.toContain('ConditionalRequestConflict');
  });
});
