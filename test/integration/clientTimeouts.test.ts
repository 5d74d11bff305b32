import { createServer, type Server, type Socket } from 'node:net';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../src/aws/clients.js';

describe('SDK clients give up on a hung connection', () => {
  let server: Server;
  let endpoint: string;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a request that hangs.
    server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails the request after the idle timeout instead of waiting for the function timeout', async () => {
    const { s3 } = createAwsClients({ endpoint, region: 'us-east-1', maxAttempts: 1, requestTimeoutMs: 300 });
    const started = Date.now();
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k' }))).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('defaults to a 30 s idle timeout and a 5 s connection timeout', async () => {
    const { sqs } = createAwsClients({ endpoint, region: 'us-east-1' });
    const handler = sqs.config.requestHandler as unknown as { configProvider?: Promise<Record<string, unknown>> };
    const config = await handler.configProvider;
    expect(config).toMatchObject({ socketTimeout: 30_000, connectionTimeout: 5_000 });
  });
});
