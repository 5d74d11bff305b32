import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RerunError } from '../../../src/errors.js';

/** A certificate and its key, PEM files. */
export interface MiniStackCertificate {
  /** The certificate: what a client trusts (NODE_EXTRA_CA_CERTS, AWS_CA_BUNDLE). */
  readonly cert: string;
  readonly key: string;
}

/** openssl could not make the deployed tier's certificate. */
export class MiniStackCertificateError extends RerunError {
  constructor(detail: string) {
    super(
      `Could not create MiniStack's TLS certificate with openssl: ${detail}. The deployed tier serves MiniStack over ` +
        'HTTPS (its IAM evaluator denies plain HTTP where a policy requires aws:SecureTransport). Install openssl ' +
        '(Debian/Ubuntu: apt-get install openssl) and run it again.',
      { retryable: false },
    );
    this.name = 'MiniStackCertificateError';
  }
}

/**
 * A self-signed certificate for MiniStack on 127.0.0.1, in `dir` (`cert.pem`, `key.pem`), made with
 * the openssl CLI on first use and again when it expires within a day. It has to exist before the
 * test process starts: Node reads NODE_EXTRA_CA_CERTS only at launch (vitest.deployed.config.ts
 * creates it and sets the variable for the test workers).
 *
 * Why TLS at all: the stack's bucket, queue and topic policies deny every request with
 * `aws:SecureTransport = false`, and MiniStack's IAM evaluator applies that to every caller but the
 * account root, so its functions must reach it over HTTPS, as on AWS.
 *
 * @example
 * const { cert, key } = ensureMiniStackCertificate('.rerun/ministack-tls');
 */
export function ensureMiniStackCertificate(dir: string): MiniStackCertificate {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  if (existsSync(cert) && existsSync(key)) {
    const valid = spawnSync('openssl', ['x509', '-in', cert, '-noout', '-checkend', '86400'], { encoding: 'utf8' });
    if (valid.status === 0) return { cert, key };
  }
  mkdirSync(dir, { recursive: true });
  const made = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '30',
      '-subj',
      '/CN=127.0.0.1/O=rerun deployed tier',
      '-addext',
      'basicConstraints=critical,CA:FALSE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      '-addext',
      'extendedKeyUsage=serverAuth',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { encoding: 'utf8' },
  );
  if (made.error) throw new MiniStackCertificateError(made.error.message);
  if (made.status !== 0) throw new MiniStackCertificateError(`exit ${made.status}: ${made.stderr.trim()}`);
  return { cert, key };
}
