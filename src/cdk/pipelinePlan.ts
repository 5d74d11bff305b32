import { EventType } from 'aws-cdk-lib/aws-s3';
import { DEFAULT_FAILURE_PREFIX } from '../failures/failureRecord.js';
import { InputFormat } from '../normalize/inputFormat.js';
import { maxInputBytesFor, planningMibPerCpuSecond, sizeWorker } from '../sizing/sizeWorker.js';
import type { WorkerTopology } from '../topology/WorkerTopology.js';
import { DEFAULT_CODE_VERSION_PREFIX } from '../worker/codeVersionPrefix.js';
import { StackConfigurationInvalidError } from './errors.js';
import { type PipelineProps, type PlannedStage, planStage } from './publishedPipeline.js';
import type { RerunPipelineProps } from './RerunPipelineProps.js';
import { sqsWorkerViolations } from './sqsWorkerViolations.js';

/** The input prefix unless `inputPrefix` says otherwise (the reference normalizer's). */
export const PIPELINE_DEFAULT_PREFIXES = { inputPrefix: 'incoming/' } as const;

/** The worker settings besides memory, timeout and visibility (which come from the sizing). */
const DEFAULT_SETTINGS = {
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  maxConcurrency: 4,
  maxReceiveCount: 5,
  dlqRetentionDays: 14,
  queueRetentionDays: 4,
} as const;

/** What {@link planPipeline} decides. */
export type PipelinePlan = ReturnType<typeof planPipeline>;

/** Everything the props decide, checked before the construct joins the tree (nothing left behind on error). */
export function planPipeline(props: RerunPipelineProps, stackName: string) {
  const v: string[] = [];
  const exclusive = [
    ['existingInputBucketObj', 'inputBucketProps'],
    ['existingOutputBucketObj', 'outputBucketProps'],
    ['existingLedgerTableObj', 'ledgerTableProps'],
    ['existingAlarmTopicObj', 'alarmTopicProps'],
  ] as const;
  for (const [existing, created] of exclusive) {
    if (props[existing] !== undefined && props[created] !== undefined) {
      v.push(
        `${existing} and ${created} contradict each other: pass an existing resource or props to create one, not both`,
      );
    }
  }
  const ledger = planLedger(props, v);
  const webhook = props.webhook as { secret?: unknown; parameterName?: unknown } | undefined;
  if (webhook && (webhook.secret !== undefined) === (webhook.parameterName !== undefined)) {
    v.push('webhook: give either secret or parameterName');
  }
  if (props.environment && 'NOTIFY_URL' in props.environment) {
    v.push(
      'environment.NOTIFY_URL: the webhook URL comes from Secrets Manager or SSM (props.webhook), never a plain value',
    );
  }
  if (props.environment && 'CODE_VERSION_PREFIX' in props.environment) {
    v.push(
      `environment.CODE_VERSION_PREFIX: RerunPipeline sets it to ${DEFAULT_CODE_VERSION_PREFIX}, the prefix rerun status and ` +
        'rerun reprocess list and the only one the worker may write its code-version markers under',
    );
  }
  const declaredStage = (props.worker as { stage?: PipelineProps['declaredStage'] } | undefined)?.stage;
  const stage = planStage({ ...props, ...(declaredStage ? { declaredStage } : {}) }, stackName, v);
  const { inputPrefix, outputPrefixes, failurePrefix } = planPrefixes(props, stage, v);
  const { fp, s, memoryMiB, timeoutSeconds, finishes } = planSizing(props, v);
  if (v.length > 0) throw new StackConfigurationInvalidError(v);

  const timeout = timeoutSeconds as number;
  const topology: WorkerTopology = {
    name: props.workerName ?? 'worker',
    ...DEFAULT_SETTINGS,
    visibilityTimeoutSeconds: 6 * timeout,
    ...s,
    memoryMiB: memoryMiB as number,
    functionTimeoutSeconds: timeout,
  };
  // memorySize and timeout are in the topology now (the queue is checked against them).
  const { memorySize: _m, timeout: _t, ...functionProps } = fp;
  const worker = sqsWorkerViolations({
    topology,
    source: props.worker,
    ...(props.functionProps ? { functionProps } : {}),
    ...(props.queueProps ? { queueProps: props.queueProps } : {}),
    ...(props.deadLetterQueueProps ? { deadLetterQueueProps: props.deadLetterQueueProps } : {}),
    ...(props.tracing !== undefined ? { tracing: props.tracing } : {}),
    ...(props.reservedConcurrentExecutions !== undefined
      ? { reservedConcurrentExecutions: props.reservedConcurrentExecutions }
      : {}),
    ...(props.reserveConcurrency !== undefined ? { reserveConcurrency: props.reserveConcurrency } : {}),
  });
  if (worker.length > 0) throw new StackConfigurationInvalidError(worker);
  return {
    inputPrefix,
    outputPrefixes,
    failurePrefix,
    ledger,
    stage,
    inputEvents: props.inputEvents ?? [EventType.OBJECT_CREATED, EventType.OBJECT_REMOVED],
    // The advertised limit: the declared one when given (the function finishes at least that much).
    maxInputBytes: props.maxInputBytes ?? finishes,
    topology,
    functionProps: props.functionProps ? functionProps : undefined,
  };
}

/**
 * Whether the worker gets the dedupe ledger: `ledger` when given, else implied by the props that
 * only a ledger user needs (a webhook, a table, table settings). A contradiction is pushed onto `v`.
 */
function planLedger(props: RerunPipelineProps, v: string[]): boolean {
  const implying = (['webhook', 'existingLedgerTableObj', 'ledgerTableProps'] as const).filter(
    (name) => props[name] !== undefined,
  );
  if (props.ledger === false) {
    for (const name of implying) {
      v.push(
        name === 'webhook'
          ? 'ledger: false contradicts webhook: the worker notifies the webhook once per output through the dedupe ledger'
          : `ledger: false contradicts ${name}: drop ${name}, or the ledger: false`,
      );
    }
    return false;
  }
  return props.ledger === true || implying.length > 0;
}

/** The prefixes (input, outputs, failures), with what is wrong with them pushed onto `v`. */
function planPrefixes(props: RerunPipelineProps, stage: PlannedStage | undefined, v: string[]) {
  const inputPrefix = props.inputPrefix ?? stage?.inputPrefix ?? PIPELINE_DEFAULT_PREFIXES.inputPrefix;
  const declared = (props.worker as { outputPrefixes?: readonly string[] } | undefined)?.outputPrefixes;
  // Without a list, the stage's own key rules say where the worker writes.
  const fromStage = stage && stage.prefixes.length > 0 ? stage.prefixes : undefined;
  const outputPrefixes = props.outputPrefixes ?? declared ?? fromStage ?? [];
  // The role may write only under outputPrefixes: a key rule elsewhere would meet AccessDenied.
  for (const prefix of stage?.prefixes ?? []) {
    if (outputPrefixes.length > 0 && !outputPrefixes.some((p) => prefix.startsWith(p))) {
      v.push(
        `stage "${stage?.stageName}" writes under ${prefix}, outside outputPrefixes (${outputPrefixes.join(', ')}): ` +
          'add it to outputPrefixes, or fix the key rule',
      );
    }
  }
  const failurePrefix = props.failurePrefix ?? DEFAULT_FAILURE_PREFIX;
  if (props.outputPrefixes === undefined && declared === undefined && fromStage === undefined) {
    v.push(
      'outputPrefixes: name the prefixes your worker writes its outputs under, as its defineWorker({ outputPrefixes }) ' +
        "declares them (e.g. outputPrefixes: ['upper/']): the worker's role may write there and nowhere else. " +
        "rerun's own normalizer, referenceWorker('normalize'), declares its own.",
    );
  } else if (outputPrefixes.length === 0) v.push('outputPrefixes must name at least one prefix');
  const sameBucket =
    props.existingInputBucketObj !== undefined && props.existingInputBucketObj === props.existingOutputBucketObj;
  if (sameBucket) {
    const overlapping = [...outputPrefixes, failurePrefix].filter(
      (p) => p.startsWith(inputPrefix) || inputPrefix.startsWith(p),
    );
    if (overlapping.length > 0) {
      v.push(
        `input and output are one bucket and ${overlapping.join(', ')} overlaps the input prefix ${inputPrefix}: ` +
          'every output would trigger the worker again',
      );
    }
  }
  return { inputPrefix, outputPrefixes, failurePrefix };
}

/**
 * The worker's memory and timeout (given, or sized for `maxInputBytes`) and the largest input they
 * finish, with what is wrong with them pushed onto `v`.
 */
function planSizing(props: RerunPipelineProps, v: string[]) {
  const fp = props.functionProps ?? {};
  const s = props.workerSettings ?? {};
  const mibPerCpuSecond = sizingMibPerCpuSecond(props, v);
  const fixedMemory = fp.memorySize ?? s.memoryMiB;
  const fixedTimeout = fp.timeout?.toSeconds() ?? s.functionTimeoutSeconds;
  let memoryMiB = fixedMemory;
  let timeoutSeconds = fixedTimeout;
  if (memoryMiB === undefined || timeoutSeconds === undefined) {
    try {
      const sized = sizeWorker({
        maxInputBytes: props.maxInputBytes ?? 1024 ** 3,
        mibPerCpuSecond,
        minMemoryMiB: fixedMemory ?? props.minMemoryMiB ?? 512,
      });
      memoryMiB ??= sized.memoryMiB;
      timeoutSeconds ??= sized.timeoutSeconds;
    } catch (error) {
      v.push(`maxInputBytes: ${(error as Error).message}`);
    }
  }
  // The limit the worker enforces: what this memory and timeout finish with the margin.
  const finishes =
    memoryMiB !== undefined && timeoutSeconds !== undefined
      ? maxInputBytesFor({ memoryMiB, timeoutSeconds, mibPerCpuSecond })
      : 0;
  if (props.maxInputBytes !== undefined && finishes > 0 && finishes < props.maxInputBytes) {
    v.push(
      `maxInputBytes ${props.maxInputBytes} cannot finish at ${memoryMiB} MB and ${timeoutSeconds} s ` +
        `(at most ${finishes} bytes at ${mibPerCpuSecond} MiB/s with the margin): raise the memory or timeout, ` +
        'or leave them to the sizing',
    );
  }
  if (finishes <= 0 && v.length === 0) {
    v.push(`a ${timeoutSeconds} s timeout leaves no time to transform anything (10 s go to the overhead)`);
  }
  return { fp, s, memoryMiB, timeoutSeconds, finishes };
}

/**
 * The throughput the sizing plans with: `mibPerCpuSecond` when given, else the slowest figure of the
 * declared `inputFormats`, else the slowest of all formats. Contradictory or unknown declarations
 * are added to `violations`.
 */
function sizingMibPerCpuSecond(
  props: Pick<RerunPipelineProps, 'mibPerCpuSecond' | 'inputFormats'>,
  violations: string[],
): number {
  const formats = props.inputFormats;
  const known = Object.values(InputFormat) as string[];
  if (formats !== undefined && (formats.length === 0 || formats.some((f) => !known.includes(f)))) {
    violations.push(`inputFormats must name at least one of ${known.join(', ')} (got ${JSON.stringify(formats)})`);
  }
  if (formats !== undefined && props.mibPerCpuSecond !== undefined) {
    violations.push(
      "give mibPerCpuSecond or inputFormats, not both: inputFormats picks the reference normalizer's figure",
    );
  }
  return props.mibPerCpuSecond ?? planningMibPerCpuSecond(formats?.filter((f) => known.includes(f)));
}
