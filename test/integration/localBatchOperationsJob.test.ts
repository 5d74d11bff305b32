import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseManifestCsv, runLocalBatchOperationsJob } from '../../local/batchOperations/LocalBatchOperationsJob.js';
import { createBatchOperationsHandler } from '../../src/batch/createBatchOperationsHandler.js';
import { PublishConflictError } from '../../src/errors.js';
import { encodeManifestKey } from '../../src/intake/parseBatchOperationsEvent.js';
import { splitCsvLine } from '../../src/intake/splitCsvLine.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

describe('runLocalBatchOperationsJob (the local stand-in for S3 Batch Operations)', () => {
  const clients = testClients();
  let input: string;
  let output: string;
  let ops: string;
  /** Keys whose first transform throws a retryable error (a lost race), once each. */
  let flaky: Set<string>;

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('lj-in'));
    output = await createBucket(clients.s3, uniqueName('lj-out'));
    ops = await createBucket(clients.s3, uniqueName('lj-ops'));
    flaky = new Set();
  });

  const handler = () =>
    createBatchOperationsHandler({
      worker: defineWorker({
        name: 'copy',
        codeVersion: '1',
        outputBucket: output,
        outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
        async transform({ source, body }, { output: out }) {
          if (flaky.delete(source.key)) throw new PublishConflictError('lost a race, once');
          for await (const chunk of body) await out.write(chunk as Uint8Array);
          return {};
        },
      }),
      store: new S3ObjectStore(clients.s3),
      maxInputBytes: 32,
    });

  it('runs every manifest task through the handler, redrives a TemporaryFailure, and writes the documented report', async () => {
    const keys = ['incoming/a b+c é.csv', 'incoming/flaky.csv', 'incoming/too large.csv', 'incoming/gone.csv'];
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: keys[0], Body: 'one' }));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: keys[1], Body: 'two' }));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: keys[2], Body: 'x'.repeat(64) }));
    flaky.add('incoming/flaky.csv');
    const manifest = keys.map((k) => `${input},${encodeManifestKey(k)}`).join('\n');
    await clients.s3.send(new PutObjectCommand({ Bucket: ops, Key: 'manifests/m.csv', Body: manifest }));

    const job = await runLocalBatchOperationsJob({
      s3: clients.s3,
      handler: handler(),
      manifest: { bucket: ops, key: 'manifests/m.csv' },
      report: { bucket: ops, prefix: 'reports' },
      jobId: 'job-1',
      invocationSchemaVersion: '2.0',
      userArguments: { why: 'test' },
      now: () => Date.parse('2026-12-02T10:00:00Z'),
    });
    expect(job).toMatchObject({ jobId: 'job-1', status: 'Complete', totalTasks: 4, succeeded: 3, failed: 1 });
    expect(job.tasks.map((t) => [t.resultCode, t.attempts])).toEqual([
      ['Succeeded', 1],
      ['Succeeded', 2],
      ['PermanentFailure', 1],
      ['Succeeded', 1],
    ]);
    expect(await readText(clients.s3, output, `out/${input}/incoming/a b+c é.csv`)).toBe('one');

    // S3 User Guide, "Examples: S3 Batch Operations completion reports".
    const manifestJson = JSON.parse(await readText(clients.s3, ops, job.reportManifestKey));
    expect(job.reportManifestKey).toBe('reports/job-job-1/manifest.json');
    expect(manifestJson).toMatchObject({
      Format: 'Report_CSV_20180820',
      ReportCreationDate: '2026-12-02T10:00:00.000Z',
      ReportSchema: 'Bucket, Key, VersionId, TaskStatus, ErrorCode, HTTPStatusCode, ResultMessage',
      Results: [
        {
          TaskExecutionStatus: 'succeeded',
          Bucket: ops,
          Key: expect.stringMatching(/^reports\/job-job-1\/results\/[0-9a-f]{40}\.csv$/),
        },
        { TaskExecutionStatus: 'failed', Bucket: ops, MD5Checksum: expect.stringMatching(/^[0-9a-f]{32}$/) },
      ],
    });
    const failedCsv = await readText(clients.s3, ops, manifestJson.Results[1].Key);
    const [row] = failedCsv.trim().split('\n').map(splitCsvLine);
    expect(row).toEqual([
      input,
      'incoming/too%20large.csv',
      '',
      'failed',
      '200',
      'PermanentFailure',
      expect.stringMatching(/^InputTooLargeError/),
    ]);
    expect(await listKeys(clients.s3, ops, 'reports/')).toHaveLength(3);
  });

  it('a job run twice: the second run is all skips, and writes nothing but its own report', async () => {
    const keys = ['incoming/1.csv', 'incoming/2 two.csv'];
    for (const key of keys) await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: 'v' }));
    const manifest = keys.map((k) => `${input},${encodeManifestKey(k)}`).join('\n');
    await clients.s3.send(new PutObjectCommand({ Bucket: ops, Key: 'm.csv', Body: manifest }));
    const run = (jobId: string) =>
      runLocalBatchOperationsJob({
        s3: clients.s3,
        handler: handler(),
        manifest: { bucket: ops, key: 'm.csv' },
        report: { bucket: ops, prefix: 'reports' },
        jobId,
      });
    await run('first');
    const before = await listKeys(clients.s3, output);
    const second = await run('second');
    expect(second.tasks.map((t) => t.resultString)).toEqual(
      keys.map(() => expect.stringMatching(/^skipped: already done/)),
    );
    expect(await listKeys(clients.s3, output)).toEqual(before);
    await expect(run('second')).rejects.toThrow(/has a completion report already/);
  });

  it('reads manifests with a version column and refuses a malformed line by its number', () => {
    expect(parseManifestCsv('b,k%201,v1\r\n\nb,"k,2"\n')).toEqual([
      { bucket: 'b', key: 'k%201', versionId: 'v1' },
      { bucket: 'b', key: 'k,2' },
    ]);
    expect(() => parseManifestCsv('b,k\nonly-a-bucket\n')).toThrow(/manifest line 2/);
  });
});
