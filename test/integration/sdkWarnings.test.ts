import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { uploadDirectory } from '../../app/dev/uploadDirectory.js';
import { createAwsClients } from '../../src/aws/clients.js';
import type { Logger } from '../../src/logging/logger.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { createBucket } from '../support/s3.js';

/** A logger that keeps its entries. */
function capturingLogger(entries: { level: string; message: string }[]): Logger {
  const at = (level: string) => (message: string) => entries.push({ level, message });
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

describe('the SDK on the console', () => {
  let consoleWarn: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    consoleWarn = vi.spyOn(console, 'warn');
  });
  afterEach(() => consoleWarn.mockRestore());

  it('a second demo upload (every key answers the expected 412) prints nothing', async () => {
    const clients = testClients();
    const bucket = await createBucket(clients.s3, uniqueName('quiet'));
    const directory = mkdtempSync(join(tmpdir(), 'rerun-upload-'));
    try {
      writeFileSync(join(directory, 'a.csv'), 'id\n1\n');
      writeFileSync(join(directory, 'b.csv'), 'id\n2\n');
      await uploadDirectory({ s3: clients.s3, bucket, directory, prefix: 'incoming/' });
      const second = await uploadDirectory({ s3: clients.s3, bucket, directory, prefix: 'incoming/' });
      expect(second).toEqual({ uploaded: [], alreadyPresent: ['incoming/a.csv', 'incoming/b.csv'] });
      expect(consoleWarn).not.toHaveBeenCalled();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("routes the SDK's own warnings into our logger instead of the console", async () => {
    const entries: { level: string; message: string }[] = [];
    const clients = createAwsClients({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      logger: capturingLogger(entries),
    });
    // A streaming body that fails: the SDK warns that it cannot retry a streaming request.
    const failed = await clients.s3
      .send(
        new PutObjectCommand({
          Bucket: uniqueName('no-such-bucket'),
          Key: 'k',
          Body: Readable.from([Buffer.from('abc')]),
          ContentLength: 3,
        }),
      )
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({ name: 'NoSuchBucket' });
    expect(entries).toContainEqual({
      level: 'warn',
      message: 'AWS SDK: An error was encountered in a non-retryable streaming request.',
    });
    expect(consoleWarn).not.toHaveBeenCalled();
  });

  it('logs nothing for a failed request the caller classifies (the SDK logs every failure at error)', async () => {
    const entries: { level: string; message: string }[] = [];
    const clients = createAwsClients({
      endpoint: awsEndpoint(),
      region: 'us-east-1',
      logger: capturingLogger(entries),
    });
    const bucket = await createBucket(clients.s3, uniqueName('quiet-404'));
    const missing = await clients.s3
      .send(new HeadObjectCommand({ Bucket: bucket, Key: 'nothing-here' }))
      .catch((e) => e);
    expect(missing).toMatchObject({ $metadata: { httpStatusCode: 404 } });
    expect(entries).toEqual([]);
  });
});
