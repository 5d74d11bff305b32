import { describe, expect, it } from 'vitest';
import { createAwsClients } from '../../src/aws/clients.js';
import { traceAwsClients } from '../../src/aws/traceAwsClients.js';

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
});
