import { describe, expect, it } from 'vitest';
import { createAwsClients } from '../../src/aws/clients.js';
import { traceAwsClients } from '../../src/aws/traceAwsClients.js';
import { createDynamoDBClient } from '../../src/ledger/createDynamoDBClient.js';

/** The names of a client's middleware (the SDK's `identify()` lists `name - step`). */
const middlewareOf = (client: { middlewareStack: { identify(): string[] } }) =>
  client.middlewareStack.identify().map((entry) => entry.split(' - ')[0]);

describe('traceAwsClients: each AWS SDK call becomes an X-Ray subsegment', () => {
  it("adds the X-Ray SDK's instrumentation to every client, once, and returns the same clients", async () => {
    const clients = createAwsClients({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    for (const client of Object.values(clients)) expect(middlewareOf(client)).not.toContain('XRaySDKInstrumentation');
    expect(await traceAwsClients(clients)).toBe(clients);
    await traceAwsClients(clients);
    for (const client of Object.values(clients)) {
      expect(middlewareOf(client).filter((name) => name === 'XRaySDKInstrumentation')).toHaveLength(1);
    }
  });

  it("traces the ledger's DynamoDB client alone, as the normalize handler does once it has loaded the ledger", async () => {
    const dynamodb = createDynamoDBClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    await traceAwsClients({ dynamodb });
    expect(middlewareOf(dynamodb).filter((name) => name === 'XRaySDKInstrumentation')).toHaveLength(1);
  });
});
