import { setTimeout as sleep } from 'node:timers/promises';
import {
  CancelMessageMoveTaskCommand,
  ListMessageMoveTasksCommand,
  type ListMessageMoveTasksResultEntry,
  type Message,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { describeError } from './describeError.js';
import { isMoveTaskUnsupported } from './moveTaskSupport.js';
import { RedriveError } from './RedriveError.js';
import { releaseMessages } from './releaseMessages.js';

/** What a move task takes of a redrive's options (see RedriveOptions in redriveDeadLetters.ts). */
export interface MoveTaskOptions {
  readonly dlqUrl: string;
  readonly ratePerSecond?: number;
  readonly pollIntervalMs?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (moved: number, total: number) => void;
}

/** Runs (or follows) a move task; undefined when the endpoint cannot, so the fallback runs. */
export async function tryMoveTask(
  sqs: Pick<SQSClient, 'send'>,
  dlqArn: string,
  held: readonly Message[],
  options: MoveTaskOptions,
  notes: string[],
): Promise<{ moved: number; failed: { messageId: string; error: string }[] } | undefined> {
  let running: ListMessageMoveTasksResultEntry | undefined;
  try {
    const tasks = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 10 }));
    running = tasks.Results?.find((t) => t.Status === 'RUNNING');
  } catch (error) {
    if (!isMoveTaskUnsupported(error)) throw error;
    notes.push(`message move tasks unavailable here (${describeError(error)}): moving messages one by one`);
    return undefined;
  }
  // The task moves the messages itself: let go of the ones held for inspection first.
  await releaseMessages(sqs, options.dlqUrl, held);
  let handle = running?.TaskHandle;
  if (running) {
    notes.push('a message move task was already running on this DLQ (one per queue): following it');
  } else {
    try {
      const started = await sqs.send(
        new StartMessageMoveTaskCommand({
          SourceArn: dlqArn,
          // No DestinationArn: SQS returns each message to the queue it was dead-lettered from.
          ...(options.ratePerSecond ? { MaxNumberOfMessagesPerSecond: options.ratePerSecond } : {}),
        }),
      );
      handle = started.TaskHandle;
    } catch (error) {
      if (!isMoveTaskUnsupported(error)) throw error;
      // The held messages were released above; their receipt handles stay valid until someone
      // receives them again (nothing else reads a DLQ), so the fallback can still delete them.
      notes.push(`StartMessageMoveTask unavailable here (${describeError(error)}): moving messages one by one`);
      return undefined;
    }
  }
  const interval = options.pollIntervalMs ?? 1000;
  for (;;) {
    const tasks = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 10 }));
    const task =
      tasks.Results?.find((t) => (handle ? t.TaskHandle === handle : t.Status === 'RUNNING')) ?? tasks.Results?.[0];
    const moved = task?.ApproximateNumberOfMessagesMoved ?? 0;
    options.onProgress?.(moved, task?.ApproximateNumberOfMessagesToMove ?? moved);
    if (task?.Status !== 'RUNNING') {
      if (task?.Status === 'FAILED') {
        throw new RedriveError(
          `The message move task failed after ${moved} message(s): ${task.FailureReason ?? 'no reason given'}`,
        );
      }
      if (task?.Status === 'CANCELLED') notes.push(`the move task was cancelled after ${moved} message(s)`);
      return { moved, failed: [] };
    }
    if (options.signal?.aborted && handle) {
      await sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle: handle }));
      notes.push('interrupted: the move task was cancelled; messages already moved stay moved');
      handle = undefined;
    }
    await sleep(interval);
  }
}
