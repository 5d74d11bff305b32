import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureQueue } from '../../local/provision.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { RerunError } from '../../src/errors.js';
import type { FailedDelivery, FailureRecorder } from '../../src/failures/FailureRecorder.js';
import { FAILURE_INDEX_FOLDER, inputKeyHash } from '../../src/failures/failureIndex.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { createLogger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys } from '../support/s3.js';

const failed = (o: Partial<RecordOutcome>): RecordOutcome => ({
  messageId: 'm-1',
  status: 'failed',
  reason: 'Error: boom',
  retryable: true,
  receiveCount: 1,
  ...o,
});

describe('S3FailureRecorder', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let bucket: string;
  let queueArn: string;
  const queueName = uniqueName('fr-q');

  beforeAll(async () => {
    bucket = await createBucket(clients.s3, uniqueName('fr'));
    // The provisioning of rerun dev: a DLQ, and a queue whose redrive policy moves messages there.
    const dlq = await ensureQueue(clients, `${queueName}-dlq`, {});
    const redrive = { deadLetterTargetArn: dlq.arn, maxReceiveCount: 3 };
    queueArn = (await ensureQueue(clients, queueName, { RedrivePolicy: JSON.stringify(redrive) })).arn;
  });

  const recorder = () =>
    new S3FailureRecorder({
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      bucket,
      now: () => Date.parse('2026-01-06T01:15:00Z'),
    });
  const delivery = (o: Partial<FailedDelivery> & { outcome: RecordOutcome }): FailedDelivery => ({
    queueArn,
    messageId: o.outcome.messageId,
    receiveCount: o.outcome.receiveCount ?? 1,
    ...o,
  });

  it("records the last receive the queue's redrive policy allows (read from the queue), not earlier retryable ones", async () => {
    const r = recorder();
    log.clear();
    expect(await r.record(delivery({ outcome: failed({ messageId: 'a', receiveCount: 2 }) }))).toBeUndefined();
    const key = await r.record(
      delivery({ outcome: failed({ messageId: 'a', receiveCount: 3 }), subject: 's3://in/incoming/a.csv' }),
    );
    expect(key).toBe(`failures/${queueName}/a.json`);
    expect(await r.read(queueName, 'a')).toEqual({
      schema: 'rerun.failure/1',
      queueName,
      queueArn,
      messageId: 'a',
      receiveCount: 3,
      maxReceiveCount: 3,
      givenUp: 'last-receive',
      retryable: true,
      reason: 'Error: boom',
      subject: 's3://in/incoming/a.csv',
      failedAt: '2026-01-06T01:15:00.000Z',
    });
    // The redrive policy was read once for both records (cached per queue).
    expect(log.count({ operation: 'GetQueueAttributes' })).toBe(1);
    expect(log.count({ operation: 'GetQueueUrl' })).toBe(1);
  });

  it('records a non-retryable failure at once, and replaces it with If-Match on a later give-up', async () => {
    const r = recorder();
    await r.record(delivery({ outcome: failed({ messageId: 'b', retryable: false, reason: 'EventParseError: x' }) }));
    expect(await r.read(queueName, 'b')).toMatchObject({ givenUp: 'non-retryable', receiveCount: 1 });
    log.clear();
    await r.record(
      delivery({
        outcome: failed({ messageId: 'b', retryable: false, receiveCount: 3, reason: 'EventParseError: y' }),
      }),
    );
    expect(await r.read(queueName, 'b')).toMatchObject({ receiveCount: 3, reason: 'EventParseError: y' });
    const puts = log.requests.filter((q) => q.operation === 'PutObject').map((q) => q.input);
    expect(puts.map((p) => [p.IfNoneMatch, typeof p.IfMatch])).toEqual([
      ['*', 'undefined'],
      [undefined, 'string'],
    ]);
  });

  it('never throws: a recording error is logged and the batch result stays as it was', async () => {
    const broken = new S3FailureRecorder({
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      bucket: 'no-such-bucket-rerun',
    });
    await expect(broken.record(delivery({ outcome: failed({ retryable: false }) }))).resolves.toBeUndefined();
    expect(await recorder().read(queueName, 'never-failed')).toBeUndefined();
  });

  it('createSqsBatchHandler hands every failed record to the recorder, with its subject and receive count', async () => {
    const seen: FailedDelivery[] = [];
    const spy: FailureRecorder = {
      record: async (f) => {
        seen.push(f);
        return undefined;
      },
    };
    const worker = defineWorker({
      name: 'probe',
      codeVersion: '1',
      outputBucket: bucket,
      outputKey: (s) => `out/${s.key}`,
      async transform() {
        throw new Error('transform failed');
      },
    });
    const handler = createSqsBatchHandler({
      worker,
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      failureRecorder: spy,
    });
    const record = (id: string, body: string, receives: string): SQSRecord =>
      ({
        messageId: id,
        receiptHandle: 'r',
        body,
        attributes: { ApproximateReceiveCount: receives },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: 'us-east-1',
      }) as unknown as SQSRecord;
    const s3Event = JSON.stringify({
      Records: [
        {
          eventVersion: '2.1',
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: bucket }, object: { key: 'in/a.csv' } },
        },
      ],
    });
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/a.csv', Body: 'x' }));
    const context = { getRemainingTimeInMillis: () => 60_000, awsRequestId: 'req' } as unknown as Context;
    const response = await handler(
      {
        Records: [
          record('ok', '{"Event":"s3:TestEvent"}', '1'),
          record('bad', s3Event, '3'),
          record('junk', 'nope', '1'),
        ],
      },
      context,
    );
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['bad', 'junk']);
    expect(seen.map((f) => [f.messageId, f.receiveCount, f.subject, f.outcome.retryable]).sort()).toEqual([
      ['bad', 3, `s3://${bucket}/in/a.csv`, true],
      ['junk', 1, undefined, false],
    ]);
    expect(await listKeys(clients.s3, bucket, `failures/${queueName}/`)).toEqual([
      `failures/${queueName}/a.json`,
      `failures/${queueName}/b.json`,
    ]);
    // The record of an S3 object is indexed by that object, under its day (none here: '_').
    expect(await listKeys(clients.s3, bucket, 'failures/.by-input/')).toEqual([
      `failures/.by-input/in/_/${inputKeyHash('incoming/a.csv')}/${queueName}.a.last-receive`,
    ]);
  });

  it('keeps the error behind a give-up, with its stack and cause, in the record and in the outcome’s log line', async () => {
    const lines: string[] = [];
    const worker = defineWorker({
      name: 'probe',
      codeVersion: '1',
      outputBucket: bucket,
      outputKey: (s) => `out/${s.key}`,
      async transform() {
        const cause = Object.assign(new Error('Access Denied'), { name: 'AccessDenied', Code: 'AccessDenied' });
        throw new RerunError('could not read the lookup table', { retryable: false, cause });
      },
    });
    const handler = createSqsBatchHandler({
      worker,
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      failureRecorder: recorder(),
      logger: createLogger({ sink: (l) => lines.push(l) }),
    });
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/caused.csv', Body: 'x' }));
    const body = JSON.stringify({
      Records: [
        {
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: bucket }, object: { key: 'in/caused.csv' } },
        },
      ],
    });
    const response = await handler(
      {
        Records: [
          {
            messageId: 'caused',
            receiptHandle: 'r',
            body,
            attributes: { ApproximateReceiveCount: '1' },
            eventSourceARN: queueArn,
          } as unknown as SQSRecord,
        ],
      },
      { getRemainingTimeInMillis: () => 60_000, awsRequestId: 'req' } as unknown as Context,
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'caused' }]);
    const error = {
      name: 'RerunError',
      message: 'could not read the lookup table',
      stack: expect.stringContaining('failureRecorder.test.ts'),
      cause: { name: 'AccessDenied', message: 'Access Denied', code: 'AccessDenied' },
    };
    expect(await recorder().read(queueName, 'caused')).toMatchObject({
      givenUp: 'non-retryable',
      reason: 'RerunError: could not read the lookup table',
      error,
    });
    const failedLine = lines.map((l) => JSON.parse(l)).find((l) => l.message === 'record failed');
    expect(failedLine).toMatchObject({ messageId: 'caused', error });
  });

  const record = (id: string, body: string, receives: string): SQSRecord =>
    ({
      messageId: id,
      receiptHandle: 'r',
      body,
      attributes: { ApproximateReceiveCount: receives },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: 'us-east-1',
    }) as unknown as SQSRecord;
  const s3Event = (key: string) =>
    JSON.stringify({
      Records: [
        {
          eventVersion: '2.1',
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: bucket }, object: { key } },
        },
      ],
    });
  const context = { getRemainingTimeInMillis: () => 60_000, awsRequestId: 'req' } as unknown as Context;
  /** A worker that runs `during` while its transform runs, then does what `then` says. */
  const handlerWith = (during: (key: string) => Promise<void>, then: 'succeed' | 'fail' | 'refuse' | 'hang') =>
    createSqsBatchHandler({
      worker: defineWorker({
        name: 'last-attempt',
        codeVersion: '1',
        outputBucket: bucket,
        outputKey: (s) => `out/${s.key}`,
        async transform(_input, { output }) {
          await during('');
          if (then === 'fail') throw new Error('transform failed');
          if (then === 'refuse') throw new RerunError('input refused', { retryable: false });
          if (then === 'hang') await new Promise(() => {});
          await output.write('ok\n');
          return {};
        },
      }),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      failureRecorder: recorder(),
    });

  describe('the last attempt', () => {
    it('is on record while it runs, and a crash or timeout leaves that record: "last attempt started, no outcome recorded"', async () => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/hang.csv', Body: 'x' }));
      let seenDuring: unknown;
      let reached!: () => void;
      const inTransform = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const handler = handlerWith(async () => {
        seenDuring = await recorder().read(queueName, 'hang');
        reached();
      }, 'hang');
      // The invocation never ends, as when Lambda times it out or the process is killed.
      void handler({ Records: [record('hang', s3Event('in/hang.csv'), '3')] }, context);
      await inTransform;
      expect(seenDuring).toMatchObject({
        messageId: 'hang',
        receiveCount: 3,
        maxReceiveCount: 3,
        givenUp: 'last-receive',
        retryable: true,
        reason: 'last attempt started, no outcome recorded: crashed or timed out',
        subject: `s3://${bucket}/in/hang.csv`,
      });
      expect(
        await listKeys(clients.s3, bucket, `failures/.by-input/${bucket}/_/${inputKeyHash('in/hang.csv')}/`),
      ).toEqual([`failures/.by-input/${bucket}/_/${inputKeyHash('in/hang.csv')}/${queueName}.hang.last-receive`]);
    });

    it('a last attempt that fails completes its record in place with the reason (If-Match on the provisional ETag)', async () => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/fail.csv', Body: 'x' }));
      log.clear();
      const response = await handlerWith(async () => {}, 'fail')(
        { Records: [record('fail', s3Event('in/fail.csv'), '3')] },
        context,
      );
      expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'fail' }]);
      expect(await recorder().read(queueName, 'fail')).toMatchObject({
        reason: 'Error: transform failed',
        givenUp: 'last-receive',
      });
      const puts = log.requests
        .filter((q) => q.operation === 'PutObject' && String(q.input.Key).startsWith(`failures/${queueName}/`))
        .map((q) => [q.input.IfNoneMatch, typeof q.input.IfMatch]);
      expect(puts).toEqual([
        ['*', 'undefined'],
        [undefined, 'string'],
      ]);
    });

    it('a last attempt that succeeds removes its provisional record with a conditional delete; earlier receives write none', async () => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/ok.csv', Body: 'x' }));
      let seenDuring: unknown;
      log.clear();
      const handler = handlerWith(async () => {
        seenDuring = await recorder().read(queueName, 'ok');
      }, 'succeed');
      const response = await handler(
        { Records: [record('ok', s3Event('in/ok.csv'), '3'), record('early', s3Event('in/ok.csv'), '2')] },
        context,
      );
      expect(response.batchItemFailures).toEqual([]);
      expect(seenDuring).toMatchObject({ reason: 'last attempt started, no outcome recorded: crashed or timed out' });
      expect(await recorder().read(queueName, 'ok')).toBeUndefined();
      expect(
        await listKeys(clients.s3, bucket, `failures/.by-input/${bucket}/_/${inputKeyHash('in/ok.csv')}/`),
      ).toEqual([]);
      expect(await recorder().read(queueName, 'early')).toBeUndefined();
      const deletes = log.requests.filter(
        (q) => q.operation === 'DeleteObject' && String(q.input.Key).startsWith(`failures/${queueName}/`),
      );
      expect(deletes.map((q) => [q.input.Key, typeof q.input.IfMatch])).toEqual([
        [`failures/${queueName}/ok.json`, 'string'],
      ]);
    });

    it("a last attempt that succeeds without an output removes an earlier receive's non-retryable record and its index entry", async () => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/late-skip.csv', Body: 'x' }));
      const entries = `failures/.by-input/${bucket}/_/${inputKeyHash('in/late-skip.csv')}/`;
      await handlerWith(async () => {}, 'refuse')(
        { Records: [record('late-skip', s3Event('in/late-skip.csv'), '1')] },
        context,
      );
      expect(await listKeys(clients.s3, bucket, entries)).toEqual([`${entries}${queueName}.late-skip.non-retryable`]);
      // The last receive finds that record (it keeps it instead of a provisional one), and the worker
      // now skips the input by its key: a success with no output, so no `covered` input to clean up.
      const skipping = createSqsBatchHandler({
        worker: defineWorker({
          name: 'late-skip',
          codeVersion: '1',
          outputBucket: bucket,
          outputKey: (src) => `out/${src.key}`,
          skipReason: () => 'no longer a supported type',
          async transform() {
            return {};
          },
        }),
        store: new S3ObjectStore(clients.s3),
        sqs: clients.sqs,
        failureRecorder: recorder(),
      });
      const response = await skipping({ Records: [record('late-skip', s3Event('in/late-skip.csv'), '3')] }, context);
      expect(response.batchItemFailures).toEqual([]);
      expect(await recorder().read(queueName, 'late-skip')).toBeUndefined();
      expect(await listKeys(clients.s3, bucket, entries)).toEqual([]);
    });

    it('a conditional delete leaves a record that another writer replaced since', async () => {
      const r = recorder();
      const started = await r.attemptStarted({ queueArn, messageId: 'raced', receiveCount: 3 });
      expect(started).toBeDefined();
      await r.record(delivery({ outcome: failed({ messageId: 'raced', receiveCount: 3, reason: 'Error: other' }) }));
      await r.attemptSucceeded(started as NonNullable<typeof started>);
      expect(await r.read(queueName, 'raced')).toMatchObject({ reason: 'Error: other' });
    });

    it('a last attempt whose record was written but not indexed (the index PUT failed, perhaps applied) still removes both when it succeeds', async () => {
      // The index PUT reaches S3 and its answer is lost on every attempt: the entry exists, the
      // store throws. The record written before it must still be handed to the attempt's end.
      class IndexAnswerLost extends S3ObjectStore {
        override async put(...args: Parameters<S3ObjectStore['put']>): ReturnType<S3ObjectStore['put']> {
          const result = await super.put(...args);
          if (args[1].includes(FAILURE_INDEX_FOLDER)) throw new Error('socket hang up');
          return result;
        }
      }
      const r = new S3FailureRecorder({ store: new IndexAnswerLost(clients.s3), sqs: clients.sqs, bucket });
      const started = await r.attemptStarted({
        queueArn,
        messageId: 'unindexed',
        receiveCount: 3,
        subject: 's3://in/incoming/dt=2026-01-05/unindexed.csv',
      });
      expect(started).toMatchObject({ key: `failures/${queueName}/unindexed.json` });
      expect(await listKeys(clients.s3, bucket, `failures/${FAILURE_INDEX_FOLDER}`)).toContainEqual(
        expect.stringContaining('unindexed'),
      );
      await r.attemptSucceeded(started as NonNullable<typeof started>);
      expect(await r.read(queueName, 'unindexed')).toBeUndefined();
      expect(
        (await listKeys(clients.s3, bucket, `failures/${FAILURE_INDEX_FOLDER}`)).filter((k) => k.includes('unindexed')),
      ).toEqual([]);
    });

    it('a last attempt that succeeds tries its removal again when a delete fails after the SDK gave up (the first applied, its answer lost)', async () => {
      // Two deletes in a row fail as a dropped connection would: the first after S3 applied it.
      let failing = 2;
      class DeletesFail extends S3ObjectStore {
        override async deleteIfMatch(...args: Parameters<S3ObjectStore['deleteIfMatch']>) {
          if (failing === 2) await super.deleteIfMatch(...args);
          if (failing-- > 0) throw new Error('socket hang up');
          return super.deleteIfMatch(...args);
        }
      }
      const r = new S3FailureRecorder({ store: new DeletesFail(clients.s3), sqs: clients.sqs, bucket });
      const started = await r.attemptStarted({
        queueArn,
        messageId: 'shaky',
        receiveCount: 3,
        subject: 's3://in/incoming/dt=2026-01-05/shaky.csv',
      });
      expect(started).toBeDefined();
      await r.attemptSucceeded(started as NonNullable<typeof started>);
      expect(failing).toBeLessThan(0);
      expect(await r.read(queueName, 'shaky')).toBeUndefined();
      expect(
        (await listKeys(clients.s3, bucket, `failures/${FAILURE_INDEX_FOLDER}`)).filter((k) => k.includes('shaky')),
      ).toEqual([]);
    });

    it('a deferral that spends the last receive says so in the record', async () => {
      const key = await recorder().record(
        delivery({
          outcome: failed({
            messageId: 'deferred',
            receiveCount: 3,
            reason: 'LedgerInProgressError: in progress elsewhere (deferred 30 s)',
            deferredSeconds: 30,
          }),
        }),
      );
      expect(key).toBe(`failures/${queueName}/deferred.json`);
      expect((await recorder().read(queueName, 'deferred'))?.reason).toBe(
        "receives used up by deferrals: the last receive (3 of 3) was deferred 30 s, so the queue's redrive policy moves it to the DLQ when the deferral ends; last reason: LedgerInProgressError: in progress elsewhere (deferred 30 s)",
      );
    });
  });
  describe('a retry that succeeds', () => {
    it('removes the record and index entry an earlier receive wrote (a non-retryable failure SQS retried), with conditional deletes', async () => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/retried.csv', Body: 'x' }));
      const entries = `failures/.by-input/${bucket}/_/${inputKeyHash('in/retried.csv')}/`;
      const first = await handlerWith(async () => {}, 'refuse')(
        { Records: [record('retried', s3Event('in/retried.csv'), '1')] },
        context,
      );
      expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'retried' }]);
      expect(await recorder().read(queueName, 'retried')).toMatchObject({ givenUp: 'non-retryable', receiveCount: 1 });
      expect(await listKeys(clients.s3, bucket, entries)).toEqual([`${entries}${queueName}.retried.non-retryable`]);
      log.clear();
      // SQS delivers a message the worker gave up on again until the DLQ; this time it succeeds, so
      // the message is deleted and never reaches the DLQ: its record must not say it does.
      const second = await handlerWith(async () => {}, 'succeed')(
        { Records: [record('retried', s3Event('in/retried.csv'), '2')] },
        context,
      );
      expect(second.batchItemFailures).toEqual([]);
      expect(await recorder().read(queueName, 'retried')).toBeUndefined();
      expect(await listKeys(clients.s3, bucket, entries)).toEqual([]);
      const deletes = log.requests.filter(
        (q) => q.operation === 'DeleteObject' && String(q.input.Key).startsWith('failures/'),
      );
      expect(deletes.map((q) => typeof q.input.IfMatch)).toEqual(['string', 'string']);
    });

    it("removes only what an earlier receive wrote: a later receive's record (another delivery's) stands, and a first receive reads none", async () => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/later.csv', Body: 'x' }));
      const r = recorder();
      // 'earlier' was given up on at receive 1; 'later' has a concurrent delivery's last attempt
      // (receive 3 of 3) running, whose provisional record must stand.
      await r.record(delivery({ outcome: failed({ messageId: 'earlier', retryable: false }) }));
      await r.attemptStarted({ queueArn, messageId: 'later', receiveCount: 3 });
      await handlerWith(async () => {}, 'succeed')(
        { Records: [record('earlier', s3Event('in/later.csv'), '2'), record('later', s3Event('in/later.csv'), '2')] },
        context,
      );
      expect(await recorder().read(queueName, 'earlier')).toBeUndefined();
      expect(await recorder().read(queueName, 'later')).toMatchObject({ receiveCount: 3 });
      log.clear();
      await handlerWith(async () => {}, 'succeed')(
        { Records: [record('fresh', s3Event('in/later.csv'), '1')] },
        context,
      );
      // One listing of the input's index entries (none here), and nothing else under failures/.
      expect(
        log.requests
          .filter((q) => String(q.input.Key ?? q.input.Prefix ?? '').startsWith('failures/'))
          .map((q) => [q.operation, q.input.Prefix]),
      ).toEqual([['ListObjectsV2', `failures/.by-input/${bucket}/_/${inputKeyHash('in/later.csv')}/`]]);
    });

    it("S3's own fresh delivery of a new write that succeeds lists no failure index: the common case costs nothing more", async () => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/new.csv', Body: 'x' }));
      log.clear();
      const fresh = JSON.parse(s3Event('in/new.csv')) as { Records: Record<string, unknown>[] };
      fresh.Records = fresh.Records.map((r) => ({ ...r, eventTime: new Date().toISOString() }));
      const response = await handlerWith(async () => {}, 'succeed')(
        { Records: [record('s3-fresh', JSON.stringify(fresh), '1')] },
        context,
      );
      expect(response.batchItemFailures).toEqual([]);
      expect(log.requests.filter((q) => String(q.input.Key ?? q.input.Prefix ?? '').startsWith('failures/'))).toEqual(
        [],
      );
    });
  });

  describe('a success supersedes the earlier failures of its input', () => {
    /**
     * A handler whose recorder's S3 client runs `race` once, just before the first request of the
     * kind named (the cleanup's listing of the index, or its first delete of an entry), as a concurrent
     * writer would land at that moment.
     */
    const racingHandler = (at: 'ListObjectsV2' | 'DeleteEntry', race: () => Promise<void>) => {
      let raced = false;
      const racy = new Proxy(clients.s3, {
        get(target, name, receiver) {
          if (name !== 'send') return Reflect.get(target, name, receiver);
          return async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
            const kind = command.constructor.name;
            const key = String(command.input.Key ?? command.input.Prefix ?? '');
            const hit =
              (at === 'ListObjectsV2' && kind === 'ListObjectsV2Command' && key.includes('.by-input/')) ||
              (at === 'DeleteEntry' && kind === 'DeleteObjectCommand' && key.includes('.by-input/'));
            if (hit && !raced) {
              raced = true;
              await race();
            }
            return target.send(command as unknown as Parameters<S3Client['send']>[0]);
          };
        },
      });
      return createSqsBatchHandler({
        worker: defineWorker({
          name: 'supersede',
          codeVersion: '1',
          outputBucket: bucket,
          outputKey: (src) => `out/${src.key}`,
          async transform(_input, { output }) {
            await output.write('ok\n');
            return {};
          },
        }),
        store: new S3ObjectStore(clients.s3),
        sqs: clients.sqs,
        failureRecorder: new S3FailureRecorder({ store: new S3ObjectStore(racy), sqs: clients.sqs, bucket }),
      });
    };
    const entriesOf = (key: string) => `failures/.by-input/${bucket}/dt=2026-01-07/${inputKeyHash(key)}/`;
    /** A give-up of message `id` about `key`, recorded as the worker records one. */
    const gaveUp = (id: string, key: string, retryable: boolean) =>
      recorder().record(
        delivery({
          outcome: failed({ messageId: id, retryable, receiveCount: 3 }),
          receiveCount: 3,
          subject: `s3://${bucket}/${key}`,
        }),
      );

    it('a redriven message (a new id, first receive) that succeeds removes the index entries of every earlier failure of its input', async () => {
      const key = 'in/dt=2026-01-07/redriven.csv';
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'v1' }));
      await gaveUp('dead-1', key, true);
      await gaveUp('dead-2', key, false);
      expect(await listKeys(clients.s3, bucket, entriesOf(key))).toEqual([
        `${entriesOf(key)}${queueName}.dead-1.last-receive`,
        `${entriesOf(key)}${queueName}.dead-2.non-retryable`,
      ]);
      log.clear();
      const response = await racingHandler('ListObjectsV2', async () => {})(
        { Records: [record('redriven', s3Event(key), '1')] },
        context,
      );
      expect(response.batchItemFailures).toEqual([]);
      expect(await listKeys(clients.s3, bucket, entriesOf(key))).toEqual([]);
      const deletes = log.requests.filter((q) => q.operation === 'DeleteObject');
      expect(deletes.map((q) => [String(q.input.Key).startsWith(entriesOf(key)), typeof q.input.IfMatch])).toEqual([
        [true, 'string'],
        [true, 'string'],
      ]);
      // The records stay: `rerun redrive` reads them by the id of a message still in a DLQ.
      expect(await recorder().read(queueName, 'dead-1')).toMatchObject({ givenUp: 'last-receive' });
    });

    it('a newer content that fails before the success looks at its input keeps its entry (and the older one)', async () => {
      const key = 'in/dt=2026-01-07/race-before.csv';
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'v1' }));
      await gaveUp('old', key, true);
      // The output is built from v1; as the cleanup lists the entries, v2 is uploaded and fails.
      const response = await racingHandler('ListObjectsV2', async () => {
        await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'v2' }));
        await gaveUp('newer', key, false);
      })({ Records: [record('redriven', s3Event(key), '1')] }, context);
      expect(response.batchItemFailures).toEqual([]);
      expect(await listKeys(clients.s3, bucket, entriesOf(key))).toEqual([
        `${entriesOf(key)}${queueName}.newer.non-retryable`,
        `${entriesOf(key)}${queueName}.old.last-receive`,
      ]);
    });

    it('a failure that lands after the success looked at its input is not listed, and stands', async () => {
      const key = 'in/dt=2026-01-07/race-after.csv';
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'v1' }));
      await gaveUp('old', key, true);
      // The listing and the HEAD saw v1 current; v2 lands and fails just before the first delete.
      const response = await racingHandler('DeleteEntry', async () => {
        await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'v2' }));
        await gaveUp('newer', key, false);
      })({ Records: [record('redriven', s3Event(key), '1')] }, context);
      expect(response.batchItemFailures).toEqual([]);
      expect(await listKeys(clients.s3, bucket, entriesOf(key))).toEqual([
        `${entriesOf(key)}${queueName}.newer.non-retryable`,
      ]);
    });
  });
});
