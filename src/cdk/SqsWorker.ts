import { Annotations, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import {
  ApplicationLogLevel,
  Architecture,
  type Code,
  Function as LambdaFunction,
  LoggingFormat,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption, type QueueProps, RedrivePermission } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { OptionNames } from '../options/checkOptions.js';
import type { DeterministicKeyRule } from '../pipeline/keyRule.js';
import type { ObjectStage } from '../pipeline/pipelineDescription.js';
import type { WorkerTopology } from '../topology/WorkerTopology.js';
import { WORKER_TOPOLOGY_NAMES } from '../topology/WorkerTopology.js';
import { workerTopologyViolations } from '../topology/workerTopologyRules.js';
import { acknowledgeCheckov, CheckovCheck } from './checkovAcknowledgements.js';
import { checkProps, SQS_WORKER_PROP_NAMES } from './checkProps.js';
import { StackConfigurationInvalidError } from './errors.js';
import { grantKeyUseVia, KeyService } from './keyGrants.js';
import { entryFunctionProps, WORKER_RUNTIME } from './workerBundling.js';

/** The project logger's level (src/logging/logger.ts) for each Lambda application log level. */
const LOGGER_LEVEL: Record<ApplicationLogLevel, string> = {
  [ApplicationLogLevel.TRACE]: 'debug',
  [ApplicationLogLevel.DEBUG]: 'debug',
  [ApplicationLogLevel.INFO]: 'info',
  [ApplicationLogLevel.WARN]: 'warn',
  [ApplicationLogLevel.ERROR]: 'error',
  [ApplicationLogLevel.FATAL]: 'error',
};

/**
 * Where a worker's code comes from: a handler module that CDK bundles with esbuild
 * (`NodejsFunction`, TypeScript or JavaScript, the AWS SDK bundled inside), or ready-made code.
 * Bundling an entry needs esbuild installed in your project (`npm install -D esbuild`): this
 * construct never falls back to Docker.
 */
export type WorkerSource =
  | {
      /** Path of the handler module (`.ts`, `.mts`, `.js`, `.mjs`), absolute or relative to the working directory. */
      readonly entry: string;
      /**
       * Exported handler function name.
       * @default 'handler'
       */
      readonly handler?: string;
      /**
       * The lockfile esbuild resolves dependencies against (package-lock.json, yarn.lock, pnpm-lock.yaml, bun.lockb).
       * @default the lockfile CDK finds by walking up from the working directory (your project's)
       */
      readonly depsLockFilePath?: string;
      /**
       * Root of the project the entry belongs to.
       * @default the folder of `depsLockFilePath`
       */
      readonly projectRoot?: string;
      /**
       * tsconfig.json esbuild compiles the entry with.
       * @default none: esbuild's own lookup next to the entry
       */
      readonly tsconfig?: string;
      /** @see the `{ code }` form's `outputPrefixes`. @default not declared */
      readonly outputPrefixes?: readonly string[];
    }
  | {
      /** Ready-made code (a prebuilt bundle: `Code.fromAsset('dist/worker')`). It must carry its own AWS SDK. */
      readonly code: Code;
      /** `file.export` of the handler inside `code` (`index.handler`). */
      readonly handler: string;
      /**
       * The key prefixes the worker writes its outputs under, when the source declares them
       * (`referenceWorker('normalize')` does): RerunPipeline grants these unless its own
       * `outputPrefixes` prop says otherwise.
       * @default not declared
       */
      readonly outputPrefixes?: readonly string[];
      /**
       * The pipeline stage the code runs, when the source declares it (`referenceWorker('normalize')`
       * does): RerunPipeline publishes it with `outputs: true` unless its `pipeline` prop says otherwise.
       * @default not declared
       */
      readonly stage?: ObjectStage<DeterministicKeyRule>;
    };

/** The names of {@link WorkerSource} (either form), checked by checkOptions (tsc fails when this list and the type differ). */
export const WORKER_SOURCE_NAMES = {
  code: true,
  depsLockFilePath: true,
  entry: true,
  handler: true,
  outputPrefixes: true,
  projectRoot: true,
  stage: true,
  tsconfig: true,
} as const satisfies OptionNames<WorkerSource>;

/**
 * Function settings that may override the construct's (aws-solutions-constructs style escape
 * hatch). `environment` is merged with the construct's variables; `bundling` with its bundling
 * options; everything else replaces the default. `memorySize` and `timeout` replace the topology's
 * (the queue's visibility timeout is checked against the final timeout).
 */
export type WorkerFunctionProps = Omit<NodejsFunctionProps, 'entry' | 'handler' | 'code'>;

/** Props of {@link SqsWorker}. */
export interface SqsWorkerProps {
  /** Timeouts, batch settings, retention and redrive: the same object `rerun dev` runs locally. */
  readonly topology: WorkerTopology;
  /** The worker's code: `{ entry }` (bundled here) or `{ code, handler }`. */
  readonly source: WorkerSource;
  /**
   * Environment variables of the function (LOG_LEVEL is added from `logLevel`).
   * @default {}
   */
  readonly environment?: Readonly<Record<string, string>>;
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
   * X-Ray tracing of the function. Active tracing samples invocations (the first request each
   * second and 5 % of the rest) and costs per trace recorded beyond X-Ray's free tier; the role
   * gets `xray:PutTraceSegments` and `xray:PutTelemetryRecords`. With active or pass-through
   * tracing the function gets RERUN_TRACE_AWS_SDK=true: the reference workers then record each AWS
   * SDK call as a subsegment (`traceAwsClients`).
   * @default Tracing.ACTIVE (as aws-solutions-constructs' Lambda defaults)
   */
  readonly tracing?: Tracing;
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
   * Actions of every alarm (for example an SNS topic), on ALARM and, with `notifyOnOk`, on OK.
   * @default no actions: the alarms show in the CloudWatch console only
   */
  readonly alarmActions?: readonly IAlarmAction[];
  /**
   * Run the alarm actions when an alarm returns to OK too, so the people paged learn that the DLQ
   * was drained or the errors stopped.
   * @default true
   */
  readonly notifyOnOk?: boolean;
  /**
   * The duration alarm fires when an invocation's longest run reaches this fraction of the function
   * timeout: the next larger batch or input will time out, and a timeout loses the batch's partial
   * response.
   * @default 0.8
   */
  readonly durationAlarmRatio?: number;
  /**
   * Concurrency reserved for the function (`ReservedConcurrentExecutions`): other functions of the
   * account cannot starve it, and it never runs wider. It must be at least the mapping's
   * MaximumConcurrency (`topology.maxConcurrency`): AWS says not to configure a maximum concurrency
   * above the function's reserved concurrency, or Lambda may throttle the messages (Lambda Developer
   * Guide, "Configuring scaling behavior for SQS event source mappings"); a smaller value fails at synth.
   * @default `topology.maxConcurrency`, unless `reserveConcurrency` is false
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Reserve concurrency for the function. Without a reservation, other functions of the account can
   * use up its concurrency: Lambda then throttles the mapping's invocations, the messages return
   * after the visibility timeout, and each throttle counts as a receive, so a message can reach the
   * DLQ with no failure record. Turn it off only where a reservation cannot be made: Lambda keeps
   * 100 of the account's concurrency unreserved (PutFunctionConcurrency), and an account whose limit
   * is 10 (new accounts) refuses any reservation ("decreases account's UnreservedConcurrentExecution
   * below its minimum value of [10]"). Off, the synth warns (`rerun:concurrencyNotReserved`).
   * @default true
   */
  readonly reserveConcurrency?: boolean;
  /**
   * Overrides of the function's settings (see {@link WorkerFunctionProps}).
   * @default none
   */
  readonly functionProps?: WorkerFunctionProps;
  /**
   * Overrides of the work queue's settings, merged over the construct's (encryption, TLS-only,
   * retention, visibility timeout, RETAIN). `deadLetterQueue` and `fifo` cannot be overridden here:
   * the DLQ comes from `deadLetterQueueProps` and `topology.maxReceiveCount`, FIFO from the topology.
   * @default none
   */
  readonly queueProps?: QueueProps;
  /**
   * Overrides of the DLQ's settings, merged over the construct's (encryption, TLS-only, 14 days, RETAIN).
   * @default none
   */
  readonly deadLetterQueueProps?: QueueProps;
}

/**
 * One SQS-triggered Lambda worker with the safe settings always on: a work queue and its DLQ
 * (redrive after `maxReceiveCount`, 14-day retention, both retained on stack delete, names
 * generated by CloudFormation), SSE-SQS and TLS-only queue policies, an event source mapping with
 * `ReportBatchItemFailures`, batch size, batching window and maximum concurrency (reserved for the
 * function by default, so other functions cannot starve it), a Node.js ARM64
 * function (bundled locally as minified ESM with source maps and the AWS SDK inside, never the
 * runtime's, or given as code), JSON logs in a log group with retention, X-Ray tracing, an
 * execution role with no managed policy, and alarms on DLQ depth, on the age of the oldest message,
 * on Lambda errors and throttles and on a duration near the timeout (actions on ALARM and OK).
 *
 * Generated queue names: a fixed name blocks every update that replaces the queue (CloudFormation
 * creates the replacement before it deletes the old one, and the name is taken). The price: the
 * DLQ's redrive allow policy cannot name the work queue (`byQueue` with the work queue's ARN would
 * make the two queues reference each other, as the work queue's redrive policy names the DLQ), so
 * the DLQ keeps SQS's default (`allowAll`, any queue of this account may use it as its DLQ) and
 * the work queue refuses to be anyone's DLQ (`denyAll`). Operators find the queues through the
 * stack's outputs, never by name.
 *
 * Settings that AWS would refuse or advises against (visibility timeout under 6 x the function
 * timeout, maxReceiveCount under 5, ...) throw {@link StackConfigurationInvalidError} at synth.
 * Grants to data (buckets, tables) are added by the caller, scoped to what the worker does.
 *
 * @example
 * const worker = new SqsWorker(this, 'normalize', {
 *   topology: topology.normalize,
 *   source: { entry: 'src/worker.ts' },
 *   environment: { OUTPUT_BUCKET: output.bucket.bucketName },
 * });
 * grantPrefixAccess(worker.function, input.bucket, ['incoming/'], { read: true });
 */
export class SqsWorker extends Construct {
  /** The work queue the event source mapping polls. */
  readonly queue: Queue;
  /** Where messages go after `maxReceiveCount` failed receives. */
  readonly deadLetterQueue: Queue;
  /** The worker function (a `NodejsFunction` for an `entry` source). */
  readonly function: LambdaFunction;
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
  /** Fires when an invocation failed as a whole (a timeout, a crash, a full-batch failure). */
  readonly errorsAlarm: Alarm;
  /** Fires when Lambda throttled an invocation (reserved or account concurrency exhausted). */
  readonly throttlesAlarm: Alarm;
  /** Fires when an invocation ran close to the function timeout. */
  readonly durationAlarm: Alarm;
  /** Every alarm of the worker. */
  readonly alarms: readonly Alarm[];
  /** The settings the worker was built with: the topology with `functionProps`' memory and timeout applied. */
  readonly topology: WorkerTopology;

  constructor(scope: Construct, id: string, props: SqsWorkerProps) {
    checkProps('SqsWorker', props, SQS_WORKER_PROP_NAMES, {
      source: WORKER_SOURCE_NAMES,
      topology: WORKER_TOPOLOGY_NAMES,
    });
    // Validate before joining the construct tree, so a refused worker leaves nothing behind.
    const violations = sqsWorkerViolations(props);
    if (violations.length > 0) throw new StackConfigurationInvalidError(violations);
    const t = effectiveTopology(props);
    super(scope, id);
    this.topology = t;
    const qp = withRotatedKey(this, 'QueueKey', props.queueProps ?? {});
    const dlqp = withRotatedKey(this, 'DeadLetterQueueKey', props.deadLetterQueueProps ?? {});
    this.deadLetterQueue = this.createDeadLetterQueue(t, dlqp);
    this.queue = this.createQueue(t, qp);
    this.logGroup = new LogGroup(this, 'LogGroup', { retention: props.logRetention ?? RetentionDays.ONE_MONTH });
    this.role = this.createRole(t);
    this.function = this.createFunction(props, t);
    acknowledgeWorkerChecks(this, props);
    this.eventSource = this.connectQueue(t);
    const alarms = this.createAlarms(props, t);
    this.dlqDepthAlarm = alarms.dlqDepth;
    this.oldestMessageAgeAlarm = alarms.oldestMessageAge;
    this.errorsAlarm = alarms.errors;
    this.throttlesAlarm = alarms.throttles;
    this.durationAlarm = alarms.duration;
    this.alarms = [
      this.dlqDepthAlarm,
      this.oldestMessageAgeAlarm,
      this.errorsAlarm,
      this.throttlesAlarm,
      this.durationAlarm,
    ];
    for (const action of props.alarmActions ?? []) {
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(action);
        if (props.notifyOnOk ?? true) alarm.addOkAction(action);
      }
    }
  }

  /** The DLQ: a FIFO one for a FIFO queue, SSE-SQS, TLS only, retained on stack delete. */
  private createDeadLetterQueue(t: WorkerTopology, dlqp: QueueProps): Queue {
    // A FIFO queue needs a FIFO DLQ. Content-based deduplication lets producers that send no
    // MessageDeduplicationId (an EventBridge target) use the queue; explicit ids still take precedence.
    const fifo = t.fifo ? { fifo: true } : {};

    return new Queue(this, 'DeadLetterQueue', {
      ...fifo,
      retentionPeriod: Duration.days(t.dlqRetentionDays),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Dead letters are the only copy of work that failed: a stack delete must not drop them.
      removalPolicy: RemovalPolicy.RETAIN,
      ...dlqp,
    });
  }

  /** The work queue, redriving to the DLQ after `maxReceiveCount` receives. */
  private createQueue(t: WorkerTopology, qp: QueueProps): Queue {
    return new Queue(this, 'Queue', {
      ...(t.fifo ? { fifo: true, contentBasedDeduplication: true } : {}),
      visibilityTimeout: Duration.seconds(t.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(t.queueRetentionDays),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The work queue is nobody's DLQ.
      redriveAllowPolicy: { redrivePermission: RedrivePermission.DENY_ALL },
      // Messages waiting in the queue are work not yet done: kept when the stack is deleted.
      removalPolicy: RemovalPolicy.RETAIN,
      ...qp,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: t.maxReceiveCount },
    });
  }

  /** The execution role: no managed policy, writes to its own log group only. */
  private createRole(t: WorkerTopology): Role {
    // An explicit role instead of AWSLambdaBasicExecutionRole (a managed policy that may write to
    // any log group): this function writes to its own log group and nothing else.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the rerun ${t.name} worker`,
    });
    role.addToPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    return role;
  }

  /** The function (from code, or bundled from an entry), with JSON logs, tracing and the topology's memory and timeout. */
  private createFunction(props: SqsWorkerProps, t: WorkerTopology): LambdaFunction {
    const fp = props.functionProps ?? {};
    const logLevel = props.logLevel ?? ApplicationLogLevel.INFO;
    const tracing = fp.tracing ?? props.tracing ?? Tracing.ACTIVE;
    const { environment: extraEnvironment, bundling: extraBundling, ...rest } = fp;
    const common = {
      description: `rerun ${t.name} worker`,
      runtime: WORKER_RUNTIME,
      architecture: Architecture.ARM_64,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: logLevel,
      // INFO keeps the platform REPORT line (duration, memory) in the logs.
      systemLogLevelV2: SystemLogLevel.INFO,
      ...rest,
      memorySize: t.memoryMiB,
      timeout: Duration.seconds(t.functionTimeoutSeconds),
      tracing,
      ...(props.reserveConcurrency === false
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrentExecutions ?? t.maxConcurrency }),
      // Stack traces point into the sources (the bundle ships its .map file).
      environment: {
        LOG_LEVEL: LOGGER_LEVEL[logLevel],
        NODE_OPTIONS: '--enable-source-maps',
        // The redrive count of the queue this construct creates: a handler that records failures
        // knows a message's last receive without GetQueueUrl and GetQueueAttributes on a cold start.
        MAX_RECEIVE_COUNT: String(t.maxReceiveCount),
        // The function traces: its AWS SDK calls should too (see src/aws/traceAwsClients.ts).
        ...(tracing === Tracing.ACTIVE || tracing === Tracing.PASS_THROUGH ? { RERUN_TRACE_AWS_SDK: 'true' } : {}),
        ...props.environment,
        ...extraEnvironment,
      },
    };
    const source = props.source;
    let fn: LambdaFunction;
    if ('code' in source) {
      fn = new LambdaFunction(this, 'Function', { ...common, code: source.code, handler: source.handler });
    } else {
      fn = new NodejsFunction(this, 'Function', { ...common, ...entryFunctionProps(source, extraBundling) });
    }
    if (tracing === Tracing.ACTIVE || tracing === Tracing.PASS_THROUGH) {
      Validations.of(this.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions ' +
          '(Service Authorization Reference, AWS X-Ray), so CDK grants them on "*"; they only write trace data.',
      });
    }
    return fn;
  }

  /** The event source mapping from the work queue (partial batch responses), and the send of a requeue. */
  private connectQueue(t: WorkerTopology): SqsEventSource {
    const eventSource = new SqsEventSource(this.queue, {
      batchSize: t.batchSize,
      ...(t.maxBatchingWindowSeconds > 0 ? { maxBatchingWindow: Duration.seconds(t.maxBatchingWindowSeconds) } : {}),
      maxConcurrency: t.maxConcurrency,
      // Partial batch responses: only the listed messages return to the queue.
      reportBatchItemFailures: true,
    });
    // Also grants the role ReceiveMessage, DeleteMessage, GetQueueAttributes, ChangeMessageVisibility
    // (the worker defers a message whose side effect is in progress elsewhere) and GetQueueUrl.
    this.function.addEventSource(eventSource);
    // When the deadline comes near with S3 records of a message not done, the batch handler sends
    // them back to this queue as one new message (src/batch/requeueRest.ts). Its own queue
    // only, and a standard one only: on a FIFO queue a new message would break the order, so the
    // handler fails the message instead and needs no send.
    // Not grantSendMessages: on a KMS queue it adds kms:Encrypt and ReEncrypt* on the key, which a
    // send does not use; SQS needs GenerateDataKey and Decrypt of a producer (keyGrants.ts).
    if (!t.fifo) {
      this.function.addToRolePolicy(
        new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }),
      );
      const key = this.queue.encryptionMasterKey;
      if (key) grantKeyUseVia(this.function, key, KeyService.SQS, { write: true });
    }
    return eventSource;
  }

  /** The worker's alarms: DLQ depth, age of the oldest message, errors, throttles, duration near the timeout. */
  private createAlarms(props: SqsWorkerProps, t: WorkerTopology) {
    const oldestMessageAlarmSeconds = props.oldestMessageAlarmSeconds ?? 2 * t.visibilityTimeoutSeconds;
    const dlqAlarmThreshold = props.dlqAlarmThreshold ?? 1;
    const dlqDepth = new Alarm(this, 'DlqDepthAlarm', {
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
    const oldestMessageAge = new Alarm(this, 'OldestMessageAgeAlarm', {
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
    return { dlqDepth, oldestMessageAge, ...this.createInvocationAlarms(props, t) };
  }

  /** The alarms on whole invocations: errors, throttles and a duration near the timeout. */
  private createInvocationAlarms(props: SqsWorkerProps, t: WorkerTopology) {
    // Whole invocations: a timeout or a crash loses the batch's partial response and shows only here
    // (and later as message age); throttles mean the concurrency is too small for the backlog.
    const invocations = { period: Duration.minutes(5), statistic: Stats.SUM };
    const errors = new Alarm(this, 'ErrorsAlarm', {
      alarmDescription: `rerun ${t.name}: invocations failed as a whole (timeout, crash or full-batch failure). See the function's logs.`,
      metric: this.function.metricErrors(invocations),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const throttles = new Alarm(this, 'ThrottlesAlarm', {
      alarmDescription: `rerun ${t.name}: Lambda throttled invocations (reserved or account concurrency exhausted).`,
      metric: this.function.metricThrottles(invocations),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const ratio = props.durationAlarmRatio ?? 0.8;
    const durationThresholdMs = Math.round(ratio * t.functionTimeoutSeconds * 1000);
    const duration = new Alarm(this, 'DurationAlarm', {
      alarmDescription:
        `rerun ${t.name}: an invocation ran ${Math.round(ratio * 100)} % of the ${t.functionTimeoutSeconds} s timeout ` +
        '(a timeout loses the whole batch): raise memory or timeout, or lower the batch size or maxInputBytes.',
      metric: this.function.metricDuration({ period: Duration.minutes(5), statistic: Stats.MAXIMUM }),
      threshold: durationThresholdMs,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    return { errors, throttles, duration };
  }
}

/** The checkov checks a worker meets otherwise, each with its reason (see checkovAcknowledgements.ts). */
function acknowledgeWorkerChecks(worker: SqsWorker, props: SqsWorkerProps): void {
  const fp = props.functionProps ?? {};
  for (const queue of [worker.queue, worker.deadLetterQueue]) {
    if (queue.encryptionMasterKey) continue;
    acknowledgeCheckov(
      queue,
      CheckovCheck.SQS_KMS,
      'Encrypted at rest with SSE-SQS (SqsManagedSseEnabled): no key policy to keep in step with S3 notifications; ' +
        'queueProps.encryption KMS switches to a customer managed key.',
    );
  }
  if (!fp.vpc) {
    acknowledgeCheckov(
      worker.function,
      CheckovCheck.LAMBDA_VPC,
      'Calls only AWS APIs (S3, SQS, DynamoDB) and an HTTPS webhook, nothing inside a VPC; functionProps.vpc places it in one.',
    );
  }
  acknowledgeCheckov(
    worker.function,
    CheckovCheck.LAMBDA_DLQ,
    "Invoked by an SQS event source mapping, never asynchronously: a function DLQ would never receive anything; the work queue's redrive policy moves failed messages to its DLQ.",
  );
  if (props.reserveConcurrency === false) {
    acknowledgeCheckov(
      worker.function,
      CheckovCheck.LAMBDA_CONCURRENCY,
      "Opted out (reserveConcurrency: false) where the account's concurrency limit leaves nothing to reserve; the " +
        "mapping's MaximumConcurrency still caps it, and the synth warns (rerun:concurrencyNotReserved).",
    );
    Annotations.of(worker).addWarningV2(
      'rerun:concurrencyNotReserved',
      `The ${worker.topology.name} worker reserves no concurrency (reserveConcurrency: false): other functions of ` +
        "the account can take its concurrency, and Lambda's throttles then count as receives, so messages can " +
        'reach the DLQ without a failure record. Reserve it (the default) once the account limit allows.',
    );
  }
  if (!fp.environmentEncryption) {
    acknowledgeCheckov(
      worker.function,
      CheckovCheck.LAMBDA_ENV_CMK,
      'Lambda encrypts environment variables at rest with its AWS managed key; they hold resource names, and a ' +
        'webhook URL only from a dynamic reference (docs/DEPLOY.md); functionProps.environmentEncryption sets a key.',
    );
  }
  acknowledgeCheckov(
    worker.logGroup,
    CheckovCheck.LOGS_KMS,
    'CloudWatch Logs encrypts log data at rest; the logs hold object keys and reasons, no secrets, and a customer ' +
      'managed key would need the logs service in its key policy.',
  );
}

/**
 * `QueueEncryption.KMS` without a key makes CDK create one that is never rotated (AwsSolutions-KMS5):
 * create it here instead, rotated yearly.
 */
function withRotatedKey(scope: Construct, id: string, props: QueueProps): QueueProps {
  if (props.encryption !== QueueEncryption.KMS || props.encryptionMasterKey) return props;
  const key = new Key(scope, id, {
    description: `rerun: encrypts the ${id.replace(/Key$/, '')}`,
    enableKeyRotation: true,
  });
  return { ...props, encryptionMasterKey: key };
}

/** The topology with `functionProps`' memory and timeout and `queueProps`' visibility timeout applied. */
function effectiveTopology(props: SqsWorkerProps): WorkerTopology {
  const fp = props.functionProps ?? {};
  const qp = props.queueProps ?? {};
  return {
    ...props.topology,
    ...(fp.memorySize !== undefined ? { memoryMiB: fp.memorySize } : {}),
    ...(fp.timeout !== undefined ? { functionTimeoutSeconds: fp.timeout.toSeconds() } : {}),
    ...(qp.visibilityTimeout !== undefined ? { visibilityTimeoutSeconds: qp.visibilityTimeout.toSeconds() } : {}),
  };
}

/**
 * Why {@link SqsWorker} would refuse these props (empty: it accepts them): the topology's AWS rules
 * applied to the final settings, the worker source, and escape hatches that contradict the topology.
 *
 * @example
 * sqsWorkerViolations({ topology, source: { entry: 'worker.mjs' } }); // []
 */
export function sqsWorkerViolations(props: SqsWorkerProps): string[] {
  const fp = props.functionProps ?? {};
  const qp = props.queueProps ?? {};
  const dlqp = props.deadLetterQueueProps ?? {};
  const t = effectiveTopology(props);
  const violations = [...workerTopologyViolations(t), ...sourceViolations(props.source)];
  if (qp.deadLetterQueue)
    violations.push('queueProps.deadLetterQueue: the DLQ is built here; use deadLetterQueueProps');
  if (qp.fifo !== undefined && qp.fifo !== (t.fifo ?? false)) {
    violations.push('queueProps.fifo contradicts topology.fifo: set FIFO in the topology');
  }
  if (dlqp.fifo !== undefined && dlqp.fifo !== (t.fifo ?? false)) {
    violations.push('deadLetterQueueProps.fifo contradicts topology.fifo: a FIFO queue needs a FIFO DLQ, and only it');
  }
  if (props.tracing !== undefined && fp.tracing !== undefined && props.tracing !== fp.tracing) {
    violations.push('tracing and functionProps.tracing disagree: set one');
  }
  const oldestMessageAlarmSeconds = props.oldestMessageAlarmSeconds ?? 2 * t.visibilityTimeoutSeconds;
  if ((props.dlqAlarmThreshold ?? 1) < 1) violations.push('dlqAlarmThreshold must be at least 1');
  const ratio = props.durationAlarmRatio ?? 0.8;
  if (!(ratio > 0 && ratio < 1))
    violations.push('durationAlarmRatio must be between 0 and 1 (a fraction of the timeout)');
  const reserved = props.reservedConcurrentExecutions;
  if (props.reserveConcurrency === false && reserved !== undefined) {
    violations.push('reserveConcurrency: false contradicts reservedConcurrentExecutions: set one');
  }
  if (reserved !== undefined && (!Number.isInteger(reserved) || reserved < t.maxConcurrency)) {
    violations.push(
      `reservedConcurrentExecutions (${reserved}) must be an integer of at least the mapping's maxConcurrency ` +
        `(${t.maxConcurrency}): below it Lambda throttles the mapping's invocations`,
    );
  }
  if (oldestMessageAlarmSeconds < 60) violations.push('oldestMessageAlarmSeconds must be at least 60');
  return violations;
}

function sourceViolations(source: WorkerSource | undefined): string[] {
  if (!source || typeof source !== 'object') return ['worker: give { entry } or { code, handler }'];
  const s = source as { entry?: unknown; code?: unknown; handler?: unknown };
  if (s.entry !== undefined && s.code !== undefined) return ['worker: give either entry or code, not both'];
  if (s.entry === undefined && s.code === undefined) return ['worker: give { entry } or { code, handler }'];
  if (s.code !== undefined && (typeof s.handler !== 'string' || s.handler === '')) {
    return ['worker: code needs its handler ("index.handler")'];
  }
  if (s.entry !== undefined && (typeof s.entry !== 'string' || s.entry === '')) {
    return ['worker: entry must be the path of the handler module'];
  }
  return [];
}
