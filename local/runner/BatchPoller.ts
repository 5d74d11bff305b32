import { setTimeout as sleep } from 'node:timers/promises';
import { type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '../../src/logging/logger.js';

/** Options of {@link BatchPoller}: the receiving half of an event source mapping's settings. */
export interface BatchPollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** Records per batch (`BatchSize`). */
  readonly batchSize: number;
  /** How long to gather records once the first arrived (`MaximumBatchingWindowInSeconds`). */
  readonly maxBatchingWindowSeconds: number;
  /** Long-poll wait of each `ReceiveMessage` (0-20 s); 0 short-polls. */
  readonly pollWaitSeconds: number;
  /** The clock of the batching window (epoch ms). */
  readonly now: () => number;
  readonly logger: Logger;
  /** Called as soon as ReceiveMessage returns messages (their receive counts have gone up). */
  readonly onReceive?: ((messageIds: readonly string[]) => void) | undefined;
}

/** What {@link BatchPoller.gatherBatch} asks of the runner while it gathers. */
export interface GatherHooks {
  /** True once the runner stops: gathering ends with what it holds. */
  readonly stopping: () => boolean;
  /** Called once, when the batch holds its first message (from then on it takes a slot). */
  readonly onHeld: () => void;
}

/**
 * The poller's receiving side: gathers batches from the queue as Lambda's event source mapping does,
 * over several `ReceiveMessage` calls (10 messages each at most) within the batching window.
 *
 * @example
 * const poller = new BatchPoller({ sqs, queueUrl, batchSize: 10, maxBatchingWindowSeconds: 1, pollWaitSeconds: 1, now: Date.now, logger });
 * const batch = await poller.gatherBatch({ stopping: () => false, onHeld: () => {} });
 */
export class BatchPoller {
  constructor(private readonly options: BatchPollerOptions) {}

  /**
   * Gathers one batch. Without a batching window this is a single receive (Lambda invokes with what
   * one poll returned). With a window, receives (<= 10 each, the SQS maximum) until the batch is full
   * or the window, started by the first record, has passed.
   */
  async gatherBatch(hooks: GatherHooks): Promise<Message[]> {
    const { batchSize, maxBatchingWindowSeconds, pollWaitSeconds, now } = this.options;
    const byId = new Map<string, Message>();
    let windowEnd: number | undefined;
    try {
      while (byId.size < batchSize) {
        let waitSeconds = pollWaitSeconds;
        if (windowEnd !== undefined) {
          const left = windowEnd - now();
          if (left <= 0) break;
          // WaitTimeSeconds is whole seconds: short-poll when less than one is left, to not overshoot.
          waitSeconds = Math.min(pollWaitSeconds, Math.floor(left / 1000));
        }
        const received = await this.receive(Math.min(10, batchSize - byId.size), waitSeconds);
        const before = byId.size;
        // A message whose visibility expired during a long window can be received twice: keep the
        // newest receipt handle (the only one that can still delete it).
        for (const message of received) if (message.MessageId) byId.set(message.MessageId, message);
        if (before === 0 && byId.size > 0) hooks.onHeld();
        if (byId.size === 0) {
          if (hooks.stopping()) break;
          // A short poll (pollWaitSeconds 0) returns at once: pause so an idle queue is not hammered.
          if (waitSeconds === 0) await sleep(100);
          continue;
        }
        if (maxBatchingWindowSeconds === 0 || hooks.stopping()) break;
        windowEnd ??= now() + maxBatchingWindowSeconds * 1000;
        if (received.length === 0 && waitSeconds === 0) await sleep(Math.min(100, Math.max(0, windowEnd - now())));
      }
    } catch (error) {
      // Messages already received stay invisible until their visibility timeout: invoke them anyway.
      if (byId.size === 0) throw error;
      this.options.logger.warn('ReceiveMessage failed while gathering a batch; invoking what was received', { error });
    }
    return [...byId.values()];
  }

  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const response = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        // Lambda hands the function every system and message attribute.
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const messages = response.Messages ?? [];
    if (messages.length > 0) {
      try {
        this.options.onReceive?.(messages.map((m) => m.MessageId as string));
      } catch (listenerError) {
        this.options.logger.warn('onReceive listener threw', { error: listenerError });
      }
    }
    return messages;
  }
}
