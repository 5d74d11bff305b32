import { CreateAccessKeyCommand, CreateUserCommand, IAMClient, PutUserPolicyCommand } from '@aws-sdk/client-iam';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import type { StackResources } from '../../../app/common/stackTarget.js';
import { createPipelineClients, type PipelineClients } from '../../../src/ledger/pipelineClients.js';
import { type CliResult, rerunCli } from '../../support/summaryPipeline.js';
import type { OperatorCredentials } from './operatorIdentity.js';

/** The stack test/deployed/globalSetup.ts deployed to MiniStack, from its CloudFormation outputs. */
export function deployedStack(): StackResources {
  return inject('deployedStack');
}

/** MiniStack's endpoint. */
export function ministackEndpoint(): string {
  return inject('ministackEndpoint');
}

/** MiniStack's root key (the vitest config's AWS_ACCESS_KEY_ID): allowed everything, no policy looked at. */
export const ROOT_KEY = { accessKeyId: 'test', secretAccessKey: 'test' } as const;

/**
 * SDK clients pointed at MiniStack with its root key, which MiniStack allows everything without
 * looking at a policy: the tests' own setup and checks, never the product's requests.
 */
export function deployedClients(): PipelineClients {
  return createPipelineClients({
    endpoint: inject('ministackEndpoint'),
    region: 'us-east-1',
    credentials: ROOT_KEY,
  });
}

/**
 * Creates an IAM user with `policy` inline and returns clients with its access key: a principal
 * whose every request MiniStack judges (for probes of the evaluator itself).
 */
export async function createUser(userName: string, policy: unknown): Promise<PipelineClients> {
  const iam = new IAMClient({ endpoint: inject('ministackEndpoint'), region: 'us-east-1', credentials: ROOT_KEY });
  await iam.send(new CreateUserCommand({ UserName: userName }));
  await iam.send(
    new PutUserPolicyCommand({ UserName: userName, PolicyName: 'probe', PolicyDocument: JSON.stringify(policy) }),
  );
  const key = (await iam.send(new CreateAccessKeyCommand({ UserName: userName }))).AccessKey;
  return createPipelineClients({
    endpoint: inject('ministackEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: key?.AccessKeyId ?? '', secretAccessKey: key?.SecretAccessKey ?? '' },
  });
}

/** SDK clients with the operator's credentials (an IAM user whose every request MiniStack judges). */
export function operatorClients(): PipelineClients {
  const operator = inject('operator');
  return createPipelineClients({
    endpoint: inject('ministackEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: operator.accessKeyId, secretAccessKey: operator.secretAccessKey },
  });
}

/**
 * Runs `rerun <args> --stack <name>` in process against MiniStack, as an operator with
 * AWS_ENDPOINT_URL would: every resource comes from the stack's outputs, and every request is made
 * with the operator's own IAM user (support/operatorIdentity.ts), so its policy judges them.
 */
export async function rerunOnStack(
  args: string[],
  on: { readonly stackName: string; readonly operator: OperatorCredentials } = {
    stackName: deployedStack().stackName,
    operator: inject('operator'),
  },
): Promise<CliResult> {
  const { operator } = on;
  // The CLI's clients take the SDK's default credential chain, as in a shell that exported the
  // operator's key; the tests' own clients carry the root key explicitly and are not affected.
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = operator.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = operator.secretAccessKey;
  try {
    return await rerunCli([...args, '--stack', on.stackName], {
      env: {
        AWS_ENDPOINT_URL: inject('ministackEndpoint'),
        AWS_ACCESS_KEY_ID: operator.accessKeyId,
        AWS_SECRET_ACCESS_KEY: operator.secretAccessKey,
      },
    });
  } finally {
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  }
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
  clients: PipelineClients,
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
export async function drained(clients: PipelineClients, queueUrl: string, timeoutMs = 60_000): Promise<void> {
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
