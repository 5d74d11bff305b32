import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import { summaryKey, summaryLayout } from '../../app/partition/summaryLayout.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { testClients } from '../support/aws.js';
import { queueDepth, sendS3Event, upload } from '../support/pipeline.js';
import { readText } from '../support/s3.js';
import {
  normalizeStageRunner,
  ordersCsv,
  provisionTwoStagePipeline,
  rerunCli,
  summarizeStageRunner,
  type TwoStagePipeline,
  twoStageTopology,
} from '../support/summaryPipeline.js';

const INPUTS: Record<string, string> = {
  'incoming/orders.csv': ordersCsv('o', 3, { bad: true }),
  'incoming/poison-1.csv': ordersCsv('p1', 2),
  'incoming/dt=2026-01-05/poison-2.csv': ordersCsv('p2', 1, { bad: true }),
  'incoming/dt=2026-01-05/fine.ndjson': '{"id":"f","amount":1}\n',
};

interface DeadLetterJson {
  messageId: string;
  subject: string;
  reason?: string;
  receiveCount?: number;
}
interface RedriveJson {
  dryRun: boolean;
  inspected: number;
  moved: number;
  failed: number;
  queues: { method: string; moved: number; notes: string[]; inspected: DeadLetterJson[] }[];
}

describe('rerun redrive: a DLQ is a button, not a ritual', () => {
  const clients = testClients();

  /** Every object under the pipeline's output prefixes, keyed relative to the input bucket, with its bytes. */
  const outputs = async (p: TwoStagePipeline) => {
    const found: Record<string, string> = {};
    for (const prefix of [`normalized/${p.stack.inputBucket}/`, `quarantine/${p.stack.inputBucket}/`]) {
      for (const o of await new S3PartitionStore(clients.s3).listAll(p.stack.outputBucket, { prefix })) {
        found[`${prefix.split('/')[0]}/${o.key.slice(prefix.length)}`] = await readText(
          clients.s3,
          p.stack.outputBucket,
          o.key,
        );
      }
    }
    return found;
  };
  const uploadAll = async (p: TwoStagePipeline) => {
    for (const [key, body] of Object.entries(INPUTS)) await upload(clients, p.stack.inputBucket, key, body);
  };

  it('poison inputs go to the DLQ with their reason; --dry-run changes nothing; after the fix a redrive equals a clean run', async () => {
    const clean = await provisionTwoStagePipeline(clients);
    await uploadAll(clean);
    await normalizeStageRunner(clients, clean).runUntilDrained({ timeoutMs: 60_000 });

    const p = await provisionTwoStagePipeline(clients);
    await uploadAll(p);
    const real = createNormalizeWorker({ outputBucket: p.stack.outputBucket, prefixes: p.t });
    const buggy = defineWorker({
      ...real,
      async transform(input, out) {
        if (input.source.key.includes('poison')) throw new Error('cannot parse amount "1.000,50" (bug #42)');
        return real.transform(input, out);
      },
    });
    await normalizeStageRunner(clients, p, buggy).runUntilDrained({ timeoutMs: 60_000 });
    expect(await queueDepth(clients, p.stack.dlqUrl)).toBe(2);
    // The failure index names both inputs as dead-lettered (what `rerun status` and the console read).
    const indexed = async () =>
      (await new S3PartitionStore(clients.s3).listAll(p.stack.outputBucket, { prefix: 'failures/.by-input/' })).map(
        (o) => o.key,
      );
    expect(await indexed()).toEqual([
      expect.stringMatching(
        new RegExp(`^failures/\\.by-input/${p.stack.inputBucket}/_/[0-9a-f]{64}/\\S+\\.last-receive$`),
      ),
      expect.stringMatching(
        new RegExp(`^failures/\\.by-input/${p.stack.inputBucket}/dt=2026-01-05/[0-9a-f]{64}/\\S+\\.last-receive$`),
      ),
    ]);

    const before = await outputs(p);
    const dry = await rerunCli(['redrive', '--queue', 'normalize', '--dry-run', '--app-name', p.appName, '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    const shown = dry.json<RedriveJson>();
    expect(shown).toMatchObject({ dryRun: true, inspected: 2, moved: 0, failed: 0 });
    const letters = shown.queues[0]?.inspected ?? [];
    expect(letters.map((l) => l.subject).sort()).toEqual([
      `s3://${p.stack.inputBucket}/incoming/dt=2026-01-05/poison-2.csv`,
      `s3://${p.stack.inputBucket}/incoming/poison-1.csv`,
    ]);
    for (const letter of letters) {
      expect(letter).toMatchObject({ reason: 'Error: cannot parse amount "1.000,50" (bug #42)', receiveCount: 2 });
    }
    // The record the worker wrote when it gave up is where redrive read it from.
    const record = await new S3FailureRecorder({
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      bucket: p.stack.outputBucket,
    }).read(`${p.appName}-normalize-queue`, letters[0]?.messageId as string);
    expect(record).toMatchObject({ givenUp: 'last-receive', maxReceiveCount: 2, retryable: true });

    // The human view shows the same, as a table.
    const table = await rerunCli(['redrive', '--queue', 'normalize', '--dry-run', '--app-name', p.appName]);
    expect(table.text).toMatch(/MESSAGE\s+RECEIVES\s+SUBJECT\s+REASON/);
    expect(table.text).toMatch(/\s2\s+s3:\/\/\S+\/incoming\/poison-1\.csv\s+Error: cannot parse amount/);
    expect(table.text).toMatch(/Dry run: 2 message\(s\) would be moved back; nothing was moved\./);
    // Dry runs changed nothing: same DLQ, empty source queue, same outputs.
    expect(await queueDepth(clients, p.stack.dlqUrl)).toBe(2);
    expect(await queueDepth(clients, p.stack.queueUrl)).toBe(0);
    expect(await outputs(p)).toEqual(before);

    // The fix is deployed (the real worker); the operator presses the button.
    const moved = await rerunCli(['redrive', '--queue', 'normalize', '--app-name', p.appName, '--json']);
    expect(moved.code, moved.stderr).toBe(0);
    const result = moved.json<RedriveJson>();
    expect(result).toMatchObject({ dryRun: false, inspected: 2, moved: 2, failed: 0 });
    // moto has no StartMessageMoveTask: detected by trying, then receive -> send -> delete.
    expect(result.queues[0]?.method).toBe('resend');
    expect(result.queues[0]?.notes.join()).toMatch(/message move tasks unavailable here/);
    expect(await queueDepth(clients, p.stack.dlqUrl)).toBe(0);
    await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });

    expect(await outputs(p)).toEqual(await outputs(clean));
    expect(Object.keys(await outputs(p))).toHaveLength(6); // 4 normalized + 2 quarantine
    // The redriven messages came back under new ids (SQS gives a moved message a new one) and
    // succeeded: the entries of the failures they superseded are gone, so nothing calls them
    // dead-lettered any more.
    expect(await indexed()).toEqual([]);
    expect(await queueDepth(clients, p.stack.dlqUrl)).toBe(0);
    const again = await rerunCli(['redrive', '--app-name', p.appName, '--json']);
    expect(again.json()).toMatchObject({ inspected: 0, moved: 0 });
  }, 120_000);

  it('a failed partition task lands in the FIFO summary DLQ with its reason, and is redriven in its message group after the fix', async () => {
    const t = {
      ...twoStageTopology,
      summarize: { ...twoStageTopology.summarize, functionTimeoutSeconds: 2, visibilityTimeoutSeconds: 2 },
    };
    const p = await provisionTwoStagePipeline(clients, t);
    await uploadAll(p);
    const good = createNormalizeWorker({ outputBucket: p.stack.outputBucket, prefixes: p.t });
    await normalizeStageRunner(clients, p, good).runUntilDrained({ timeoutMs: 60_000 });
    // A corrupt normalized output (a bad deploy of normalize wrote it, say).
    const corrupt = `normalized/${p.stack.inputBucket}/dt=2026-01-05/fine.ndjson.ndjson`;
    const current = await clients.s3.send(new GetObjectCommand({ Bucket: p.stack.outputBucket, Key: corrupt }));
    await clients.s3.send(
      new PutObjectCommand({ Bucket: p.stack.outputBucket, Key: corrupt, Body: '[1,2]\n', IfMatch: current.ETag }),
    );

    const summarizer = summarizeStageRunner(clients, p);
    summarizer.start();
    try {
      const failed = await rerunCli([
        'backfill',
        '--from',
        '2026-01-05',
        '--to',
        '2026-01-05',
        '--wait',
        '--poll-interval',
        '200',
        '--app-name',
        p.appName,
        '--json',
      ]);
      expect(failed.code).toBe(1);
      expect(failed.json()).toMatchObject({ waited: 'incomplete', notPublished: 1, deadLettered: 1 });

      const dry = await rerunCli(['redrive', '--queue', 'summarize', '--dry-run', '--app-name', p.appName, '--json']);
      const [letter] = dry.json<RedriveJson>().queues[0]?.inspected ?? [];
      expect(letter).toMatchObject({
        subject: `s3://${p.stack.outputBucket}/normalized/${p.stack.inputBucket}/dt=2026-01-05/`,
        reason: expect.stringMatching(
          /^SummaryInputInvalidError: normalized\/dt=2026-01-05\/fine\.ndjson\.ndjson line 1 is not a JSON object/,
        ),
      });

      // The fix: normalize rebuilds the corrupt output (its done-check finds it invalid), then redrive.
      await sendS3Event(clients, p.stack.queueUrl, p.stack.inputBucket, 'incoming/dt=2026-01-05/fine.ndjson');
      await normalizeStageRunner(clients, p, good).runUntilDrained({ timeoutMs: 60_000 });
      const moved = await rerunCli(['redrive', '--queue', 'summarize', '--app-name', p.appName, '--json']);
      expect(moved.json()).toMatchObject({ moved: 1, failed: 0 });
      const deadline = Date.now() + 30_000;
      let status = await rerunCli([
        'status',
        '--from',
        '2026-01-05',
        '--to',
        '2026-01-05',
        '--app-name',
        p.appName,
        '--json',
      ]);
      while (status.json<{ counts: { published: number } }>().counts.published !== 1 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        status = await rerunCli([
          'status',
          '--from',
          '2026-01-05',
          '--to',
          '2026-01-05',
          '--app-name',
          p.appName,
          '--json',
        ]);
      }
      expect(status.json()).toMatchObject({ counts: { published: 1, missing: 0, stale: 0, invalid: 0 } });
    } finally {
      await summarizer.stop();
    }
    const summary = JSON.parse(
      await readText(clients.s3, p.stack.outputBucket, summaryKey(summaryLayout(p.stack.inputBucket), '2026-01-05')),
    );
    expect(summary).toMatchObject({ files: 2, records: 2, quarantined: 1 });
    expect(await queueDepth(clients, p.summary.dlqUrl)).toBe(0);
  }, 120_000);
});
