import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import type { StackResources } from '../../../app/cli/stackTarget.js';
import { type AwsClients, createAwsClients } from '../../../src/aws/clients.js';
import { type CliResult, rerunCli } from '../../support/summaryPipeline.js';

/** The stack test/deployed/globalSetup.ts deployed to MiniStack, from its CloudFormation outputs. */
export function deployedStack(): StackResources {
  return inject('deployedStack');
}

/** MiniStack's endpoint. */
export function ministackEndpoint(): string {
  return inject('ministackEndpoint');
}

/** SDK clients pointed at MiniStack, as an operator's or a test's own clients. */
export function deployedClients(): AwsClients {
  return createAwsClients({ endpoint: inject('ministackEndpoint'), region: 'us-east-1' });
}

/**
 * Runs `rerun <args> --stack <name>` in process against MiniStack, as an operator with
 * AWS_ENDPOINT_URL would: every resource comes from the stack's outputs.
 */
export function rerunOnStack(args: string[]): Promise<CliResult> {
  return rerunCli([...args, '--stack', deployedStack().stackName], {
    env: { AWS_ENDPOINT_URL: inject('ministackEndpoint') },
  });
}

/** Polls `probe` until it returns a value other than undefined; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${options.timeoutMs ?? 60_000} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}

/** Visible and in-flight messages of a queue. */
export async function queueCounts(
  clients: AwsClients,
  queueUrl: string,
): Promise<{ visible: number; inFlight: number }> {
  const out = await clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/**
 * Waits until the deployed function has consumed everything in its queue: nothing visible and
 * nothing in flight, twice in a row (MiniStack delivers an S3 notification to SQS before
 * PutObject returns, so after an upload its message is in the queue until the function succeeded).
 */
export async function drained(clients: AwsClients, queueUrl: string, timeoutMs = 60_000): Promise<void> {
  let empties = 0;
  await waitFor(
    `${queueUrl} to drain`,
    async () => {
      const c = await queueCounts(clients, queueUrl);
      empties = c.visible + c.inFlight === 0 ? empties + 1 : 0;
      return empties >= 2 ? true : undefined;
    },
    { timeoutMs, intervalMs: 300 },
  );
}
