import { CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarmAction, Stats, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { EventField, Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_FAILURE_PREFIX } from '../failures/failureRecord.js';
import type { TimeGrain } from '../partitions/partitionSpec.js';
import { checkPipeline } from '../pipeline/parsePipelineDescription.js';
import {
  describePipeline,
  type PipelineDefinition,
  type PipelineDescription,
  type WindowStage,
} from '../pipeline/pipelineDescription.js';
import type { WorkerTopology } from '../topology/WorkerTopology.js';
import { WINDOW_STAGE_DEFAULT_SETTINGS } from '../topology/windowStageSettings.js';
import { windowStageOutputKeys } from '../window/windowStageOutputKeys.js';
import { scheduledWindowTaskBody } from '../window/windowTaskMessage.js';
import { acknowledgeCheckov, CheckovCheck } from './checkovAcknowledgements.js';
import { checkProps, RERUN_WINDOW_STAGE_PROP_NAMES, SCHEDULE_NAMES, WINDOW_STAGE_SETTING_NAMES } from './checkProps.js';
import { requireConditionalDeletes, requireConditionalWrites } from './conditionalWritePolicy.js';
import { StackConfigurationInvalidError } from './errors.js';
import { grantKeyUseVia, KeyService } from './keyGrants.js';
import { acknowledgePrefixWildcards } from './nagAcknowledgements.js';
import { grantPrefixAccess } from './prefixGrants.js';
import { MAX_OUTPUT_VALUE_BYTES, PIPELINE_DESCRIPTION_STACK_OUTPUTS } from './publishedPipeline.js';
import { SqsWorker } from './SqsWorker.js';
import { sqsWorkerViolations } from './sqsWorkerViolations.js';
import { WORKER_SOURCE_NAMES, type WorkerSource } from './workerSource.js';

/** Props of {@link RerunWindowStage}. */
export interface RerunWindowStageProps {
  /** The pipeline that declares the stage (its partitions, output prefix, `fileName`, input stage). */
  readonly pipeline: PipelineDefinition | PipelineDescription;
  /**
   * The window stage this construct deploys: its name in `pipeline`, which is also the name its
   * messages carry (the window task's `name`, or createWindowTaskHandler's `stage`).
   */
  readonly stage: string;
  /** The handler: a module exporting `handler = createWindowTaskHandler({ task, clients })`. */
  readonly handler: WorkerSource;
  /**
   * The bucket the stage writes its outputs (and failure records) to, and reads its input stage's
   * outputs from: a RerunPipeline's `outputBucket`.
   */
  readonly bucket: IBucket;
  /**
   * The prefix the input stage's outputs are under.
   * @default the input stage's `outputPrefix` (a window stage) or its output key rule's `prefix` (an object stage)
   */
  readonly inputPrefix?: string;
  /**
   * Where give-ups are recorded (createWindowTaskHandler's `failurePrefix`).
   * @default DEFAULT_FAILURE_PREFIX ('failures/')
   */
  readonly failurePrefix?: string;
  /**
   * When the schedule sends the just-closed window's message (UTC): `minuteUtc` past the hour for
   * an hourly stage, `hourUtc:minuteUtc` on the day after a daily window, the Monday after a weekly
   * one (ISO weeks), the 1st after a monthly one. `false`: no schedule (backfills and scripts only).
   * A stage that is not partitioned by time has no schedule.
   * @default { hourUtc: 0, minuteUtc: 15 }: late inputs get a quarter of an hour
   */
  readonly schedule?: false | { readonly hourUtc?: number; readonly minuteUtc?: number };
  /**
   * The worker's queue and function settings.
   * @default FIFO, timeout 900 s, 1024 MB, batch 1, concurrency 4, visibility 5,400 s, 5 receives, queue 4 days, DLQ 14 days
   *   (WINDOW_STAGE_DEFAULT_SETTINGS; with a shorter timeout, lower the handler's `limits.maxInputs` alike)
   */
  readonly settings?: Partial<Omit<WorkerTopology, 'fifo'>>;
  /**
   * Environment variables of the function besides OUTPUT_BUCKET, FAILURE_PREFIX and WINDOW_STAGE.
   * @default none
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Actions of every alarm (the work DLQ, the schedule DLQ, errors...).
   * @default none
   */
  readonly alarmActions?: readonly IAlarmAction[];
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /**
   * Add stack outputs the tools find the stage by: `<Stage>WindowQueueUrl` and
   * `<Stage>WindowDeadLetterQueueUrl`, and the pipeline description (`PipelineDescription`) unless
   * another construct of the stack (a RerunPipeline with `outputs: true`) publishes the same one.
   * @default false
   */
  readonly outputs?: boolean;
}

export { WINDOW_STAGE_DEFAULT_SETTINGS } from '../topology/windowStageSettings.js';

export { windowStageOutputKeys } from '../window/windowStageOutputKeys.js';

/**
 * One window stage of a pipeline, deployed beside a RerunPipeline: the user's window task handler
 * (createWindowTaskHandler) behind a FIFO work queue and its DLQ (an SqsWorker with its alarms), a
 * schedule that sends the just-closed window's message at each close of the stage's grain
 * (hourly, daily, weekly, monthly: an EventBridge rule whose undeliverable messages go to a
 * schedule DLQ with an alarm), and least-privilege grants: list and read the input stage's output
 * prefix; read, write and delete (with `If-Match`, which the bucket policy requires) its own
 * output prefix and its failure records; nothing else. The bucket's policy denies blind overwrites
 * and deletes under the stage's prefix. cdk-nag AwsSolutions clean.
 *
 * @example
 * const pipeline = definePipeline({ name: 'uploads', stages: { upper, daily } });
 * const upload = new RerunPipeline(this, 'Pipeline', { worker: { entry: 'upper.ts' }, pipeline, stage: 'upper', outputs: true });
 * new RerunWindowStage(this, 'Daily', { pipeline, stage: 'daily', handler: { entry: 'dailyCounts.handler.ts' },
 *   bucket: upload.outputBucket, outputs: true });
 */
export class RerunWindowStage extends Construct {
  /** The stage as the pipeline declares it. */
  readonly stage: WindowStage;
  readonly stageName: string;
  readonly worker: SqsWorker;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly function: SqsWorker['function'];
  /** The rule that sends the just-closed window's message (absent without a schedule). */
  readonly schedule?: Rule;
  /** Where EventBridge puts a scheduled message it could not deliver (absent without a schedule). */
  readonly scheduleDeadLetterQueue?: Queue;
  readonly inputPrefix: string;
  readonly outputPrefix: string;
  readonly failurePrefix: string;

  constructor(scope: Construct, id: string, props: RerunWindowStageProps) {
    checkProps('RerunWindowStage', props, RERUN_WINDOW_STAGE_PROP_NAMES, {
      handler: WORKER_SOURCE_NAMES,
      schedule: SCHEDULE_NAMES,
      settings: WINDOW_STAGE_SETTING_NAMES,
    });
    const plan = planWindowStage(props);
    super(scope, id);
    this.stage = plan.stage;
    this.stageName = props.stage;
    this.inputPrefix = plan.inputPrefix;
    this.outputPrefix = plan.stage.outputPrefix;
    this.failurePrefix = plan.failurePrefix;

    this.worker = new SqsWorker(this, 'Worker', {
      topology: plan.topology,
      source: props.handler,
      environment: {
        OUTPUT_BUCKET: props.bucket.bucketName,
        FAILURE_PREFIX: plan.failurePrefix,
        WINDOW_STAGE: props.stage,
        ...props.environment,
      },
      ...(props.alarmActions ? { alarmActions: props.alarmActions } : {}),
      ...(props.logRetention ? { logRetention: props.logRetention } : {}),
    });
    this.queue = this.worker.queue;
    this.deadLetterQueue = this.worker.deadLetterQueue;
    this.function = this.worker.function;

    // Exactly what a window task does: list its input windows and read them pinned to their ETags;
    // HEAD, stage, publish (conditional put), mark and clean up (If-Match deletes) its own windows;
    // record give-ups.
    const fn = this.function;
    grantPrefixAccess(fn, props.bucket, [plan.inputPrefix], { read: true });
    grantPrefixAccess(fn, props.bucket, [plan.stage.outputPrefix, plan.failurePrefix], {
      read: true,
      write: true,
      delete: true,
    });
    // A window built from its parts that outlasts an invocation goes on in a new message to its own
    // queue (src/window/continueWindow.ts): its own queue only.
    fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    const queueKey = this.queue.encryptionMasterKey;
    if (queueKey) grantKeyUseVia(fn, queueKey, KeyService.SQS, { write: true });
    requireConditionalWrites(props.bucket, plan.stage.outputPrefix, plan.failurePrefix);
    requireConditionalDeletes(props.bucket, plan.stage.outputPrefix);
    acknowledgePrefixWildcards(this.worker, props.bucket, [
      plan.inputPrefix,
      plan.stage.outputPrefix,
      plan.failurePrefix,
    ]);

    if (plan.cron) {
      const scheduleDlq = this.createScheduleDeadLetterQueue(props);
      this.scheduleDeadLetterQueue = scheduleDlq;
      this.schedule = new Rule(this, 'Schedule', {
        description: `rerun: build the just-closed ${plan.cron.grain} window of the stage ${props.stage}`,
        schedule: Schedule.cron(plan.cron.options),
        targets: [
          new SqsQueue(this.queue, {
            // The rule's own time: the handler resolves the window from it, never from its clock, so a
            // message delivered late or redriven a week later still builds the window it was sent for.
            message: RuleTargetInput.fromObject(scheduledWindowTaskBody(props.stage, EventField.time)),
            // A FIFO target's group is a fixed string (content-based deduplication drops EventBridge's
            // own retries of one event): a scheduled window that keeps failing holds back the next
            // scheduled one until it is dead-lettered. Backfills use one group per window.
            messageGroupId: `schedule-${props.stage}`,
            retryAttempts: 50,
            maxEventAge: Duration.hours(12),
            deadLetterQueue: scheduleDlq,
          }),
        ],
      });
    }
    if (props.outputs) this.addStackOutputs(props, plan.json);
  }

  private createScheduleDeadLetterQueue(props: RerunWindowStageProps): Queue {
    // EventBridge DLQs cannot be FIFO: a standard queue, encrypted, TLS only, retained.
    const queue = new Queue(this, 'ScheduleDeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledgeCheckov(
      queue,
      CheckovCheck.SQS_KMS,
      'Encrypted at rest with SSE-SQS (SqsManagedSseEnabled): EventBridge delivers to it without a key policy.',
    );
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is itself a dead-letter queue: the DeadLetterConfig of the stage's schedule target (EventBridge), " +
        'which cdk-nag does not recognise as it only follows SQS redrive policies.',
    });
    const alarm = new Alarm(this, 'ScheduleDlqAlarm', {
      alarmDescription:
        `rerun window stage ${props.stage}: EventBridge could not deliver a scheduled window message (it is in the ` +
        'schedule DLQ). Fix the cause, then send the missing window (windowTaskMessage).',
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: Stats.MAXIMUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    if (props.alarmActions) alarm.addAlarmAction(...props.alarmActions);
    return queue;
  }

  private addStackOutputs(props: RerunWindowStageProps, json: string): void {
    const stack = Stack.of(this);
    const keys = windowStageOutputKeys(props.stage);
    new CfnOutput(stack, keys.queueUrl, {
      value: this.queue.queueUrl,
      description: `Work queue (FIFO) of the window stage ${props.stage}: send windowTaskMessage bodies here`,
    });
    new CfnOutput(stack, keys.dlqUrl, {
      value: this.deadLetterQueue.queueUrl,
      description: `Dead-letter queue (FIFO) of the window stage ${props.stage}`,
    });
    const published = stack.node.tryFindChild(PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION) as CfnOutput | undefined;
    if (published === undefined) {
      new CfnOutput(stack, PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION, {
        value: json,
        description:
          'The pipeline as data (rerun-pipeline/pipeline): its stages, the window stages with their fileName',
      });
    } else if (published.value !== json) {
      throw new StackConfigurationInvalidError([
        `the stack already publishes another pipeline description (${PIPELINE_DESCRIPTION_STACK_OUTPUTS.DESCRIPTION}): ` +
          `give the window stage ${props.stage} the same pipeline as the RerunPipeline`,
      ]);
    }
  }
}

/** The cron of each grain: fired once per window, just after it closes. */
function cronOf(grain: TimeGrain, hour: string, minute: string) {
  switch (grain) {
    case 'hourly':
      return { minute, hour: '*' };
    case 'daily':
      return { minute, hour };
    case 'weekly':
      // ISO weeks start on Monday.
      return { minute, hour, weekDay: 'MON' };
    case 'monthly':
      return { minute, hour, day: '1' };
  }
}

/** Everything the props decide, checked before the construct joins the tree. */
function planWindowStage(props: RerunWindowStageProps) {
  const v: string[] = [];
  const pipeline = checkPipeline(props.pipeline, { functions: true }) as PipelineDefinition;
  const names = Object.keys(pipeline.stages);
  const stage = Object.hasOwn(pipeline.stages, props.stage) ? pipeline.stages[props.stage] : undefined;
  if (stage === undefined || stage.kind !== 'window') {
    throw new StackConfigurationInvalidError([
      stage === undefined
        ? `stage: the pipeline has no stage named "${props.stage}" (its stages: ${names.join(', ')})`
        : `stage "${props.stage}" is an object stage: a RerunWindowStage deploys a window stage (RerunPipeline runs object stages)`,
    ]);
  }
  if (stage.fileName === undefined) {
    v.push(
      `stage "${props.stage}" declares no fileName: give the window task's output.fileName in the pipeline, ` +
        'so rerun status can judge the stage',
    );
  }
  const upstream = pipeline.stages[stage.input.stage];
  let inputPrefix = props.inputPrefix;
  if (inputPrefix === undefined && upstream !== undefined) {
    inputPrefix = upstream.kind === 'window' ? upstream.outputPrefix : upstream.outputKey.prefix;
  }
  if (inputPrefix === undefined) {
    v.push(
      `the input stage "${stage.input.stage}" has a key rule without a prefix: give inputPrefix (where its outputs are)`,
    );
  }
  const failurePrefix = props.failurePrefix ?? DEFAULT_FAILURE_PREFIX;
  const schedule = props.schedule === false ? undefined : (props.schedule ?? {});
  const hour = schedule?.hourUtc ?? 0;
  const minute = schedule?.minuteUtc ?? 15;
  if (!Number.isInteger(hour) || hour < 0 || hour > 23 || !Number.isInteger(minute) || minute < 0 || minute > 59) {
    v.push(`schedule: hourUtc must be 0-23 and minuteUtc 0-59 (got ${hour}:${minute})`);
  }
  const { partitions } = stage;
  const cron =
    schedule !== undefined && partitions.kind === 'time'
      ? { grain: partitions.grain, options: cronOf(partitions.grain, String(hour), String(minute)) }
      : undefined;
  const json = JSON.stringify(describePipeline(pipeline));
  if (props.outputs && Buffer.byteLength(json, 'utf8') > MAX_OUTPUT_VALUE_BYTES) {
    v.push(
      `the pipeline description is over ${MAX_OUTPUT_VALUE_BYTES} bytes as JSON: shorten names or prefixes, or leave ` +
        'outputs off and give the tools the description with --pipeline FILE',
    );
  }
  const topology: WorkerTopology = {
    name: props.stage,
    ...WINDOW_STAGE_DEFAULT_SETTINGS,
    ...props.settings,
    fifo: true,
  };
  v.push(...sqsWorkerViolations({ topology, source: props.handler }));
  if (v.length > 0) throw new StackConfigurationInvalidError(v);
  return { stage, inputPrefix: inputPrefix as string, failurePrefix, cron, json, topology };
}
