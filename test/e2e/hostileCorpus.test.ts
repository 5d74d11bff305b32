import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStackResources } from '../../app/dev/provisionLocalStack.js';
import { listLineage } from '../../app/partition/listPartitions.js';
import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import { summaryLayout } from '../../app/partition/summaryLayout.js';
import { readSummary } from '../../src/done/outputMetadata.js';
import { legacyHashedKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { testClients, uniqueName } from '../support/aws.js';
import { type CorpusFile, hostileCorpus, OVERLONG_KEY } from '../support/hostileCorpus.js';
import { normalizeRunner, provisionTestPipeline, queueDepth, upload } from '../support/pipeline.js';
import { readText } from '../support/s3.js';

/** A message of the corpus: a body a queue may hold, and the outcome it must have. */
interface CorpusMessage {
  readonly name: string;
  readonly body: (bucket: string) => string;
  readonly expected: {
    readonly status: 'processed' | 'skipped' | 'failed';
    readonly reason: RegExp;
    readonly retryable?: boolean;
  };
}

/** An S3 event as an EventBridge rule delivers it to SQS (S3 User Guide, "EventBridge event message structure"). */
const eventBridge = (detailType: string, bucket: string, key: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    version: '0',
    id: '17793124-05d4-b198-2fde-7ededc63b103',
    'detail-type': detailType,
    source: 'aws.s3',
    account: '111122223333',
    time: '2026-11-30T00:00:00Z',
    region: 'us-east-1',
    resources: [`arn:aws:s3:::${bucket}`],
    detail: { version: '0', bucket: { name: bucket }, object: { key }, 'request-id': 'R', requester: '1', ...extra },
  });

const EB_KEY = 'incoming/dt=2026-11-30/via+event bridge.csv';
/** The key as S3 writes it into events: form-URL-encoded (a space is `+`, a plus `%2B`). */
const formEncode = (key: string) => encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
const MESSAGES: readonly CorpusMessage[] = [
  {
    name: 'an EventBridge "Object Created" event (rule -> SQS) for a bucket without S3 notifications',
    body: (bucket) => eventBridge('Object Created', bucket, formEncode(EB_KEY), { reason: 'PutObject' }),
    expected: { status: 'processed', reason: /^output created: records 1, quarantined 0, header 1, blank 0/ },
  },
  {
    name: 'an EventBridge "Object Deleted" event',
    body: (bucket) =>
      eventBridge('Object Deleted', bucket, formEncode(EB_KEY), {
        reason: 'DeleteObject',
        'deletion-type': 'Permanently Deleted',
      }),
    // It maps onto ObjectRemoved, so it takes the deletion path; the object is still there (this corpus
    // never deletes it), so the outputs are kept, and the done-check finds them current.
    expected: {
      status: 'skipped',
      reason:
        /^input exists again \(re-uploaded after the delete\): outputs kept: already done: output is valid and current/,
    },
  },
  {
    name: 'a JSON message that is not an S3 event',
    body: () => '{"orderId":42}',
    expected: { status: 'failed', reason: /^not an S3 event/, retryable: false },
  },
  {
    name: 'a message that is not JSON at all',
    body: () => 'PK\u0003\u0004 this is not json',
    expected: { status: 'failed', reason: /^not an S3 event: message body is not JSON/, retryable: false },
  },
  {
    name: 'an S3 event with an empty Records array',
    body: () => '{"Records":[]}',
    expected: { status: 'failed', reason: /empty Records array/, retryable: false },
  },
];

describe('the hostile corpus through the real pipeline (upload -> notification -> SQS -> runner -> worker -> S3)', () => {
  const clients = testClients();
  const store = new S3ObjectStore(clients.s3);
  const corpus = hostileCorpus();
  let stack: LocalStackResources;
  let ebBucket: string;
  const outcomes: RecordOutcome[] = [];
  const messageIds = new Map<string, string>();
  let unsubscribe: () => void = () => {};
  const legacyOf = (prefix: string) =>
    legacyHashedKey({
      prefix,
      source: { bucket: stack.inputBucket, key: `incoming/${OVERLONG_KEY}` },
      stripPrefix: 'incoming/',
      suffix: '.ndjson',
    }) ?? '';

  beforeAll(async () => {
    stack = await provisionTestPipeline(clients);
    // EventBridge-enabled buckets send no S3 notification to our queue: the rule's messages are all it gets.
    ebBucket = uniqueName('eb');
    await clients.s3.send(new CreateBucketCommand({ Bucket: ebBucket }));
    await upload(clients, ebBucket, EB_KEY, 'id,name\n1,Ada\n');
    // Outputs an earlier release wrote for the overlong key at the pre-partition hashed key, outside its day.
    for (const prefix of ['normalized/', 'quarantine/']) {
      const legacy = legacyOf(prefix);
      await upload(clients, stack.outputBucket, legacy, 'left by an earlier release\n');
    }
    unsubscribe = onRecordOutcome((o) => outcomes.push(o));
    for (const file of corpus) await upload(clients, stack.inputBucket, `incoming/${file.key}`, file.body);
    for (const message of MESSAGES) {
      const sent = await clients.sqs.send(
        new SendMessageCommand({ QueueUrl: stack.queueUrl, MessageBody: message.body(ebBucket) }),
      );
      messageIds.set(message.name, sent.MessageId ?? '');
    }
    await normalizeRunner(clients, stack).runUntilDrained({ timeoutMs: 120_000 });
  }, 180_000);
  afterAll(() => unsubscribe());

  it(`holds ${corpus.length} files and ${MESSAGES.length} messages, each with one expected outcome`, () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30);
    expect(new Set(corpus.map((f) => f.key)).size).toBe(corpus.length);
  });

  const outcomeOf = (file: CorpusFile) => {
    const mine = outcomes.filter(
      (o) => o.source?.key === `incoming/${file.key}` && o.source.bucket === stack.inputBucket,
    );
    expect(mine.length, `one outcome for ${file.key}`).toBe(1);
    return mine[0] as RecordOutcome;
  };

  it.each(corpus.map((file) => [file.name, file] as const))('%s', async (_, file) => {
    const outcome = outcomeOf(file);
    expect(outcome.status).toBe(file.expected.status);
    if (file.expected.reason) expect(outcome.reason).toMatch(file.expected.reason);
    if (file.expected.status !== 'processed') {
      expect(
        outcome.outputKey === undefined || (await store.head(stack.outputBucket, outcome.outputKey)) === undefined,
      ).toBe(true);
      return;
    }
    const outputKey = outcome.outputKey ?? '';
    const head = await store.head(stack.outputBucket, outputKey);
    if (!head) throw new Error(`no output at ${outputKey}`);
    const summary = readSummary(head.metadata);
    for (const [name, want] of Object.entries(file.expected.summary ?? {})) {
      if (typeof want === 'string') expect(summary[name], name).toBe(want);
      else expect(summary[name], name).toMatch(want);
    }
    // The accounting holds in S3 too: the output and the quarantine hold exactly the counted lines.
    const lines = (await readText(clients.s3, stack.outputBucket, outputKey)).split('\n').filter((l) => l !== '');
    expect(String(lines.length)).toBe(summary.records);
    const quarantineKey = outputKey.replace(/^normalized\//, 'quarantine/');
    const quarantined = Number(summary.quarantined);
    const entries =
      quarantined === 0
        ? []
        : (await readText(clients.s3, stack.outputBucket, quarantineKey))
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as { line: number; reason: string });
    expect(entries.length).toBe(quarantined);
    if (quarantined === 0) expect(await store.head(stack.outputBucket, quarantineKey)).toBeUndefined();
    if (file.expected.quarantine) {
      expect(entries.length).toBe(file.expected.quarantine.length);
      for (const [i, [line, reason]] of file.expected.quarantine.entries()) {
        expect(entries[i]?.line).toBe(line);
        if (typeof reason === 'string') expect(entries[i]?.reason).toBe(reason);
        else expect(entries[i]?.reason).toMatch(reason);
      }
    }
    // The outcome line carries the same counts an operator reads.
    expect(outcome.reason).toMatch(
      new RegExp(
        `records ${summary.records}, quarantined ${summary.quarantined}, header ${summary.header}, blank ${summary.blank}`,
      ),
    );
    // Garbage is never reported as clean success: a rejected file names why, and quarantines it.
    if (summary.rejected) expect(outcome.reason).toContain(`rejected ${summary.rejected}`);
    file.expected.output?.(lines.map((l) => JSON.parse(l)));
  });

  it('an overlong key is hashed inside its partition; the day lists it, and the earlier hashed outputs are gone', async () => {
    const file = corpus.find((f) => f.key === OVERLONG_KEY);
    if (!file) throw new Error('the corpus has no overlong key');
    const outputKey = outcomeOf(file).outputKey ?? '';
    expect(outputKey).toMatch(
      new RegExp(`^normalized/${stack.inputBucket}/dt=2026-11-30/_long/[0-9a-f]{64}\\.ndjson$`),
    );
    const lineage = await listLineage(
      new S3PartitionStore(clients.s3),
      stack.outputBucket,
      summaryLayout(stack.inputBucket),
      '2026-11-30',
    );
    expect(lineage.map((e) => e.path)).toContain(outputKey.slice(`normalized/${stack.inputBucket}/`.length));
    for (const prefix of ['normalized/', 'quarantine/']) {
      expect(await store.head(stack.outputBucket, legacyOf(prefix)), prefix).toBeUndefined();
    }
  });

  it.each(MESSAGES.map((message) => [message.name, message] as const))('%s', (_, message) => {
    const mine = outcomes.filter((o) => o.messageId === messageIds.get(message.name));
    expect(mine.length).toBeGreaterThanOrEqual(1);
    for (const outcome of mine) {
      expect(outcome.status).toBe(message.expected.status);
      expect(outcome.reason).toMatch(message.expected.reason);
      if (message.expected.retryable !== undefined) expect(outcome.retryable).toBe(message.expected.retryable);
    }
  });

  it('dead-letters only the messages that are not S3 events', async () => {
    expect(await queueDepth(clients, stack.dlqUrl)).toBe(MESSAGES.filter((m) => m.expected.status === 'failed').length);
    expect(await queueDepth(clients, stack.queueUrl)).toBe(0);
  });
});
