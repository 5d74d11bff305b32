import type { Footprint } from './S3Model.js';
import { SimServiceError } from './serviceError.js';

/**
 * In-memory standard SQS queues with the semantics the pipeline depends on (SQS Developer Guide):
 * at-least-once delivery, a visibility timeout per receive (the queue's, or the request's), a
 * receive count per message, a new receipt handle per receive (a delete or a visibility change with
 * an older handle changes nothing: "you must provide the most recently received receipt handle"),
 * ChangeMessageVisibility on an in-flight message, and a redrive policy that moves a message to its
 * dead-letter queue once its receive count has reached `maxReceiveCount` (it is received that many
 * times, then moved on the next receive), and a DLQ redrive (StartMessageMoveTask: each message
 * of the dead-letter queue sent to the destination as a new message, with a new id and a receive
 * count of 0, its body unchanged, so an S3 event in it is as old as it was; one request moves them
 * all here, where AWS moves them at a rate). Time is the caller's clock, in milliseconds.
 */
export class SqsModel {
  private readonly queues = new Map<string, Queue>();
  private readonly byName = new Map<string, Queue>();

  createQueue(
    name: string,
    attributes: { visibilityTimeoutSeconds?: number; deadLetter?: { url: string; maxReceiveCount: number } } = {},
  ): string {
    const url = `https://sqs.us-east-1.amazonaws.com/000000000000/${name}`;
    const queue: Queue = {
      url,
      name,
      visibilityTimeoutMs: (attributes.visibilityTimeoutSeconds ?? 30) * 1000,
      ...(attributes.deadLetter ? { deadLetter: attributes.deadLetter } : {}),
      messages: [],
      counter: 0,
    };
    this.queues.set(url, queue);
    this.byName.set(name, queue);
    return url;
  }

  /** The queue's ARN, as an event source mapping names it (`eventSourceARN` of its records). */
  arnOf(url: string): string {
    return `arn:aws:sqs:us-east-1:000000000000:${this.queue(url).name}`;
  }

  /** The URL of the queue an ARN names. */
  urlOf(arn: unknown): string {
    return this.queue(`https://sqs.us-east-1.amazonaws.com/000000000000/${String(arn).split(':').pop()}`).url;
  }

  /** Direct view for checks: the messages of a queue, visible or in flight. */
  peek(url: string): readonly Message[] {
    return this.queue(url).messages;
  }

  /** Whether a receive now would return a message (or move one to the DLQ). */
  hasVisible(url: string, now: number): boolean {
    return this.queue(url).messages.some((m) => m.visibleAt <= now);
  }

  /** The earliest time after `now` at which a message becomes visible again, if any. */
  nextVisibleAt(now: number): number | undefined {
    let next: number | undefined;
    for (const queue of this.queues.values()) {
      for (const m of queue.messages)
        if (m.visibleAt > now && (next === undefined || m.visibleAt < next)) next = m.visibleAt;
    }
    return next;
  }

  /** The state, as a string (for the explorer's state cache). */
  digest(): string {
    return [...this.queues.values()]
      .map(
        (q) =>
          `${q.name}#${q.counter}[${q.messages
            .map((m) => `${m.messageId}:${m.visibleAt}:${m.receiveCount}:${m.receiptHandle}:${m.body.length}`)
            .join(',')}]`,
      )
      .join('');
  }

  handle(name: string, input: Record<string, unknown>, now: number): Record<string, unknown> {
    switch (name) {
      case 'SendMessage':
        return { MessageId: this.send(this.queue(input.QueueUrl), String(input.MessageBody), now, input.DelaySeconds) };
      case 'SendMessageBatch': {
        const queue = this.queue(input.QueueUrl);
        const entries = (input.Entries ?? []) as { Id: string; MessageBody: string; DelaySeconds?: number }[];
        return {
          Successful: entries.map((e) => ({
            Id: e.Id,
            MessageId: this.send(queue, e.MessageBody, now, e.DelaySeconds),
          })),
          Failed: [],
        };
      }
      case 'ReceiveMessage':
        return this.receive(input, now);
      case 'DeleteMessage':
        this.delete(this.queue(input.QueueUrl), String(input.ReceiptHandle));
        return {};
      case 'DeleteMessageBatch': {
        const queue = this.queue(input.QueueUrl);
        const entries = (input.Entries ?? []) as { Id: string; ReceiptHandle: string }[];
        for (const e of entries) this.delete(queue, e.ReceiptHandle);
        return { Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] };
      }
      case 'ChangeMessageVisibility': {
        const queue = this.queue(input.QueueUrl);
        const message = queue.messages.find((m) => m.receiptHandle === String(input.ReceiptHandle));
        if (!message || message.visibleAt <= now) {
          throw new SimServiceError(400, 'MessageNotInflight', 'The message referred to is not in flight.');
        }
        message.visibleAt = now + Number(input.VisibilityTimeout) * 1000;
        return {};
      }
      case 'StartMessageMoveTask': {
        // SQS Developer Guide, "Using dead-letter queue redrive": moved messages are sent anew.
        const source = this.queue(this.urlOf(input.SourceArn));
        const destination = this.queue(this.urlOf(input.DestinationArn));
        for (const message of source.messages.splice(0)) this.send(destination, message.body, now, 0);
        return { TaskHandle: `${source.name}-move` };
      }
      case 'GetQueueUrl': {
        const queue = this.byName.get(String(input.QueueName));
        if (!queue)
          throw new SimServiceError(
            400,
            'AWS.SimpleQueueService.NonExistentQueue',
            'The specified queue does not exist.',
          );
        return { QueueUrl: queue.url };
      }
      case 'GetQueueAttributes': {
        const queue = this.queue(input.QueueUrl);
        const visible = queue.messages.filter((m) => m.visibleAt <= now).length;
        return {
          Attributes: {
            ApproximateNumberOfMessages: String(visible),
            ApproximateNumberOfMessagesNotVisible: String(queue.messages.length - visible),
            ApproximateNumberOfMessagesDelayed: '0',
          },
        };
      }
      default:
        throw new SimServiceError(400, 'InvalidAction', `the in-memory SQS does not implement ${name}`);
    }
  }

  /**
   * A send adds a message (its id counts the queue's sends); a receive may take any visible message
   * and changes its handle and visibility; a delete or a visibility change touches one message.
   */
  footprint(name: string, input: Record<string, unknown>): Footprint {
    const queue = `sqs:${String(input.QueueUrl ?? input.QueueName)}`;
    const messageOf = (handle: unknown) => `${queue}:msg/${String(handle).replace(/-r\d+$/, '')}`;
    switch (name) {
      case 'SendMessage':
      case 'SendMessageBatch':
        return { reads: [], writes: [`${queue}:new`] };
      case 'DeleteMessage':
      case 'ChangeMessageVisibility':
        return { reads: [], writes: [messageOf(input.ReceiptHandle)] };
      case 'DeleteMessageBatch':
        return {
          reads: [],
          writes: ((input.Entries ?? []) as { ReceiptHandle: string }[]).map((e) => messageOf(e.ReceiptHandle)),
        };
      case 'GetQueueUrl':
        return { reads: [], writes: [] };
      case 'StartMessageMoveTask': {
        const source = `sqs:${this.urlOf(input.SourceArn)}`;
        return {
          reads: [],
          writes: [`${source}:new`, `${source}:msg/*`, `sqs:${this.urlOf(input.DestinationArn)}:new`],
        };
      }
      default:
        return { reads: [], writes: [`${queue}:new`, `${queue}:msg/*`] };
    }
  }

  private queue(url: unknown): Queue {
    const queue = this.queues.get(String(url));
    if (!queue)
      throw new SimServiceError(400, 'AWS.SimpleQueueService.NonExistentQueue', 'The specified queue does not exist.');
    return queue;
  }

  private send(queue: Queue, body: string, now: number, delaySeconds: unknown): string {
    const messageId = `${queue.name}-m${++queue.counter}`;
    queue.messages.push({
      messageId,
      body,
      sentAt: now,
      visibleAt: now + Number(delaySeconds ?? 0) * 1000,
      receiveCount: 0,
      receiptHandle: '',
    });
    return messageId;
  }

  private receive(input: Record<string, unknown>, now: number): Record<string, unknown> {
    const queue = this.queue(input.QueueUrl);
    const max = Number(input.MaxNumberOfMessages ?? 1);
    const visibilityMs =
      input.VisibilityTimeout !== undefined ? Number(input.VisibilityTimeout) * 1000 : queue.visibilityTimeoutMs;
    const out: Record<string, unknown>[] = [];
    for (const message of [...queue.messages]) {
      if (out.length >= max) break;
      if (message.visibleAt > now) continue;
      if (queue.deadLetter && message.receiveCount >= queue.deadLetter.maxReceiveCount) {
        // Received maxReceiveCount times already: the redrive policy moves it instead of delivering it.
        queue.messages.splice(queue.messages.indexOf(message), 1);
        const dlq = this.queue(queue.deadLetter.url);
        dlq.messages.push({ ...message, visibleAt: now, receiptHandle: '' });
        continue;
      }
      message.receiveCount++;
      message.receiptHandle = `${message.messageId}-r${message.receiveCount}`;
      message.visibleAt = now + visibilityMs;
      message.firstReceivedAt ??= now;
      out.push({
        MessageId: message.messageId,
        ReceiptHandle: message.receiptHandle,
        Body: message.body,
        Attributes: {
          ApproximateReceiveCount: String(message.receiveCount),
          SentTimestamp: String(message.sentAt),
          ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt),
        },
      });
    }
    return out.length > 0 ? { Messages: out } : {};
  }

  private delete(queue: Queue, receiptHandle: string): void {
    // Only the most recent receipt handle deletes (an older one succeeds and changes nothing).
    const at = queue.messages.findIndex((m) => m.receiptHandle === receiptHandle && receiptHandle !== '');
    if (at >= 0) queue.messages.splice(at, 1);
  }
}

/** One message as the queue holds it. */
export interface Message {
  readonly messageId: string;
  readonly body: string;
  readonly sentAt: number;
  visibleAt: number;
  receiveCount: number;
  receiptHandle: string;
  firstReceivedAt?: number;
}

interface Queue {
  readonly url: string;
  readonly name: string;
  readonly visibilityTimeoutMs: number;
  readonly deadLetter?: { readonly url: string; readonly maxReceiveCount: number };
  readonly messages: Message[];
  counter: number;
}
