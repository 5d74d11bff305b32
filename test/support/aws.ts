import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createPipelineClients, type PipelineClients } from '../../src/ledger/pipelineClients.js';

/** The emulator endpoint started by test/globalSetup.ts (moto, or AWS_ENDPOINT_URL). */
export function awsEndpoint(): string {
  return inject('awsEndpoint');
}

/** A resource name no other test uses (test files share one emulator). */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`.toLowerCase();
}

/** One SDK request seen by a {@link RequestLog}. */
export interface LoggedRequest {
  service: 'S3' | 'SQS' | 'DynamoDB';
  operation: string;
  input: Record<string, unknown>;
}

/** Records every request the wrapped clients send, so tests count requests instead of assuming. */
export class RequestLog {
  readonly requests: LoggedRequest[] = [];
  count(filter: Partial<Pick<LoggedRequest, 'service' | 'operation'>> = {}): number {
    return this.requests.filter(
      (r) =>
        (filter.service === undefined || r.service === filter.service) &&
        (filter.operation === undefined || r.operation === filter.operation),
    ).length;
  }
  operations(service?: LoggedRequest['service']): string[] {
    return this.requests.filter((r) => service === undefined || r.service === service).map((r) => r.operation);
  }
  clear(): void {
    this.requests.length = 0;
  }
}

/** Clients pointed at the test emulator; pass a {@link RequestLog} to record their requests. */
export function testClients(log?: RequestLog): PipelineClients {
  const clients = createPipelineClients({ endpoint: awsEndpoint(), region: 'us-east-1' });
  if (log) {
    record(clients.s3, 'S3', log);
    record(clients.sqs, 'SQS', log);
    record(clients.dynamodb, 'DynamoDB', log);
  }
  return clients;
}

type Middlewared = {
  middlewareStack: { add: (mw: unknown, options: Record<string, unknown>) => void };
};

function record(client: unknown, service: LoggedRequest['service'], log: RequestLog): void {
  (client as Middlewared).middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: Record<string, unknown> }) => {
        log.requests.push({
          service,
          operation: (context.commandName ?? 'Unknown').replace(/Command$/, ''),
          input: args.input,
        });
        return next(args);
      },
    { step: 'deserialize', name: `rerunTestRequestLog${service}` },
  );
}
