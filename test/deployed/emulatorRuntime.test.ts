import { CloudFormationClient, DescribeStackResourceCommand } from '@aws-sdk/client-cloudformation';
import { IAMClient, ListAttachedRolePoliciesCommand, ListRolePoliciesCommand } from '@aws-sdk/client-iam';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import { uniqueName } from '../support/aws.js';
import { readText } from '../support/s3.js';
import { deployedClients, ministackEndpoint, queueCounts, ROOT_KEY, waitFor } from './support/deployedStack.js';
import { createProbeStack, PROBE_SLEEP_MS, type ProbeInvocation, type ProbeStack } from './support/probeStack.js';

/**
 * MiniStack 1.5.33's Lambda runtime and SQS event source mappings, observed with a probe function
 * of a small stack of its own (support/probeStack.ts), not with the product's stack: what it does
 * where rerun's batch handler depends on AWS's behaviour. Differences are asserted as such, so an
 * upgrade that changes one fails here and docs/EMULATORS.md is updated with it.
 */
describe('MiniStack 1.5.33: the Lambda runtime and SQS mappings, seen by a probe function (docs/EMULATORS.md)', () => {
  const clients = deployedClients();
  let probe: ProbeStack;
  let cloudformation: CloudFormationClient;
  const send = (queueUrl: string, body: string) =>
    clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  /** The probe's invocation records whose bodies include `marker`. */
  const invocations = async (marker: string): Promise<ProbeInvocation[]> => {
    const found: ProbeInvocation[] = [];
    for (const o of await new S3PartitionStore(clients.s3).listAll(probe.bucket, { prefix: '' })) {
      const seen = JSON.parse(await readText(clients.s3, probe.bucket, o.key)) as ProbeInvocation;
      if (seen.bodies.some((b) => b.startsWith(marker))) found.push(seen);
    }
    return found;
  };

  beforeAll(async () => {
    cloudformation = new CloudFormationClient({
      endpoint: ministackEndpoint(),
      region: 'us-east-1',
      credentials: ROOT_KEY,
    });
    probe = await createProbeStack(cloudformation, uniqueName('rerun-probe'));
  });

  it('caps a mapping at its MaximumConcurrency (2 of 6 one-record batches at once), counts the remaining time down, and sets invokedFunctionArn', async () => {
    for (let i = 0; i < 6; i++) await send(probe.concurrencyQueueUrl, `concurrency-${i}`);
    const seen = await waitFor('six probe invocations', async () => {
      const found = await invocations('concurrency-');
      return found.length >= 6 ? found : undefined;
    });
    // Invocations running at once: the most intervals that cover any invocation's start.
    const atOnce = Math.max(...seen.map((a) => seen.filter((b) => b.start <= a.start && a.start < b.end).length));
    const timeline = seen.map((s) => `${s.start % 100_000}-${s.end % 100_000}`).join(' ');
    expect(atOnce, timeline).toBe(2);
    for (const s of seen) {
      // Older snapshots returned a constant 300000; 1.5.33 counts down from the function's 10 s timeout.
      expect(s.remainingAtStart).toBeLessThanOrEqual(10_000);
      expect(s.remainingAtStart - s.remainingAfterSleep).toBeGreaterThanOrEqual(PROBE_SLEEP_MS - 50);
      expect(s.invokedFunctionArn).toMatch(/^arn:aws:lambda:us-east-1:\d{12}:function:/);
    }
  });

  it('passes its own environment on to functions, and runs them on the host’s node (not the runtime’s Node 24)', async () => {
    const [seen] = await invocations('concurrency-');
    expect(seen?.inheritedEmulatorVariables).toEqual([
      'GATEWAY_PORT',
      'BIND_HOST',
      'MINISTACK_HOST',
      'IOT_MTLS_ENABLED',
    ]);
    expect(seen?.node).toBe(process.version);
  });

  it('ignores the batching window (a lone record is delivered at once; AWS waits up to the 5 s window)', async () => {
    const sentAt = Date.now();
    await send(probe.windowQueueUrl, 'window-lone');
    const [seen] = await waitFor('the windowed invocation', async () => {
      const found = await invocations('window-');
      return found.length > 0 ? found : undefined;
    });
    expect((seen?.start ?? 0) - sentAt).toBeLessThan(4000);
  });

  it("polls with no regard to the execution role's permissions: the probe's role has no policy at all (AWS: the mapping needs sqs:ReceiveMessage, DeleteMessage and GetQueueAttributes)", async () => {
    const iam = new IAMClient({ endpoint: ministackEndpoint(), region: 'us-east-1', credentials: ROOT_KEY });
    const described = await cloudformation.send(
      new DescribeStackResourceCommand({ StackName: probe.stackName, LogicalResourceId: 'ProbeRole' }),
    );
    const roleName = described.StackResourceDetail?.PhysicalResourceId;
    expect(roleName).toBeDefined();
    const inline = await iam.send(new ListRolePoliciesCommand({ RoleName: roleName }));
    const attached = await iam.send(new ListAttachedRolePoliciesCommand({ RoleName: roleName }));
    expect([...(inline.PolicyNames ?? []), ...(attached.AttachedPolicies ?? [])]).toEqual([]);
    // Yet its mappings received, invoked and deleted (the first test's six messages are gone).
    expect((await invocations('concurrency-')).length).toBeGreaterThanOrEqual(6);
    expect(await queueCounts(clients, probe.concurrencyQueueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('ignores a batchItemFailures id that is not in the batch: the message is deleted (AWS fails the whole batch)', async () => {
    await send(probe.concurrencyQueueUrl, 'answer-with-unknown-id');
    await waitFor('the unknown-id invocation', async () => {
      const found = await invocations('answer-with-unknown-id');
      return found.length > 0 ? found : undefined;
    });
    // On AWS the message would stay in flight until the queue's 60 s visibility timeout, then return.
    const counts = await waitFor(
      'the message to be deleted',
      async () => {
        const c = await queueCounts(clients, probe.concurrencyQueueUrl);
        return c.visible + c.inFlight === 0 ? c : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(counts).toEqual({ visible: 0, inFlight: 0 });
  });
});
