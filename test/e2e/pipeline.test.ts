import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalStackResources } from '../../app/dev/provisionLocalStack.js';
import { reprocessMessageBody } from '../../app/reprocess/reprocessMessage.js';
import { judgeOutput, OutputState } from '../../src/done/judgeOutput.js';
import { NORMALIZE_CODE_VERSION } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { RequestLog, testClients } from '../support/aws.js';
import { TestRuntime, testRuntime } from '../support/lambdaRuntime.js';
import {
  drainNormalize,
  provisionTestPipeline,
  queueDepth,
  sendS3Event,
  testTopology,
  upload,
  uploadVersion,
} from '../support/pipeline.js';
import { listKeys, readText } from '../support/s3.js';

const ORDERS = 'id,customer,amount\n1,Ada,10.50\n2,Grace,7.25\n';
const BAD = 'id,customer,amount\n1,Ada,10.50\n2,Grace\n3,Linus,1.00,extra\n4,"Ken,5\n';

describe('the pipeline end to end: S3 upload -> SQS -> local runner -> normalize worker -> S3', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let stack: LocalStackResources;
  let outcomes: RecordOutcome[];
  let unsubscribe: () => void;
  const out = (key: string) => `normalized/${stack.inputBucket}/${key}.ndjson`;
  const quarantine = (key: string) => `quarantine/${stack.inputBucket}/${key}.ndjson`;
  const drain = async (concurrency?: number) => {
    await drainNormalize(clients, stack, { log, ...(concurrency ? { concurrency } : {}) });
  };

  beforeEach(async () => {
    stack = await provisionTestPipeline(clients);
    outcomes = [];
    unsubscribe = onRecordOutcome((o) => outcomes.push(o));
    log.clear();
  });
  afterEach(() => unsubscribe());

  it('processes clean, bad-row, awkward-key, empty and unsupported files, and dead-letters a non-S3 message', async () => {
    await upload(clients, stack.inputBucket, 'incoming/orders.csv', ORDERS);
    await upload(clients, stack.inputBucket, 'incoming/bad rows.csv', BAD);
    await upload(clients, stack.inputBucket, 'incoming/2026 sales+returns/café münchen.csv', ORDERS);
    await upload(clients, stack.inputBucket, 'incoming/empty.csv', '');
    await upload(clients, stack.inputBucket, 'incoming/notes.txt', 'hello');
    await upload(clients, stack.inputBucket, 'elsewhere/ignored.csv', ORDERS); // outside the notification filter
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: stack.queueUrl, MessageBody: '{"orderId":42}' }));

    await drain();

    expect(await readText(clients.s3, stack.outputBucket, out('orders.csv'))).toBe(
      '{"id":"1","customer":"Ada","amount":"10.50"}\n{"id":"2","customer":"Grace","amount":"7.25"}\n',
    );
    expect(await readText(clients.s3, stack.outputBucket, out('2026 sales+returns/café münchen.csv'))).toBe(
      await readText(clients.s3, stack.outputBucket, out('orders.csv')),
    );
    expect(await readText(clients.s3, stack.outputBucket, out('bad rows.csv'))).toBe(
      '{"id":"1","customer":"Ada","amount":"10.50"}\n',
    );
    const q = (await readText(clients.s3, stack.outputBucket, quarantine('bad rows.csv')))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(q.map((e) => [e.line, e.reason])).toEqual([
      [3, 'expected 3 fields, got 2'],
      [4, 'expected 3 fields, got 4'],
      [5, 'unterminated quoted field at end of input'],
    ]);
    expect(await readText(clients.s3, stack.outputBucket, out('empty.csv'))).toBe('');
    const keys = await listKeys(clients.s3, stack.outputBucket);
    expect(keys.filter((k) => !k.startsWith('failures/'))).toEqual(
      [
        out('2026 sales+returns/café münchen.csv'),
        out('bad rows.csv'),
        out('empty.csv'),
        out('orders.csv'),
        quarantine('bad rows.csv'),
      ].sort(),
    );
    // The deployed handler records why it gave up on a message (failures/<queue>/<id>.json, for
    // `rerun redrive`); this file's in-process handler is built without a failure recorder.
    expect(keys.filter((k) => k.startsWith('failures/'))).toHaveLength(testRuntime === TestRuntime.LAMBDA ? 1 : 0);

    const final = new Map(outcomes.map((o) => [o.source?.key ?? o.reason, o]));
    expect(final.get('incoming/notes.txt')).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/unsupported file type/),
    });
    expect(outcomes.some((o) => o.status === 'skipped' && /TestEvent/.test(o.reason))).toBe(true);
    const junk = outcomes.filter((o) => o.status === 'failed');
    expect(junk.length).toBe(2); // maxReceiveCount = 2 receives, then the redrive policy moves it
    expect(junk.every((o) => o.retryable === false && /not an S3 event/.test(o.reason))).toBe(true);
    expect(await queueDepth(clients, stack.dlqUrl)).toBe(1);
    expect(await queueDepth(clients, stack.queueUrl)).toBe(0);
  }, 90_000);

  it('a double full run: the second performs zero output writes and one HEAD per item (requests counted, not assumed)', async () => {
    // Whether a delivery is fresh depends on the time since its event (src/batch/isFreshDelivery.ts):
    // a function timeout of a minute, not the suite's 4 s, keeps this test's figures the same on a
    // loaded machine. The queue's visibility timeout is as long (Lambda requires at least that).
    const minute = {
      ...testTopology,
      normalize: { ...testTopology.normalize, functionTimeoutSeconds: 60, visibilityTimeoutSeconds: 60 },
    };
    // Versioned, as RerunPipeline creates it: S3's events (sent by hand below) then name each write's version.
    const fresh = await provisionTestPipeline(clients, minute, { versionedInput: true });
    const outOf = (key: string) => `normalized/${fresh.inputBucket}/${key.slice('incoming/'.length)}.ndjson`;
    const drainFresh = () => drainNormalize(clients, fresh, { log, t: minute });
    const keys = Array.from({ length: 10 }, (_, i) => `incoming/day ${i}.csv`);
    const etags = new Map<string, string>();
    const versions = new Map<string, string | undefined>();
    const bodyOf = (key: string) => ORDERS.replace('Ada', `Ada ${key}`);
    const uploadedAt = new Date().toISOString();
    for (const key of keys) {
      const { eTag, versionId } = await uploadVersion(clients, fresh.inputBucket, key, bodyOf(key));
      etags.set(key, eTag);
      versions.set(key, versionId);
    }
    // The input bucket is versioned: S3's events name each write's version.
    expect([...versions.values()].every((v) => v !== undefined && v !== 'null')).toBe(true);
    log.clear();
    await drainFresh();
    // First run, S3's own first delivery of each event: GET input + PUT output with If-None-Match: *,
    // nothing before the work and no check after it (the create is the done-check; a removal looks
    // again for a create that raced it, src/batch/removalLookAgain.ts).
    expect(log.operations('S3').sort()).toEqual(keys.flatMap(() => ['GetObject', 'PutObject']).sort());
    // The conditions are in the SDK's input, which only the in-process runtime records (the lambda runtime's
    // proxy records operations); test/integration/processObject.test.ts asserts them too.
    const inProcess = testRuntime === TestRuntime.IN_PROCESS;
    if (inProcess) {
      expect(log.requests.filter((r) => r.operation === 'PutObject').every((r) => r.input.IfNoneMatch === '*')).toBe(
        true,
      );
    }
    const writes = () =>
      log.requests.filter(
        (r) =>
          r.service === 'S3' &&
          ['PutObject', 'UploadPart', 'CompleteMultipartUpload', 'CreateMultipartUpload', 'DeleteObject'].includes(
            r.operation,
          ),
      );

    // Every object again, as `rerun reprocess` sends it (its own send time as the event's time, the
    // listed ETag): a fresh delivery that names the content the output was built from.
    log.clear();
    for (const key of keys)
      await clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: fresh.queueUrl,
          MessageBody: reprocessMessageBody({
            bucket: fresh.inputBucket,
            key,
            etag: etags.get(key) ?? '',
            size: 1,
            sentAt: Date.now(),
          }),
        }),
      );
    await drainFresh();
    expect(writes()).toEqual([]);
    // Second run: the HEAD of the output alone per item (its source ETag is the event's eTag).
    expect(log.operations('S3')).toEqual(keys.map(() => 'HeadObject'));

    // S3 delivering each event a second time (with the eTag and size of the content that caused it, and
    // the time of its upload): a fresh delivery of S3's own, which creates at once; its create answers 412 and
    // the HEAD then finds the output done. Nothing is replaced.
    const store = new S3ObjectStore(clients.s3);
    const heads = () => Promise.all(keys.map((k) => store.head(fresh.outputBucket, outOf(k))));
    const before = await heads();
    log.clear();
    for (const key of keys)
      await sendS3Event(clients, fresh.queueUrl, fresh.inputBucket, key, {
        eTag: etags.get(key),
        ...(versions.get(key) ? { versionId: versions.get(key) } : {}),
        eventTime: uploadedAt,
        size: Buffer.byteLength(bodyOf(key)),
      });
    await drainFresh();
    expect(writes().map((r) => [r.operation, inProcess ? r.input.IfNoneMatch : '*'])).toEqual(
      keys.map(() => ['PutObject', '*']),
    );
    expect(log.operations('S3').sort()).toEqual(keys.flatMap(() => ['GetObject', 'HeadObject', 'PutObject']).sort());
    expect((await heads()).map((h) => h?.etag)).toEqual(before.map((h) => h?.etag));

    // The same events re-sent without an eventTime, as a redrive or a hand-made message may be: not
    // fresh, so each is judged without its eTag: HEAD output, conditional GET of the input (304), and a
    // HEAD of the declared quarantine output that the output does not list (debris of a killed attempt
    // would go).
    log.clear();
    for (const key of keys)
      await sendS3Event(clients, fresh.queueUrl, fresh.inputBucket, key, { eTag: etags.get(key) });
    await drainFresh();
    expect(writes()).toEqual([]);
    // The deployed handler (the Lambda runtime mode) has a failure recorder: a success that is not fresh
    // lists the input's failure-index entries once (a redrive's success clears them).
    const listing = testRuntime === TestRuntime.LAMBDA ? ['ListObjectsV2'] : [];
    expect(log.operations('S3').sort()).toEqual(
      keys.flatMap(() => ['GetObject', 'HeadObject', 'HeadObject', ...listing]).sort(),
    );
  }, 120_000);

  it('duplicate, replayed and out-of-order deliveries converge on the latest content', async () => {
    const key = 'incoming/orders.csv';
    const v1 = await upload(clients, stack.inputBucket, key, ORDERS);
    await upload(clients, stack.inputBucket, key, ORDERS.replace('Grace', 'Grace Hopper'));
    // The event of v1 delivered twice more, late, after v2's.
    await sendS3Event(clients, stack.queueUrl, stack.inputBucket, key, { eTag: v1 });
    await sendS3Event(clients, stack.queueUrl, stack.inputBucket, key, { eTag: v1 });
    await drain();
    expect(await readText(clients.s3, stack.outputBucket, out('orders.csv'))).toContain('Grace Hopper');
    expect(outcomes.filter((o) => o.status === 'failed')).toEqual([]);
  }, 60_000);

  it('an input overwritten between event and processing is processed as it is now; a deleted one is skipped', async () => {
    await upload(clients, stack.inputBucket, 'incoming/changing.csv', ORDERS);
    await upload(clients, stack.inputBucket, 'incoming/changing.csv', ORDERS.replace('Ada', 'Ada Lovelace'));
    await upload(clients, stack.inputBucket, 'incoming/deleted.csv', ORDERS);
    await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.inputBucket, Key: 'incoming/deleted.csv' }));
    await drain();
    expect(await readText(clients.s3, stack.outputBucket, out('changing.csv'))).toContain('Ada Lovelace');
    expect(outcomes.find((o) => o.source?.key === 'incoming/deleted.csv')).toMatchObject({
      status: 'skipped',
      reason: 'input no longer exists: nothing written',
    });
    expect(await listKeys(clients.s3, stack.outputBucket)).toEqual([out('changing.csv')]);
  }, 60_000);

  it('overlapping workers: three runners, every message delivered three times: no duplicate or torn output', async () => {
    const keys = Array.from({ length: 24 }, (_, i) => `incoming/part-${i}.csv`);
    const etags = new Map<string, string>();
    for (const key of keys)
      etags.set(key, await upload(clients, stack.inputBucket, key, ORDERS.replace('Ada', `Ada ${key}`)));
    for (let copy = 0; copy < 2; copy++)
      for (const key of keys) await sendS3Event(clients, stack.queueUrl, stack.inputBucket, key);

    await Promise.all([drain(4), drain(4), drain(4)]);

    const store = new S3ObjectStore(clients.s3);
    expect(await listKeys(clients.s3, stack.outputBucket)).toEqual(
      keys.map((k) => out(k.slice('incoming/'.length))).sort(),
    );
    for (const key of keys) {
      const verdict = judgeOutput(await store.head(stack.outputBucket, out(key.slice('incoming/'.length))), {
        source: { bucket: stack.inputBucket, key },
        codeVersion: NORMALIZE_CODE_VERSION,
      });
      expect(verdict).toMatchObject({ state: OutputState.BUILT, sourceEtag: etags.get(key) });
      expect(await readText(clients.s3, stack.outputBucket, out(key.slice('incoming/'.length)))).toContain(
        `Ada ${key}`,
      );
    }
    expect(outcomes.filter((o) => o.status === 'failed')).toEqual([]);
    expect(outcomes.filter((o) => o.status === 'processed').length).toBeGreaterThanOrEqual(keys.length);
  }, 90_000);
});
