import { createServer } from 'node:net';

/**
 * Asks the OS for a free TCP port on 127.0.0.1 (for an emulator, a runtime slot, a test server):
 * everything local listens on loopback only.
 *
 * @example
 * const port = await freeLoopbackPort(); // e.g. 41005
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
