import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../local/runner/freeLoopbackPort.js';
import { checkEndpoint, EndpointUnusableError } from '../../src/aws/endpointPreflight.js';
import { awsEndpoint } from '../support/aws.js';

/** checkEndpoint's verdict and how long it took. */
async function verdict(endpoint: string, timeoutMs?: number): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await checkEndpoint(endpoint, timeoutMs ? { timeoutMs } : {}).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: Date.now() - started };
}

describe('checkEndpoint: a wrong AWS_ENDPOINT_URL fails at once, naming the cause and the fix', () => {
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });
  const listen = async (server: Server): Promise<string> => {
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  };

  it('accepts the emulator', async () => {
    expect((await verdict(awsEndpoint())).error).toBeUndefined();
  });

  it('refuses an endpoint without a scheme, saying what to write', async () => {
    const { error } = await verdict('localhost:4566');
    expect(error).toBeInstanceOf(EndpointUnusableError);
    expect((error as Error).message).toBe(
      'AWS_ENDPOINT_URL=localhost:4566 has no scheme: write http://localhost:4566 (or https://localhost:4566).',
    );
    expect((await verdict('ftp://127.0.0.1:21')).error).toMatchObject({
      message: expect.stringMatching(/scheme "ftp"/),
    });
  });

  it('refuses a port where nothing listens', async () => {
    const { error, ms } = await verdict(`http://127.0.0.1:${await freeLoopbackPort()}`);
    expect((error as Error).message).toMatch(/^Nothing listens at AWS_ENDPOINT_URL=.* \(connection refused\)\. Start/);
    expect(ms).toBeLessThan(10_000);
  });

  it('refuses an endpoint that never answers, within its timeout', async () => {
    const silent = createTcpServer((socket) => sockets.push(socket));
    const endpoint = await listen(silent);
    const { error, ms } = await verdict(endpoint, 2000);
    expect((error as Error).message).toMatch(/did not answer within 2 s/);
    expect(ms).toBeLessThan(10_000);
  });

  it('refuses a server that is not AWS', async () => {
    const web = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>hello</body></html>');
    });
    const endpoint = await listen(web as unknown as Server);
    const { error } = await verdict(endpoint);
    expect((error as Error).message).toMatch(/is not an AWS API: it answered HTTP 200 \(text\/html\)/);
  });
});
