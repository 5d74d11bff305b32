import { RerunError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import type { PartitionScheme, PartitionWindow, TimePartitionScheme } from '../partitions/partitionScheme.js';
import { WindowTaskMessageInvalidError } from './errors.js';

/** The `type` of every window task message. */
export const WINDOW_TASK_MESSAGE_TYPE = 'rerun.window';
/** The format version of the body {@link windowTaskMessage} writes and the handler reads. */
export const WINDOW_TASK_MESSAGE_VERSION = 1;
/**
 * The `window` of a scheduled message: the window of the stage's scheme that closed last before
 * the message's `at` (the schedule's event time), e.g. yesterday for a daily stage fired at 01:15.
 */
export const CLOSED_WINDOW = 'closed';

/**
 * A window task message body (JSON). Either one window by name (a backfill, a redrive, an operator):
 *
 * - `{ "type": "rerun.window", "version": 1, "stage": "daily-counts", "window": "2026-12-05" }`
 *
 * or, from a schedule, the window that closed last before `at` (only for a stage partitioned by time):
 *
 * - `{ "type": "rerun.window", "version": 1, "stage": "daily-counts", "window": "closed", "at": "2026-12-06T00:15:00Z" }`
 */
export interface WindowTaskMessageBody {
  readonly type: typeof WINDOW_TASK_MESSAGE_TYPE;
  readonly version: typeof WINDOW_TASK_MESSAGE_VERSION;
  /** The stage (the window task's `name`) the message is for. */
  readonly stage: string;
  /** A window's name in the stage's scheme, or {@link CLOSED_WINDOW}. */
  readonly window: string;
  /** With `window: "closed"`: the instant (ISO 8601) whose previous window is meant. */
  readonly at?: string;
}

/** A window task message ready to send to the stage's FIFO queue. */
export interface WindowTaskEnvelope {
  readonly body: string;
  /**
   * `{stage}/{window}`: one message group per window, so a window that keeps failing holds back no
   * other window (a FIFO group delivers in order), and two tasks of one window never run at once.
   */
  readonly groupId: string;
  /**
   * `{stage}/{window}` (with `:{token}` when given): SQS FIFO drops a copy sent within 5 minutes.
   * Give a token (a lineage hash, a run id) to send the same window again on purpose within that time.
   */
  readonly deduplicationId: string;
}

/** Options of {@link windowTaskMessage}. */
export interface WindowTaskMessageOptions {
  /** The stage: the window task's `name`. */
  readonly stage: string;
  /** The window: its name (`2026-12-05`) or the window itself. */
  readonly window: string | PartitionWindow;
  /**
   * Makes the deduplication id differ from an earlier send of the same window.
   * @default none: a copy within SQS FIFO's 5-minute deduplication interval is dropped
   */
  readonly token?: string;
}

/** The names of {@link WindowTaskMessageOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const WINDOW_TASK_MESSAGE_OPTION_NAMES = {
  stage: true,
  token: true,
  window: true,
} as const satisfies OptionNames<WindowTaskMessageOptions>;

/**
 * The message that asks a stage's window task handler (createWindowTaskHandler) to bring one
 * window up to date: what `rerun backfill` or a script sends with `SendMessage`.
 *
 * @example
 * const m = windowTaskMessage({ stage: 'daily-counts', window: '2026-12-05' });
 * // { body: '{"type":"rerun.window","version":1,"stage":"daily-counts","window":"2026-12-05"}',
 * //   groupId: 'daily-counts/2026-12-05', deduplicationId: 'daily-counts/2026-12-05' }
 * await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: m.body,
 *   MessageGroupId: m.groupId, MessageDeduplicationId: m.deduplicationId }));
 */
export function windowTaskMessage(options: WindowTaskMessageOptions): WindowTaskEnvelope {
  checkOptions(
    'windowTaskMessage',
    options,
    WINDOW_TASK_MESSAGE_OPTION_NAMES,
    (m) => new WindowTaskMessageInvalidError(m),
  );
  const window = typeof options.window === 'string' ? options.window : options.window.name;
  if (options.stage === '' || window === '' || window === CLOSED_WINDOW) {
    throw new WindowTaskMessageInvalidError(
      `a window task message names a stage and a window by name (got stage ${JSON.stringify(options.stage)}, ` +
        `window ${JSON.stringify(window)})`,
    );
  }
  const body: WindowTaskMessageBody = {
    type: WINDOW_TASK_MESSAGE_TYPE,
    version: WINDOW_TASK_MESSAGE_VERSION,
    stage: options.stage,
    window,
  };
  const id = `${options.stage}/${window}`;
  return {
    body: JSON.stringify(body),
    groupId: id,
    deduplicationId: options.token === undefined ? id : `${id}:${options.token}`,
  };
}

/**
 * The body a schedule sends (an EventBridge rule's input, with `at` set to the event's time by the
 * rule's input transformer): the window that closed last before the rule fired.
 *
 * @example
 * scheduledWindowTaskBody('daily-counts', '<aws.events.event.time>');
 */
export function scheduledWindowTaskBody(stage: string, at: string): WindowTaskMessageBody {
  return { type: WINDOW_TASK_MESSAGE_TYPE, version: WINDOW_TASK_MESSAGE_VERSION, stage, window: CLOSED_WINDOW, at };
}

/** What a message asks for, once read against the stage's name and scheme. */
export type ParsedWindowTaskMessage =
  | { readonly kind: 'task'; readonly window: PartitionWindow; readonly origin: string }
  | { readonly kind: 'invalid'; readonly reason: string };

/** What {@link parseWindowTaskMessage} reads a message against. */
export interface WindowTaskMessageExpectation {
  /** The stage whose queue the message came from. */
  readonly stage: string;
  /** The stage's partition scheme: the windows it has. */
  readonly scheme: PartitionScheme;
  /** The message's SQS `SentTimestamp` (epoch ms): the time of a `closed` window without `at`. @default none */
  readonly sentTimestampMs?: number;
}

/** The names of {@link WindowTaskMessageExpectation}, checked by checkOptions (tsc fails when this list and the type differ). */
export const WINDOW_TASK_MESSAGE_EXPECTATION_NAMES = {
  scheme: true,
  sentTimestampMs: true,
  stage: true,
} as const satisfies OptionNames<WindowTaskMessageExpectation>;

/**
 * Reads a window task message for the stage `stage` with the scheme `scheme`. Never throws for a
 * message (an `expected` naming an unknown field is the caller's mistake, refused by name): a body
 * that is not a window task message, of another version, for another stage, or naming a window the
 * scheme does not have is `invalid` with the reason (the handler fails it, not retryable). A
 * `closed` window is resolved from the message's `at`, or without one from its SQS `SentTimestamp`:
 * from when the schedule fired, never from the worker's clock, so a message redriven a week later
 * still names its window.
 *
 * @example
 * parseWindowTaskMessage(body, { stage: 'daily-counts', scheme: task.scheme });
 */
export function parseWindowTaskMessage(body: string, expected: WindowTaskMessageExpectation): ParsedWindowTaskMessage {
  checkOptions(
    'parseWindowTaskMessage',
    expected,
    WINDOW_TASK_MESSAGE_EXPECTATION_NAMES,
    (m) => new WindowTaskMessageInvalidError(m),
  );
  let message: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    message = parsed as Record<string, unknown>;
  } catch {
    return { kind: 'invalid', reason: 'not a window task message: the body is not a JSON object' };
  }
  if (message.type !== WINDOW_TASK_MESSAGE_TYPE) {
    return {
      kind: 'invalid',
      reason: `not a window task message: type is ${JSON.stringify(message.type)}, not "${WINDOW_TASK_MESSAGE_TYPE}"`,
    };
  }
  if (message.version !== WINDOW_TASK_MESSAGE_VERSION) {
    return {
      kind: 'invalid',
      reason:
        `window task message version ${JSON.stringify(message.version)} is not one this handler reads ` +
        `(${WINDOW_TASK_MESSAGE_VERSION}): deploy the rerun version that sent it`,
    };
  }
  if (message.stage !== expected.stage) {
    return {
      kind: 'invalid',
      reason:
        `the message is for the stage ${JSON.stringify(message.stage)}, not "${expected.stage}": ` +
        "it was sent to another stage's queue",
    };
  }
  if (typeof message.window !== 'string') {
    return { kind: 'invalid', reason: 'a window task message names its "window" (a name, or "closed")' };
  }
  const { scheme } = expected;
  if (message.window === CLOSED_WINDOW) {
    if (scheme.spec.kind !== 'time') {
      return {
        kind: 'invalid',
        reason: `window "closed" needs a stage partitioned by time; "${expected.stage}" is ${scheme.spec.kind}`,
      };
    }
    const time = scheme as TimePartitionScheme;
    let at: number;
    let origin: string;
    if (typeof message.at === 'string') {
      at = Date.parse(message.at);
      if (!Number.isFinite(at)) return { kind: 'invalid', reason: `"at" ${JSON.stringify(message.at)} is not a time` };
      origin = `closed before ${message.at}`;
    } else if (expected.sentTimestampMs !== undefined && Number.isFinite(expected.sentTimestampMs)) {
      at = expected.sentTimestampMs;
      origin = `closed before ${new Date(at).toISOString()} (sent)`;
    } else {
      return { kind: 'invalid', reason: 'window "closed" needs "at" or the message SentTimestamp' };
    }
    return { kind: 'task', window: time.next(time.windowAt(at), -1), origin };
  }
  try {
    return { kind: 'task', window: scheme.parseWindow(message.window), origin: 'window' };
  } catch (error) {
    if (!RerunError.isRerunError(error)) throw error;
    return {
      kind: 'invalid',
      reason: `the window ${JSON.stringify(message.window)} is not one of the stage "${expected.stage}": ${error.message}`,
    };
  }
}
