import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy answers instead of forwarding: S3's error shape for a status and code. */
export interface S3Refusal {
  readonly status: number;
  /** S3's error code (`AccessDenied`, `InvalidBucketName`, ...); a HEAD answer carries no body. */
  readonly code: string;
}

/** Decides, for one request, whether to refuse it (and how) or to forward it. */
export type RefusalRule = (request: {
  method: string;
  bucket: string;
  key: string;
  /** The query string (`uploadId=...` on CompleteMultipartUpload, `uploads` on its creation). */
  query: URLSearchParams;
}) => S3Refusal | undefined;

/**
 * An HTTP proxy in front of the emulator that answers chosen S3 requests as IAM or S3 would
 * (403 AccessDenied, 400 InvalidBucketName, 409 ConditionalRequestConflict) and forwards everything else. moto enforces no IAM and
 * answers NoSuchBucket for names S3 itself rejects as invalid (EMULATORS.md), so these answers are
 * made here, in S3's wire format, and the real SDK deserializes them as it would AWS's.
 *
 * Path-style requests only (the project's clients use forcePathStyle against emulators).
 *
 * @example
 * const proxy = await S3DenyProxy.start(awsEndpoint(), ({ method }) => (method === 'HEAD' ? { status: 403, code: 'AccessDenied' } : undefined));
 */
export class S3DenyProxy {
  /** Requests refused so far, as `METHOD bucket/key`. */
  readonly refused: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(upstream: string, rule: RefusalRule): Promise<S3DenyProxy> {
    const target = new URL(upstream);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new S3DenyProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req: IncomingMessage, res) => {
      const url = new URL(req.url ?? '/', 'http://proxy');
      const path = url.pathname;
      const [bucket = '', ...rest] = path.slice(1).split('/');
      const key = decodeURIComponent(rest.join('/'));
      const refusal = rule({ method: req.method ?? 'GET', bucket, key, query: url.searchParams });
      if (refusal) {
        proxy.refused.push(`${req.method} ${bucket}/${key}`);
        req.resume();
        const body =
          req.method === 'HEAD'
            ? ''
            : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>refused by the test proxy</Message><RequestId>deny-proxy</RequestId></Error>`;
        res.writeHead(refusal.status, { 'content-type': 'application/xml', 'x-amz-request-id': 'deny-proxy' });
        res.end(body);
        return;
      }
      const forward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: target.host },
        },
        (upstreamRes) => {
          res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
          upstreamRes.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    return proxy;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
