import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type Logger, silentLogger } from '../../src/logging/logger.js';
import { SUMMARIZE_TASK_TYPE, scheduleMessageGroupAt } from './summaryTask.js';

/** A daily time in UTC. */
export interface DailyTime {
  readonly hourUtc: number;
  readonly minuteUtc: number;
}

/**
 * The first occurrence of a daily UTC time strictly after `nowMs` (epoch ms). Pure.
 *
 * @example
 * new Date(nextDailyOccurrence(Date.parse('2026-01-05T02:00:00Z'), { hourUtc: 1, minuteUtc: 15 })).toISOString();
 * // '2026-01-06T01:15:00.000Z'
 */
export function nextDailyOccurrence(nowMs: number, time: DailyTime): number {
  const now = new Date(nowMs);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), time.hourUtc, time.minuteUtc);
  return today > nowMs ? today : today + 86_400_000;
}

/**
 * The message the daily schedule sends, as the stack's EventBridge rule builds it: the event time
 * in `at`, from which the worker resolves "yesterday".
 *
 * @example
 * scheduledSummaryMessage(Date.parse('2026-01-06T01:15:00Z')); // '{"type":"summarize","window":"yesterday","at":"2026-01-06T01:15:00.000Z"}'
 */
export function scheduledSummaryMessage(firedAtMs: number): string {
  return JSON.stringify({ type: SUMMARIZE_TASK_TYPE, window: 'yesterday', at: new Date(firedAtMs).toISOString() });
}

/** Options of {@link startLocalSchedule}. */
export interface LocalScheduleOptions {
  readonly sqs: Pick<SQSClient, 'send'>;
  /** The summarize queue. */
  readonly queueUrl: string;
  readonly time: DailyTime;
  /** @default Date.now */
  readonly now?: () => number;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Called after each message is sent. */
  readonly onFire?: (firedAtMs: number) => void;
}

/**
 * The local stand-in for the stack's daily EventBridge rule while `rerun dev` runs: at the
 * topology's time each day it sends the same message to the summarize queue. Returns the stop function.
 *
 * @example
 * const stop = startLocalSchedule({ sqs, queueUrl, time: topology.summarySchedule });
 */
export function startLocalSchedule(options: LocalScheduleOptions): () => void {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = () => {
    if (stopped) return;
    const at = nextDailyOccurrence(now(), options.time);
    timer = setTimeout(() => void fire(at), Math.max(0, at - now()));
    timer.unref();
  };
  const fire = async (at: number) => {
    try {
      await options.sqs.send(
        new SendMessageCommand({
          QueueUrl: options.queueUrl,
          MessageBody: scheduledSummaryMessage(at),
          ...(options.queueUrl.endsWith('.fifo')
            ? { MessageGroupId: scheduleMessageGroupAt(at), MessageDeduplicationId: `schedule-${at}` }
            : {}),
        }),
      );
      options.onFire?.(at);
    } catch (error) {
      logger.warn('the local daily schedule could not send its message', { error });
    }
    arm();
  };
  arm();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
