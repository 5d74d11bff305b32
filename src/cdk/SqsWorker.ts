import { Duration, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type WorkerTopology, workerQueueNames } from '../topology/WorkerTopology.js';
import { workerTopologyViolations } from '../topology/workerTopologyRules.js';
import { StackConfigurationInvalidError } from './errors.js';

/** The project logger's level (src/logging/logger.ts) for each Lambda application log level. */
const LOGGER_LEVEL: Record<ApplicationLogLevel, string> = {
  [ApplicationLogLevel.TRACE]: 'debug',
  [ApplicationLogLevel.DEBUG]: 'debug',
  [ApplicationLogLevel.INFO]: 'info',
  [ApplicationLogLevel.WARN]: 'warn',
  [ApplicationLogLevel.ERROR]: 'error',
  [ApplicationLogLevel.FATAL]: 'error',
};

/** Props of {@link SqsWorker}. */
export interface SqsWorkerProps {
  /** Timeouts, batch settings, retention and redrive: the same object `rerun dev` runs locally. */
  readonly topology: WorkerTopology;
  /** Absolute path of the handler's TypeScript module (bundled with the local esbuild). */
  readonly entry: string;
  /** Absolute path of the project root (holds package.json, package-lock.json and tsconfig.json). */
  readonly projectRoot: string;
  /**
   * Exported handler function name.
   * @default 'handler'
   */
  readonly handler?: string;
  /**
   * Environment variables of the function (LOG_LEVEL is added from `logLevel`).
   * @default {}
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Physical name prefix of the two queues: `${queueNamePrefix}-${topology.name}-queue` and `-dlq`
   * (plus `.fifo` for a FIFO worker, see workerQueueNames).
   * The names are explicit because the DLQ's `byQueue` redrive allow policy must name the work
   * queue's ARN, and referencing the queue's attribute would make the two queues depend on each
   * other (the work queue's redrive policy already references the DLQ).
   * @default the stack name
   */
  readonly queueNamePrefix?: string;
  /**
   * Retention of the function's log group.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Minimum level of the function's application logs (Lambda filters JSON logs by their `level`).
   * @default ApplicationLogLevel.INFO
   */
  readonly logLevel?: ApplicationLogLevel;
  /**
   * The DLQ alarm fires when at least this many messages wait in the DLQ.
   * @default 1 (any dead letter needs an operator: inspect it, fix, then `rerun redrive`)
   */
  readonly dlqAlarmThreshold?: number;
  /**
   * The backlog alarm fires when the oldest message in the work queue is older than this.
   * @default 2 x the queue's visibility timeout: the message has been retried at least twice, or the
   * queue is not being drained
   */
  readonly oldestMessageAlarmSeconds?: number;
  /**
   * Actions of both alarms (for example an SNS topic).
   * @default no actions: the alarms show in the CloudWatch console only
   */
  readonly alarmActions?: readonly IAlarmAction[];
}

/**
 * One SQS-triggered Lambda worker with the safe settings always on: a work queue and its DLQ
 * (redrive after `maxReceiveCount`, `byQueue` redrive allow policy, 14-day retention), SSE-SQS and
 * TLS-only queue policies, an event source mapping with `ReportBatchItemFailures`, batch size,
 * batching window and maximum concurrency, a Node.js ARM64 function bundled locally as minified ESM
 * with source maps and the AWS SDK inside (never the runtime's), JSON logs in a log group with retention, an
 * execution role with no managed policy, and alarms on DLQ depth and on the age of the oldest message.
 *
 * Settings that AWS would refuse or advises against (visibility timeout under 6 x the function
 * timeout, maxReceiveCount under 5, ...) throw {@link StackConfigurationInvalidError} at synth.
 * Grants to data (buckets, tables) are added by the caller, scoped to what the worker does.
 *
 * @example
 * const worker = new SqsWorker(this, 'normalize', {
 *   topology: topology.normalize,
 *   entry: join(root, 'functions/normalize/handler.ts'),
 *   projectRoot: root,
 *   environment: { OUTPUT_BUCKET: output.bucket.bucketName },
 * });
 * grantPrefixAccess(worker.function, input.bucket, ['incoming/'], { read: true });
 */
export class SqsWorker extends Construct {
  /** The work queue the event source mapping polls. */
  readonly queue: Queue;
  /** Where messages go after `maxReceiveCount` failed receives. */
  readonly deadLetterQueue: Queue;
  /** The worker function. */
  readonly function: NodejsFunction;
  /** The function's execution role (no managed policies; logs, queue and data grants only). */
  readonly role: Role;
  /** The function's log group. */
  readonly logGroup: LogGroup;
  /** The SQS event source (its mapping's id: `eventSource.eventSourceMappingId`). */
  readonly eventSource: SqsEventSource;
  /** Fires when messages wait in the DLQ. */
  readonly dlqDepthAlarm: Alarm;
  /** Fires when the work queue's oldest message is too old (stuck or repeatedly failing work). */
  readonly oldestMessageAgeAlarm: Alarm;

  constructor(scope: Construct, id: string, props: SqsWorkerProps) {
    // Validate before joining the construct tree, so a refused worker leaves nothing behind.
    const t = props.topology;
    const violations = workerTopologyViolations(t);
    const oldestMessageAlarmSeconds = props.oldestMessageAlarmSeconds ?? 2 * t.visibilityTimeoutSeconds;
    const dlqAlarmThreshold = props.dlqAlarmThreshold ?? 1;
    if (dlqAlarmThreshold < 1) violations.push('dlqAlarmThreshold must be at least 1');
    if (oldestMessageAlarmSeconds < 60) violations.push('oldestMessageAlarmSeconds must be at least 60');
    if (violations.length > 0) throw new StackConfigurationInvalidError(violations);
    super(scope, id);

    const stack = Stack.of(this);
    const prefix = props.queueNamePrefix ?? stack.stackName;
    const { queue: queueName, dlq: dlqName } = workerQueueNames(prefix, t);
    // A FIFO queue needs a FIFO DLQ. Content-based deduplication lets producers that send no
    // MessageDeduplicationId (an EventBridge target) use the queue; explicit ids still take precedence.
    const fifo = t.fifo ? { fifo: true } : {};

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      queueName: dlqName,
      ...fifo,
      retentionPeriod: Duration.days(t.dlqRetentionDays),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Only this worker's queue may use the DLQ (SQS RedriveAllowPolicy `byQueue`), so a
      // misconfigured queue elsewhere cannot drop its failures into our redrive path.
      redriveAllowPolicy: {
        redrivePermission: RedrivePermission.BY_QUEUE,
        sourceQueues: [
          Queue.fromQueueArn(this, 'WorkQueueByName', stack.formatArn({ service: 'sqs', resource: queueName })),
        ],
      },
    });

    this.queue = new Queue(this, 'Queue', {
      queueName,
      ...(t.fifo ? { fifo: true, contentBasedDeduplication: true } : {}),
      visibilityTimeout: Duration.seconds(t.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(t.queueRetentionDays),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: t.maxReceiveCount },
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The work queue is nobody's DLQ.
      redriveAllowPolicy: { redrivePermission: RedrivePermission.DENY_ALL },
    });

    this.logGroup = new LogGroup(this, 'LogGroup', { retention: props.logRetention ?? RetentionDays.ONE_MONTH });

    // An explicit role instead of AWSLambdaBasicExecutionRole (a managed policy that may write to
    // any log group): this function writes to its own log group and nothing else.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the rerun ${t.name} worker`,
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    const logLevel = props.logLevel ?? ApplicationLogLevel.INFO;
    this.function = new NodejsFunction(this, 'Function', {
      description: `rerun ${t.name} worker`,
      entry: props.entry,
      handler: props.handler ?? 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: t.memoryMiB,
      timeout: Duration.seconds(t.functionTimeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: logLevel,
      // INFO keeps the platform REPORT line (duration, memory) in the logs.
      systemLogLevelV2: SystemLogLevel.INFO,
      // Stack traces point into the TypeScript sources (the bundle ships its .map file).
      environment: { ...props.environment, LOG_LEVEL: LOGGER_LEVEL[logLevel], NODE_OPTIONS: '--enable-source-maps' },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: true,
        sourceMapMode: SourceMapMode.DEFAULT,
        sourcesContent: false,
        mainFields: ['module', 'main'],
        // ESM output: CommonJS dependencies that call require() need one in scope.
        banner:
          "import { createRequire as __rerunCreateRequire } from 'node:module';const require = __rerunCreateRequire(import.meta.url);",
        // The AWS SDK is bundled at the versions of our lockfile, never taken from the runtime.
        // AWS no longer documents which SDK a Node runtime ships, and an older SDK silently drops
        // input members it does not know, such as PutObject's IfNoneMatch (AWS-SEMANTICS, "SDK
        // versions in the runtime"): the conditional writes would then vanish from the wire.
        bundleAwsSDK: true,
        tsconfig: `${props.projectRoot}/tsconfig.json`,
        // Synth must never need Docker: esbuild is a devDependency and runs locally.
        forceDockerBundling: false,
      },
    });

    this.eventSource = new SqsEventSource(this.queue, {
      batchSize: t.batchSize,
      ...(t.maxBatchingWindowSeconds > 0 ? { maxBatchingWindow: Duration.seconds(t.maxBatchingWindowSeconds) } : {}),
      maxConcurrency: t.maxConcurrency,
      // Partial batch responses: only the listed messages return to the queue.
      reportBatchItemFailures: true,
    });
    // Also grants the role ReceiveMessage, DeleteMessage, GetQueueAttributes, ChangeMessageVisibility
    // (the worker defers a message whose side effect is in progress elsewhere) and GetQueueUrl.
    this.function.addEventSource(this.eventSource);

    this.dlqDepthAlarm = new Alarm(this, 'DlqDepthAlarm', {
      alarmDescription: `rerun ${t.name}: messages in the dead-letter queue. Inspect them, fix the cause, then redrive.`,
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: Stats.MAXIMUM,
      }),
      threshold: dlqAlarmThreshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.oldestMessageAgeAlarm = new Alarm(this, 'OldestMessageAgeAlarm', {
      alarmDescription: `rerun ${t.name}: the oldest message in the work queue is older than ${oldestMessageAlarmSeconds} s (failing retries or a stalled worker).`,
      metric: this.queue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(5),
        statistic: Stats.MAXIMUM,
      }),
      threshold: oldestMessageAlarmSeconds,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    for (const action of props.alarmActions ?? []) {
      this.dlqDepthAlarm.addAlarmAction(action);
      this.oldestMessageAgeAlarm.addAlarmAction(action);
    }
  }
}
