import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { MiniStackCertificate } from './ministackCertificate.js';

/** Requests seen, by `<service> <action>` (`s3 ListObjectsV2`, `sqs SendMessageBatch`, ...). */
export type RequestCounts = Record<string, number>;

/** A TLS proxy in front of MiniStack that counts the requests passing through it. */
export interface CountingProxy {
  /** Where clients point AWS_ENDPOINT_URL instead of MiniStack. */
  readonly endpoint: string;
  /** The requests counted since the last call (and starts counting afresh). */
  take(): RequestCounts;
  close(): Promise<void>;
}

/**
 * Starts an HTTPS proxy on a free loopback port that forwards every request to MiniStack unchanged
 * (headers, Host and body: the SigV4 signature still holds) and counts it by service (the
 * signature's credential scope) and action: SQS's `X-Amz-Target`, a query protocol's `Action=`,
 * S3's method (ListObjectsV2, HeadObject, GetObject, PutObject, DeleteObject) with the first folder
 * of its key or listed prefix (`s3 HeadObject clean/`); an unsigned request by its path. MiniStack
 * keeps no request log of its own, so this is how the deployed tier measures what a tool sent.
 * It serves the tier's certificate, which the clients already trust.
 *
 * @example
 * const proxy = await startCountingProxy(ministackEndpoint(), certificate);
 */
export async function startCountingProxy(target: string, certificate: MiniStackCertificate): Promise<CountingProxy> {
  const upstream = new URL(target);
  const ca = readFileSync(certificate.cert);
  let counts: RequestCounts = {};
  const server = createServer(
    { cert: readFileSync(certificate.cert), key: readFileSync(certificate.key) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const name = requestName(req.method ?? 'GET', req.url ?? '/', req.headers, body);
        counts[name] = (counts[name] ?? 0) + 1;
        const forward = request(
          {
            hostname: upstream.hostname,
            port: upstream.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
            ca,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', (error) => {
          res.writeHead(502);
          res.end(String(error));
        });
        forward.end(body);
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    take: () => {
      const seen = counts;
      counts = {};
      return seen;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function requestName(method: string, url: string, headers: Record<string, unknown>, body: Buffer): string {
  const scope = /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\//.exec(String(headers.authorization ?? ''));
  const { pathname, searchParams } = new URL(url, 'https://host');
  if (!scope) return `unsigned ${method} ${pathname}`;
  const service = scope[1];
  const target = headers['x-amz-target'];
  if (typeof target === 'string') return `${service} ${target.split('.').at(-1)}`;
  if (service !== 's3') {
    const action = /(?:^|&)Action=([^&]+)/.exec(body.toString()) ?? /[?&]Action=([^&]+)/.exec(url);
    return `${service} ${action?.[1] ?? method}`;
  }
  // S3, path-style: /<bucket>[/<key>]; named with the key's (or the listed prefix's) first folder.
  const [, , ...key] = pathname.split('/');
  const folder = (path: string) => `${decodeURIComponent(path).split('/')[0]}/`;
  if (key.length === 0 || key.join('/') === '') {
    if (method === 'HEAD') return 's3 HeadBucket';
    const listing = searchParams.get('list-type') === '2' ? 'ListObjectsV2' : `${method} bucket`;
    return `s3 ${listing} ${folder(searchParams.get('prefix') ?? '')}`;
  }
  const object: Record<string, string> = {
    GET: 'GetObject',
    HEAD: 'HeadObject',
    PUT: 'PutObject',
    DELETE: 'DeleteObject',
  };
  return `s3 ${object[method] ?? method} ${folder(key.join('/'))}`;
}
