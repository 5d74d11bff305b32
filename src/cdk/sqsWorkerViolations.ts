import type { WorkerTopology } from '../topology/WorkerTopology.js';
import { workerTopologyViolations } from '../topology/workerTopologyRules.js';
import type { SqsWorkerProps } from './SqsWorkerProps.js';
import { sourceViolations } from './workerSource.js';

/** The topology with `functionProps`' memory and timeout and `queueProps`' visibility timeout applied. */
export function effectiveTopology(props: SqsWorkerProps): WorkerTopology {
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
