import type { AwsClients } from '../../src/aws/clients.js';

/**
 * The only commands the console sends. Every one reads, except the two with which a DLQ is
 * inspected, exactly as `rerun redrive --dry-run` does: ReceiveMessage (the DLQ's own receive count
 * of a message grows) and ChangeMessageVisibilityBatch, which makes the received messages visible
 * again at once. No object, message or attribute is created, changed or deleted. The console has no
 * DynamoDB client at all (the pipeline target holds S3 and SQS only): the ledger is not read.
 */
export const CONSOLE_COMMANDS = {
  s3: ['HeadBucketCommand', 'HeadObjectCommand', 'GetObjectCommand', 'ListObjectsV2Command'],
  sqs: [
    'GetQueueUrlCommand',
    'GetQueueAttributesCommand',
    'ListDeadLetterSourceQueuesCommand',
    'ReceiveMessageCommand',
    'ChangeMessageVisibilityBatchCommand',
  ],
} as const;

/** The console tried to send a command outside {@link CONSOLE_COMMANDS}: a bug, refused before it leaves. */
export class ConsoleWriteRefusedError extends Error {
  constructor(
    readonly service: string,
    readonly commandName: string,
  ) {
    super(`rerun ui is read-only: it refused to send ${service} ${commandName}.`);
    this.name = 'ConsoleWriteRefusedError';
  }
}

type MiddlewareClient = {
  middlewareStack: {
    add(
      middleware: (
        next: (args: unknown) => Promise<unknown>,
        context: { commandName?: string },
      ) => (args: unknown) => Promise<unknown>,
      options: { step: 'initialize'; name: string; priority: 'high' },
    ): void;
  };
};

/**
 * Guards SDK clients so that any command outside {@link CONSOLE_COMMANDS} fails before it is sent:
 * the console's promise to change nothing holds by construction, not only by review.
 *
 * @example
 * const clients = guardReadOnly(createAwsClients({ endpoint }));
 * await clients.s3.send(new PutObjectCommand(...)); // throws ConsoleWriteRefusedError
 */
export function guardReadOnly<T extends AwsClients>(clients: T): T {
  for (const service of ['s3', 'sqs'] as const) {
    const allowed = new Set<string>(CONSOLE_COMMANDS[service]);
    (clients[service] as unknown as MiddlewareClient).middlewareStack.add(
      (next, context) => async (args) => {
        const name = context.commandName ?? '(unnamed command)';
        if (!allowed.has(name)) throw new ConsoleWriteRefusedError(service, name);
        return next(args);
      },
      { step: 'initialize', name: 'rerunConsoleReadOnly', priority: 'high' },
    );
  }
  return clients;
}
