import {
  type CloudFormationClient,
  CreateStackCommand,
  DescribeStacksCommand,
  type Output,
} from '@aws-sdk/client-cloudformation';

/**
 * What the probe function saw in one invocation (it PUTs this to the probe bucket): timings, its
 * context, which names its environment held.
 */
export interface ProbeInvocation {
  readonly queue: string;
  readonly start: number;
  readonly end: number;
  /** `context.getRemainingTimeInMillis()` at the start, and again after sleeping `sleptMs`. */
  readonly remainingAtStart: number;
  readonly remainingAfterSleep: number;
  readonly sleptMs: number;
  readonly invokedFunctionArn: string;
  readonly node: string;
  readonly bodies: string[];
  /** Names of variables MiniStack set for itself (not Lambda's), if the function inherited them. */
  readonly inheritedEmulatorVariables: string[];
}

/** The probe's resources, from its outputs. */
export interface ProbeStack {
  readonly stackName: string;
  readonly bucket: string;
  /** BatchSize 1, MaximumConcurrency 2, no batching window. */
  readonly concurrencyQueueUrl: string;
  /** BatchSize 10, MaximumBatchingWindowInSeconds 5. */
  readonly windowQueueUrl: string;
}

/** How long the probe function sleeps per invocation. */
export const PROBE_SLEEP_MS = 1500;

// CommonJS, inline (CloudFormation's Code.ZipFile): no SDK needed. The PUT is unsigned (anonymous),
// which the probe bucket's own policy allows (below), and the function finds MiniStack through the
// AWS_ENDPOINT_URL it sets (https, with NODE_EXTRA_CA_CERTS naming its certificate).
const PROBE_SOURCE = `
exports.handler = async (event, context) => {
  const start = Date.now();
  const remainingAtStart = context.getRemainingTimeInMillis();
  await new Promise((resolve) => setTimeout(resolve, ${PROBE_SLEEP_MS}));
  const seen = {
    queue: (event.Records[0] || {}).eventSourceARN || '',
    start,
    end: Date.now(),
    remainingAtStart,
    remainingAfterSleep: context.getRemainingTimeInMillis(),
    sleptMs: ${PROBE_SLEEP_MS},
    invokedFunctionArn: context.invokedFunctionArn || '',
    node: process.version,
    bodies: event.Records.map((r) => r.body),
    inheritedEmulatorVariables: ['GATEWAY_PORT', 'BIND_HOST', 'MINISTACK_HOST', 'IOT_MTLS_ENABLED'].filter((n) => n in process.env),
  };
  const url = process.env.AWS_ENDPOINT_URL + '/' + process.env.PROBE_BUCKET + '/' + start + '-' + Math.random().toString(36).slice(2) + '.json';
  await fetch(url, { method: 'PUT', body: JSON.stringify(seen) });
  // A batchItemFailures id that is not in the batch: AWS fails the whole batch.
  const unknown = event.Records.some((r) => r.body === 'answer-with-unknown-id');
  return { batchItemFailures: unknown ? [{ itemIdentifier: 'not-a-message-of-this-batch' }] : [] };
};
`;

const mapping = (queue: string, extra: Record<string, unknown>) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: {
    EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] },
    FunctionName: { Ref: 'ProbeFunction' },
    FunctionResponseTypes: ['ReportBatchItemFailures'],
    ...extra,
  },
});

/** A small stack of its own (not the product's) that observes MiniStack's Lambda runtime and mappings. */
const TEMPLATE = {
  Resources: {
    // The probe reports by unsigned PUTs: a bucket that takes anonymous writes, of this throwaway
    // stack only (with IAM enforced, MiniStack refuses anonymous requests a policy does not allow).
    ProbeBucket: {
      Type: 'AWS::S3::Bucket',
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: false,
          BlockPublicPolicy: false,
          IgnorePublicAcls: false,
          RestrictPublicBuckets: false,
        },
      },
    },
    ProbeBucketPolicy: {
      Type: 'AWS::S3::BucketPolicy',
      Properties: {
        Bucket: { Ref: 'ProbeBucket' },
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: '*',
              Action: 's3:PutObject',
              Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['ProbeBucket', 'Arn'] }, '/*']] },
            },
          ],
        },
      },
    },
    ConcurrencyQueue: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 60 } },
    WindowQueue: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 60 } },
    ProbeRole: {
      Type: 'AWS::IAM::Role',
      Properties: {
        AssumeRolePolicyDocument: {
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
        },
      },
    },
    ProbeFunction: {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Runtime: 'nodejs24.x',
        Handler: 'index.handler',
        Timeout: 10,
        Role: { 'Fn::GetAtt': ['ProbeRole', 'Arn'] },
        Code: { ZipFile: PROBE_SOURCE },
        Environment: { Variables: { PROBE_BUCKET: { Ref: 'ProbeBucket' } } },
      },
    },
    ConcurrencyMapping: mapping('ConcurrencyQueue', { BatchSize: 1, ScalingConfig: { MaximumConcurrency: 2 } }),
    WindowMapping: mapping('WindowQueue', { BatchSize: 10, MaximumBatchingWindowInSeconds: 5 }),
  },
  Outputs: {
    Bucket: { Value: { Ref: 'ProbeBucket' } },
    ConcurrencyQueueUrl: { Value: { Ref: 'ConcurrencyQueue' } },
    WindowQueueUrl: { Value: { Ref: 'WindowQueue' } },
  },
};

/**
 * Creates the probe stack and waits for CREATE_COMPLETE.
 *
 * @example
 * const probe = await createProbeStack(cloudformation, 'rerun-probe-1a2b');
 */
export async function createProbeStack(cloudformation: CloudFormationClient, stackName: string): Promise<ProbeStack> {
  await cloudformation.send(
    new CreateStackCommand({
      StackName: stackName,
      TemplateBody: JSON.stringify(TEMPLATE),
      Capabilities: ['CAPABILITY_IAM'],
    }),
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    const stack = (await cloudformation.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
    if (stack?.StackStatus === 'CREATE_COMPLETE') {
      const value = (key: string) => (stack.Outputs ?? []).find((o: Output) => o.OutputKey === key)?.OutputValue ?? '';
      return {
        stackName,
        bucket: value('Bucket'),
        concurrencyQueueUrl: value('ConcurrencyQueueUrl'),
        windowQueueUrl: value('WindowQueueUrl'),
      };
    }
    if (!stack || /FAILED|ROLLBACK/.test(stack.StackStatus ?? '') || Date.now() > deadline) {
      throw new Error(
        `The probe stack ${stackName} did not deploy: ${stack?.StackStatus} ${stack?.StackStatusReason ?? ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}
