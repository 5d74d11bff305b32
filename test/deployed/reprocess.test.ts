import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { StackOutput } from '../../app/stackOutputs.js';
import { topology } from '../../app/topology.js';
import { judgeOutput, OutputState } from '../../src/done/judgeOutput.js';
import { MetadataKey } from '../../src/done/outputMetadata.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { NORMALIZE_CODE_VERSION } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { upload } from '../support/pipeline.js';
import { ordersCsv } from '../support/summaryPipeline.js';
import {
  deployedClients,
  deployedStack,
  drained,
  ministackEndpoint,
  ROOT_KEY,
  rerunOnStack,
  waitFor,
} from './support/deployedStack.js';

// A day of its own: the redrive test summarizes 2026-04-01 of the same stack.
const DAY = 'incoming/dt=2026-05-01/';
const INPUTS = ['deleted.csv', 'corrupt.csv', 'old-code.csv', 'intact.csv', 'removed.csv', 'orphaned.csv'].map(
  (name) => `${DAY}${name}`,
);
const [DELETED, CORRUPT, OLD_CODE, INTACT, REMOVED, ORPHANED] = INPUTS as [
  string,
  string,
  string,
  string,
  string,
  string,
];

interface ReprocessJson {
  planned: number;
  enqueued: number;
  pruned: number;
  counts: Record<string, number>;
  waited?: string;
  done?: number;
}

/**
 * `rerun reprocess --stack` against the deployed stack: it finds deleted, corrupt and old-code
 * outputs, enqueues them on the stack's queue, the deployed function rebuilds them, and a second
 * run plans nothing. Deletion propagates through the stack's ObjectRemoved notification, and an
 * orphan left by a lost delete event is pruned.
 */
describe('deployed stack: rerun reprocess repairs outputs and prunes orphans', () => {
  const clients = deployedClients();
  const stack = deployedStack();
  const store = new S3ObjectStore(clients.s3);
  const outputKeyOf = (key: string) =>
    deterministicKey({
      prefix: topology.outputPrefix,
      source: { bucket: stack.inputBucket, key },
      stripPrefix: 'incoming/',
      suffix: '.ndjson',
    });
  const output = (key: string) => store.head(stack.outputBucket, outputKeyOf(key));
  const reprocess = async (...args: string[]) => {
    const result = await rerunOnStack(['reprocess', '--prefix', DAY, '--json', ...args]);
    expect(result.code, result.stderr).toBe(0);
    return result.json<ReprocessJson>();
  };

  it('repairs deleted, corrupt and old-code outputs, propagates a delete, prunes an orphan; a second run plans 0', async () => {
    for (const [i, key] of INPUTS.entries()) await upload(clients, stack.inputBucket, key, ordersCsv(`r${i}`, 2));
    for (const key of INPUTS) await waitFor(`the output of ${key}`, () => output(key), { timeoutMs: 60_000 });
    await drained(clients, stack.queueUrl);

    // Behind rerun's back: an output deleted, one overwritten with garbage, one marked as built by older code.
    await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.outputBucket, Key: outputKeyOf(DELETED) }));
    const corrupt = await output(CORRUPT);
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: stack.outputBucket,
        Key: outputKeyOf(CORRUPT),
        Body: 'garbage',
        IfMatch: `"${corrupt?.etag}"`,
      }),
    );
    await rewriteCodeVersion(outputKeyOf(OLD_CODE), 'normalize@0');

    // Deletion propagates: the stack's ObjectRemoved notification has the deployed function remove the outputs.
    await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.inputBucket, Key: REMOVED }));
    await waitFor(`the outputs of ${REMOVED} removed`, async () => ((await output(REMOVED)) ? undefined : true));

    // A delete whose event is lost (the mapping paused, the queue purged): its output stays as an orphan.
    await setMappingEnabled(false);
    try {
      await clients.s3.send(new DeleteObjectCommand({ Bucket: stack.inputBucket, Key: ORPHANED }));
      await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: stack.queueUrl }));
    } finally {
      await setMappingEnabled(true);
    }
    expect(await output(ORPHANED)).toBeDefined();

    const plan = await reprocess('--verify', '--prune', '--dry-run');
    expect(plan).toMatchObject({ planned: 3, enqueued: 0, pruned: 0 });
    expect(plan.counts).toMatchObject({ missing: 1, invalid: 1, 'old-code': 1, orphan: 1 });

    const run = await reprocess('--verify', '--prune', '--wait', '--poll-interval', '300', '--timeout', '120');
    expect(run).toMatchObject({ planned: 3, enqueued: 3, pruned: 1, waited: 'complete', done: 3 });
    for (const key of [DELETED, CORRUPT, OLD_CODE, INTACT]) {
      const verdict = judgeOutput(await output(key), {
        source: { bucket: stack.inputBucket, key },
        codeVersion: NORMALIZE_CODE_VERSION,
      });
      expect(verdict.state, key).toBe(OutputState.BUILT);
    }
    expect(await output(ORPHANED)).toBeUndefined();

    const again = await reprocess('--verify', '--prune');
    expect(again).toMatchObject({ planned: 0, enqueued: 0, pruned: 0 });
  });

  /** Rewrites an output in place with another code version in its metadata (same bytes, same checksum). */
  async function rewriteCodeVersion(key: string, codeVersion: string): Promise<void> {
    const got = await clients.s3.send(
      new GetObjectCommand({ Bucket: stack.outputBucket, Key: key, ChecksumMode: 'ENABLED' }),
    );
    const body = await got.Body?.transformToByteArray();
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: stack.outputBucket,
        Key: key,
        Body: body,
        Metadata: { ...got.Metadata, [MetadataKey.CODE_VERSION]: codeVersion },
        ChecksumAlgorithm: 'SHA256',
        ...(got.ChecksumSHA256 ? { ChecksumSHA256: got.ChecksumSHA256.replace(/-\d+$/, '') } : {}),
        IfMatch: got.ETag,
      }),
    );
  }

  /** Pauses or resumes the normalize function's event source mapping (a temporary change, undone in `finally`). */
  async function setMappingEnabled(enabled: boolean): Promise<void> {
    const lambda = new LambdaClient({ endpoint: ministackEndpoint(), region: 'us-east-1', credentials: ROOT_KEY });
    const functionName = stack.outputs[StackOutput.FUNCTION_NAME];
    const mappings = await lambda.send(new ListEventSourceMappingsCommand({ FunctionName: functionName }));
    for (const m of mappings.EventSourceMappings ?? []) {
      await lambda.send(new UpdateEventSourceMappingCommand({ UUID: m.UUID, Enabled: enabled }));
    }
    expect(mappings.EventSourceMappings?.length).toBeGreaterThan(0);
  }
});
