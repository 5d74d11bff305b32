import { CreateAccessKeyCommand, CreateUserCommand, type IAMClient, PutUserPolicyCommand } from '@aws-sdk/client-iam';
import type { StackResources } from '../../../app/common/stackTarget.js';
import { StackOutput } from '../../../app/stackOutputs.js';

/** MiniStack's account for the test credentials. */
export const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

/** An IAM user's access key. */
export interface OperatorCredentials {
  readonly userArn: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** `arn:aws:sqs:...` of a queue URL (`https://host/<account>/<name>`). */
export function queueArnOf(queueUrl: string): string {
  const name = queueUrl.split('/').at(-1) ?? '';
  return `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
}

/**
 * What an operator needs to run `rerun status`, `backfill`, `reprocess --verify --prune` and
 * `redrive` with `--stack` on the deployed stack, and nothing else (docs/DEPLOY.md, "Using the
 * deployed stack", lists the same): DescribeStacks of the stack; listings of both buckets; reads of
 * uploads and of everything rerun writes; deletes (If-Match, as the bucket policy requires) of
 * outputs for `--prune`; sending to the work queues (window stages' too); reading, deleting and moving dead letters.
 * No write to a bucket, no queue administration. The `...Batch` names are there for MiniStack only.
 */
export function operatorPolicy(stack: StackResources): { Version: string; Statement: unknown[] } {
  const bucket = (name: string) => `arn:aws:s3:::${name}`;
  // The queues the stack has outputs for (a RerunPipeline stack has no summary stage).
  const urls = (...keys: string[]) => keys.map((k) => stack.outputs[k]).filter((u): u is string => Boolean(u));
  // A user's window stages (RerunWindowStage, outputs: true): <Stage>WindowQueueUrl and <Stage>WindowDeadLetterQueueUrl.
  const windowOutputs = (suffix: string) => Object.keys(stack.outputs).filter((k) => k.endsWith(suffix));
  const workQueues = urls(StackOutput.QUEUE_URL, StackOutput.SUMMARY_QUEUE_URL, ...windowOutputs('WindowQueueUrl')).map(
    queueArnOf,
  );
  const deadLetterQueues = urls(
    StackOutput.DLQ_URL,
    StackOutput.SUMMARY_DLQ_URL,
    ...windowOutputs('WindowDeadLetterQueueUrl'),
  ).map(queueArnOf);
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: 'cloudformation:DescribeStacks',
        Resource: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${stack.stackName}/*`,
      },
      { Effect: 'Allow', Action: 's3:ListBucket', Resource: [bucket(stack.inputBucket), bucket(stack.outputBucket)] },
      {
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: [`${bucket(stack.inputBucket)}/incoming/*`, `${bucket(stack.outputBucket)}/*`],
      },
      {
        Effect: 'Allow',
        Action: 's3:DeleteObject',
        Resource: [`${bucket(stack.outputBucket)}/normalized/*`, `${bucket(stack.outputBucket)}/quarantine/*`],
      },
      {
        Effect: 'Allow',
        // sqs:SendMessageBatch is no IAM action on AWS (sqs:SendMessage grants the batch call), but
        // MiniStack 1.5.33 authorizes each batch call as its own action (docs/EMULATORS.md).
        Action: ['sqs:SendMessage', 'sqs:SendMessageBatch', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
        Resource: workQueues,
      },
      {
        Effect: 'Allow',
        Action: [
          'sqs:ReceiveMessage',
          'sqs:DeleteMessage',
          'sqs:DeleteMessageBatch',
          'sqs:ChangeMessageVisibility',
          'sqs:ChangeMessageVisibilityBatch',
          'sqs:GetQueueAttributes',
          'sqs:GetQueueUrl',
          'sqs:StartMessageMoveTask',
          'sqs:ListMessageMoveTasks',
        ],
        Resource: deadLetterQueues,
      },
    ],
  };
}

/**
 * Creates the IAM user the deployed tier runs the operator commands as, with {@link operatorPolicy}
 * inline and an access key: with IAM enforced, every request of `rerun --stack ...` is then judged
 * by MiniStack's evaluator (the account root's test key would skip every policy).
 *
 * @example
 * const operator = await createOperator(iam, stack);
 */
export async function createOperator(
  iam: IAMClient,
  stack: StackResources,
  as: { readonly role: string; readonly policy: { Version: string; Statement: unknown[] } } = {
    role: 'operator',
    policy: operatorPolicy(stack),
  },
): Promise<OperatorCredentials> {
  const userName = `${stack.stackName}-${as.role}`;
  const user = await iam.send(new CreateUserCommand({ UserName: userName }));
  await iam.send(
    new PutUserPolicyCommand({
      UserName: userName,
      PolicyName: `rerun-${as.role}`,
      PolicyDocument: JSON.stringify(as.policy),
    }),
  );
  const key = await iam.send(new CreateAccessKeyCommand({ UserName: userName }));
  return {
    userArn: user.User?.Arn ?? '',
    accessKeyId: key.AccessKey?.AccessKeyId ?? '',
    secretAccessKey: key.AccessKey?.SecretAccessKey ?? '',
  };
}

/**
 * The operator's policy and the two reads of `rerun ui`'s live view of a deployed stack
 * (docs/DEPLOY.md lists the same): FilterLogEvents on the workers' log groups, and GetMetricData,
 * which has no resource-level permission.
 */
export function consoleReaderPolicy(stack: StackResources): { Version: string; Statement: unknown[] } {
  const groups = [StackOutput.LOG_GROUP, StackOutput.SUMMARIZE_LOG_GROUP]
    .map((k) => stack.outputs[k])
    .filter((g): g is string => Boolean(g));
  const operator = operatorPolicy(stack);
  return {
    ...operator,
    Statement: [
      ...operator.Statement,
      {
        Effect: 'Allow',
        Action: 'logs:FilterLogEvents',
        // Both forms of a log group's ARN: with `:*` (its streams, as CloudWatch Logs' own examples
        // write it) and without (what FilterLogEvents is authorized against on MiniStack).
        Resource: groups.flatMap((g) => [
          `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${g}`,
          `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${g}:*`,
        ]),
      },
      { Effect: 'Allow', Action: 'cloudwatch:GetMetricData', Resource: '*' },
    ],
  };
}
