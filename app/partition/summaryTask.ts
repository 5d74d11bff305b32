import { type Day, dayOfInstant, dayOfPartition, partitionName, previousDay } from '../../src/keys/partition.js';

/** The `type` of every summary-stage message. */
export const SUMMARIZE_TASK_TYPE = 'summarize';

/** The prefix of the scheduled messages' groups (FIFO queues require one). */
export const SCHEDULE_MESSAGE_GROUP = 'schedule';

/** The days of the week as EventBridge's cron names them, Sunday first (as `Date#getUTCDay`). */
export const SCHEDULE_WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
export type ScheduleWeekday = (typeof SCHEDULE_WEEKDAYS)[number];

/**
 * The message group of the schedule's message fired on `weekday` (UTC): one group per day.
 * Within a FIFO group a message that fails blocks the ones behind it until it succeeds or is
 * dead-lettered, so one group for every day would let a failing day hold back the next ones. An
 * EventBridge target's MessageGroupId is a fixed string, so the stack has one rule per weekday,
 * each with its group: two messages share a group only a week apart, longer than the summarize
 * queue keeps a message (topology.summarize.queueRetentionDays, 4 days).
 *
 * @example
 * scheduleMessageGroup('MON'); // 'schedule-MON'
 */
export function scheduleMessageGroup(weekday: ScheduleWeekday): string {
  return `${SCHEDULE_MESSAGE_GROUP}-${weekday}`;
}

/**
 * The group of a scheduled message fired at `firedAtMs` (epoch ms), as the stack's rule of that weekday sets it.
 *
 * @example
 * scheduleMessageGroupAt(Date.parse('2026-01-05T01:15:00Z')); // 'schedule-MON'
 */
export function scheduleMessageGroupAt(firedAtMs: number): string {
  return scheduleMessageGroup(SCHEDULE_WEEKDAYS[new Date(firedAtMs).getUTCDay()] as ScheduleWeekday);
}

/**
 * A summary-stage message body. Either one partition (backfills), or a relative window resolved
 * from the time of the event that produced the message (the daily schedule):
 *
 * - `{ "type": "summarize", "partition": "dt=2026-01-05", "lineageHash": "3f9c..." }`
 * - `{ "type": "summarize", "window": "yesterday", "at": "2026-01-06T01:15:00Z" }`
 */
export type SummaryTaskMessage =
  | { readonly type: typeof SUMMARIZE_TASK_TYPE; readonly partition: string; readonly lineageHash?: string }
  | { readonly type: typeof SUMMARIZE_TASK_TYPE; readonly window: 'yesterday'; readonly at?: string };

/** What a message asks for, once parsed. */
export type ParsedSummaryTask =
  | {
      readonly kind: 'task';
      readonly day: Day;
      /** The lineage hash the sender planned with (informational: the worker recomputes it). */
      readonly plannedLineageHash?: string;
      /** How the day was chosen, for the record's reason. */
      readonly origin: string;
    }
  | { readonly kind: 'invalid'; readonly reason: string };

/**
 * Parses a summary-stage message body. `yesterday` is resolved from the message's `at` (the
 * schedule's event time, inserted by the EventBridge input transformer) or, without one, from its
 * SQS `SentTimestamp`: always from when the event happened, never from the worker's clock, so a
 * message that waits in the queue past midnight or is redriven a week later still names its day.
 *
 * @example
 * parseSummaryTask('{"type":"summarize","window":"yesterday","at":"2026-01-06T01:15:00Z"}');
 * // { kind: 'task', day: '2026-01-05', origin: 'yesterday of 2026-01-06T01:15:00Z' }
 */
export function parseSummaryTask(body: string, sentTimestampMs?: number): ParsedSummaryTask {
  let message: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    message = parsed as Record<string, unknown>;
  } catch {
    return { kind: 'invalid', reason: 'not a summary task: the body is not a JSON object' };
  }
  if (message.type !== SUMMARIZE_TASK_TYPE) {
    return { kind: 'invalid', reason: `not a summary task: type is ${JSON.stringify(message.type)}` };
  }
  if (typeof message.partition === 'string') {
    const day = dayOfPartition(message.partition);
    if (!day) return { kind: 'invalid', reason: `partition ${JSON.stringify(message.partition)} is not dt=YYYY-MM-DD` };
    return {
      kind: 'task',
      day,
      origin: 'partition',
      ...(typeof message.lineageHash === 'string' ? { plannedLineageHash: message.lineageHash } : {}),
    };
  }
  if (message.window === 'yesterday') {
    if (typeof message.at === 'string') {
      const ms = Date.parse(message.at);
      if (!Number.isFinite(ms)) return { kind: 'invalid', reason: `"at" ${JSON.stringify(message.at)} is not a time` };
      return { kind: 'task', day: previousDay(dayOfInstant(ms)), origin: `yesterday of ${message.at}` };
    }
    if (sentTimestampMs !== undefined && Number.isFinite(sentTimestampMs)) {
      return {
        kind: 'task',
        day: previousDay(dayOfInstant(sentTimestampMs)),
        origin: `yesterday of ${new Date(sentTimestampMs).toISOString()} (sent)`,
      };
    }
    return { kind: 'invalid', reason: 'window "yesterday" needs "at" or the message SentTimestamp' };
  }
  return { kind: 'invalid', reason: 'a summary task names a "partition" or the window "yesterday"' };
}

/** A backfill message with its deterministic identity. */
export interface SummaryTaskEnvelope {
  readonly body: string;
  /** One message group per partition: SQS FIFO never runs two tasks of one day at once. */
  readonly groupId: string;
  /**
   * `dt=D:<lineageHash>`: the same task (same day, same inputs, same code) sent again within 5
   * minutes is dropped by SQS FIFO; a changed input gives a new identity (a new task is needed).
   * Planned with the day's input coverage, `dt=D:<lineageHash 32>:<coverage digest 32>` (the first
   * 32 hex digits of each; SQS allows 128 characters): a day whose inputs changed but not its
   * outputs (an input arrived or was dead-lettered) is a new task too.
   */
  readonly deduplicationId: string;
}

/**
 * The message for one partition planned with `lineageHash`.
 *
 * @example
 * summaryTaskEnvelope('2026-01-05', '3f9c...');
 * // { body: '{"lineageHash":"3f9c...","partition":"dt=2026-01-05","type":"summarize"}', groupId: 'dt=2026-01-05', deduplicationId: 'dt=2026-01-05:3f9c...' }
 */
export function summaryTaskEnvelope(day: Day, lineageHash: string, coverageDigest?: string): SummaryTaskEnvelope {
  const partition = partitionName(day);
  return {
    body: JSON.stringify({ lineageHash, partition, type: SUMMARIZE_TASK_TYPE }),
    groupId: partition,
    deduplicationId:
      coverageDigest === undefined
        ? `${partition}:${lineageHash}`
        : `${partition}:${lineageHash.slice(0, 32)}:${coverageDigest.slice(0, 32)}`,
  };
}
