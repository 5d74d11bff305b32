import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../src/aws/clients.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { readWindowInputs } from '../../src/window/readWindowInputs.js';
import { dailyReadTask } from '../support/dailyReadTask.js';

/**
 * A body read ahead of the build and cut off by the network while it waits its turn, over a real
 * socket and the SDK's own client: Node's http response is destroyed before the build attaches to it,
 * and node:readline attached to a destroyed stream never ends. The read must be made again at its
 * turn (what hung a summary task in the chaos suite when reads ran 8 ahead).
 */

const task = dailyReadTask('data');

const lineage = Array.from({ length: 6 }, (_, i) => ({ source: 'in', path: `dt=2026-12-05/${i}.json`, etag: `e${i}` }));
const linesOf = (key: string) => `${key} a\n${key} b\n`;

describe('window read-ahead over a socket the network cuts', () => {
  let server: Server;
  let endpoint: string;
  const gets: string[] = [];
  const CUT = '/data/in/dt=2026-12-05/2.json';

  beforeAll(async () => {
    server = createServer((request, response) => {
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
      gets.push(path);
      const body = linesOf(path.slice('/data/'.length));
      const etag = `"e${/(\d+)\.json$/.exec(path)?.[1]}"`;
      response.writeHead(200, {
        'content-length': String(Buffer.byteLength(body)),
        etag,
        'content-type': 'text/plain',
      });
      if (path === CUT && gets.filter((p) => p === CUT).length === 1) {
        // Half the body, then the connection drops while the client has not read it yet.
        response.write(body.slice(0, 10));
        setTimeout(() => request.socket.destroy(), 20);
        return;
      }
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads the cut input again at its turn, and the line reader sees every line of every input', async () => {
    const { s3 } = createAwsClients({
      endpoint,
      credentials: { accessKeyId: 'k', secretAccessKey: 's' },
      maxAttempts: 1,
    });
    const reads = readWindowInputs(task as never, '2026-12-05', lineage, new S3PartitionStore(s3), undefined, 4);
    const lines: string[] = [];
    for await (const input of reads.inputs) {
      const reader = createInterface({ input: input.body, crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of reader) {
        lines.push(line);
        // The build is slower than the network: the cut comes while 2.json waits behind 0.json.
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    }
    expect(lines).toEqual(lineage.flatMap((e) => linesOf(`in/${e.path}`).trimEnd().split('\n')));
    expect(gets.filter((p) => p === CUT)).toHaveLength(2);
    expect(reads.bodyError()).toBeUndefined();
    s3.destroy();
  });
});
