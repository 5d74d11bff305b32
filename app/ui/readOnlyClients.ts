import type { AwsClients } from '../../src/aws/clients.js';

/**
 * The only commands the console sends, every one a read. No ReceiveMessage: receiving a DLQ's
 * message to show it raises its receive count and hides it from a redrive for a while, so the Dead
 * letters view lists the failure records instead (app/ui/consoleDeadLetters.ts). No object, message or
 * attribute is created, changed or deleted. The console has no
 * DynamoDB client at all (the pipeline target holds S3 and SQS only): the ledger is not read.
 * CloudWatch and CloudWatch Logs, for a deployed pipeline's live view, are read with one command each.
 */
export const CONSOLE_COMMANDS = {
  s3: ['HeadBucketCommand', 'HeadObjectCommand', 'GetObjectCommand', 'ListObjectsV2Command'],
  sqs: ['GetQueueUrlCommand', 'GetQueueAttributesCommand'],
  /** A deployed pipeline's live view: metrics (throughput, queue ages) and the workers' log lines. */
  cloudwatch: ['GetMetricDataCommand'],
  logs: ['FilterLogEventsCommand'],
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
  guardReadOnlyClient('s3', clients.s3);
  guardReadOnlyClient('sqs', clients.sqs);
  return clients;
}

/**
 * Guards one SDK client of a service of {@link CONSOLE_COMMANDS}: any other command fails before it
 * is sent. Returns the client.
 *
 * @example
 * const logs = guardReadOnlyClient('logs', new CloudWatchLogsClient({}));
 */
export function guardReadOnlyClient<C>(service: keyof typeof CONSOLE_COMMANDS, client: C): C {
  const allowed = new Set<string>(CONSOLE_COMMANDS[service]);
  (client as unknown as MiddlewareClient).middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? '(unnamed command)';
      if (!allowed.has(name)) throw new ConsoleWriteRefusedError(service, name);
      return next(args);
    },
    { step: 'initialize', name: 'rerunConsoleReadOnly', priority: 'high' },
  );
  return client;
}
