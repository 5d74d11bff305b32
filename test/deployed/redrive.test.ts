import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { summaryKey, summaryLayout } from '../../app/partition/summaryLayout.js';
import { topology } from '../../app/topology.js';
import { judgeOutput, OutputState } from '../../src/done/judgeOutput.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { NORMALIZE_CODE_VERSION } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { queueDepth, upload } from '../support/pipeline.js';
import { readText } from '../support/s3.js';
import { deployedClients, deployedStack, drained, rerunOnStack, waitFor } from './support/deployedStack.js';

const DAY = '2026-04-01';
const INPUT = `incoming/dt=${DAY}/fine.ndjson`;
const BODY = '{"id":"f1","amount":"2.50"}\n{"id":"f2","amount":"3.50"}\n';
const WINDOW = ['--from', DAY, '--to', DAY];

interface RedriveJson {
  moved: number;
  failed: number;
  queues: { method: string; notes: string[]; inspected: { subject: string; reason?: string }[] }[];
}

describe('deployed stack: a poison task reaches the stack’s DLQ with its failure record, and rerun redrive moves it back after the fix', () => {
  const clients = deployedClients();
  const stack = deployedStack();
  const store = new S3ObjectStore(clients.s3);
  const output = deterministicKey({
    prefix: topology.outputPrefix,
    source: { bucket: stack.inputBucket, key: INPUT },
    stripPrefix: topology.inputPrefix,
    suffix: '.ndjson',
  });

  it('a corrupt normalized output fails its summary task for good; after normalize rebuilds it, a redrive publishes the summary', async () => {
    // The DLQ path rests on the queue's RedrivePolicy as deployed (older MiniStack snapshots dropped it).
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.summaryQueueUrl, AttributeNames: ['RedrivePolicy'] }),
    );
    const dlqArn = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.summaryDlqUrl, AttributeNames: ['QueueArn'] }),
    );
    expect(
      JSON.parse(attributes.Attributes?.RedrivePolicy ?? 'null'),
      'the deployed summarize queue has no RedrivePolicy: the emulator dropped it (see docs/EMULATORS.md)',
    ).toEqual({
      deadLetterTargetArn: dlqArn.Attributes?.QueueArn,
      maxReceiveCount: topology.summarize.maxReceiveCount,
    });

    await upload(clients, stack.inputBucket, INPUT, BODY);
    const built = await waitFor('the normalized output', () => store.head(stack.outputBucket, output));
    await drained(clients, stack.queueUrl);
    // A corrupt normalized output (a bad deploy of normalize wrote it, say), replaced by its ETag.
    await clients.s3.send(
      new PutObjectCommand({ Bucket: stack.outputBucket, Key: output, Body: '[1,2]\n', IfMatch: `"${built.etag}"` }),
    );

    // The stack's summarize queue waits 1800 s between receives (6 x its 300 s function timeout) and
    // moves a message to its DLQ after 5 receives. The handler's retry delay brings a task that cannot
    // succeed back in 1 s (createSummarizeHandler), so the poison reaches the DLQ in seconds, with the
    // queue's settings as deployed.
    const failed = await rerunOnStack([
      'backfill',
      ...WINDOW,
      '--wait',
      '--poll-interval',
      '300',
      '--timeout',
      '90',
      '--json',
    ]);
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.json()).toMatchObject({ waited: 'incomplete', notPublished: 1, deadLettered: 1 });

    // The deployed function recorded why it gave up, where rerun redrive reads it.
    const queueName = stack.summaryQueueUrl.split('/').pop() ?? '';
    const records = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: stack.outputBucket, Prefix: `${topology.failurePrefix}${queueName}/` }),
    );
    expect(records.Contents ?? []).toHaveLength(1);
    const record = JSON.parse(await readText(clients.s3, stack.outputBucket, records.Contents?.[0]?.Key ?? ''));
    expect(record).toMatchObject({
      givenUp: 'non-retryable',
      retryable: false,
      // Each receive brought it back in 1 s (the handler's retry delay), not after the queue's 30 minutes.
      reason: expect.stringMatching(/^SummaryInputInvalidError.*\(deferred 1 s\)$/s),
    });

    const dry = await rerunOnStack(['redrive', '--queue', 'summarize', '--dry-run', '--json']);
    expect(dry.json<RedriveJson>().queues[0]?.inspected).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(/^SummaryInputInvalidError: .*line 1 is not a JSON object/),
      }),
    ]);
    expect(await queueDepth(clients, stack.summaryDlqUrl)).toBe(1);

    // The fix: the identical re-upload makes the deployed normalize find its output invalid and rebuild it.
    await upload(clients, stack.inputBucket, INPUT, BODY);
    await waitFor('the rebuilt normalized output', async () => {
      const verdict = judgeOutput(await store.head(stack.outputBucket, output), {
        source: { bucket: stack.inputBucket, key: INPUT },
        codeVersion: NORMALIZE_CODE_VERSION,
      });
      return verdict.state === OutputState.BUILT ? verdict : undefined;
    });
    await drained(clients, stack.queueUrl);

    const moved = await rerunOnStack(['redrive', '--queue', 'summarize', '--json']);
    expect(moved.code, moved.stderr).toBe(0);
    const result = moved.json<RedriveJson>();
    expect(result).toMatchObject({ moved: 1, failed: 0 });
    // MiniStack has no StartMessageMoveTask: the CLI falls back to receive, send, delete.
    expect(result.queues[0]?.notes.join()).toMatch(/unavailable here/);
    const published = await waitFor('the summary published', async () => {
      const status = await rerunOnStack(['status', ...WINDOW, '--json']);
      const counts = status.json<{ counts: { published: number } }>().counts;
      return counts.published === 1 ? counts : undefined;
    });
    expect(published).toMatchObject({ published: 1, missing: 0, stale: 0, invalid: 0 });
    const summary = JSON.parse(
      await readText(clients.s3, stack.outputBucket, summaryKey(summaryLayout(stack.inputBucket), DAY)),
    );
    expect(summary).toMatchObject({ files: 1, records: 2 });
    expect(await queueDepth(clients, stack.summaryDlqUrl)).toBe(0);
  });
});
