import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { topology } from '../../app/topology.js';
import { judgeOutput, OutputState } from '../../src/done/judgeOutput.js';
import { MetadataKey } from '../../src/done/outputMetadata.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { NORMALIZE_CODE_VERSION } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { upload } from '../support/pipeline.js';
import { readText } from '../support/s3.js';
import { ordersCsv } from '../support/summaryPipeline.js';
import { deployedClients, deployedStack, drained, waitFor } from './support/deployedStack.js';

// Keys without '+': MiniStack is not trusted to encode event keys as S3 does (docs/EMULATORS.md);
// the '+' rule is covered by test/unit/parseS3Event.test.ts and test/e2e/pipeline.test.ts.
const INPUT = 'incoming/dt=2026-02-03/orders with spaces.csv';
const SENTINEL = 'incoming/dt=2026-02-03/sentinel.ndjson';

describe('deployed stack: uploads run the deployed normalize function through the stack’s own notification and mapping', () => {
  const clients = deployedClients();
  const stack = deployedStack();
  const store = new S3ObjectStore(clients.s3);
  const outputKeyOf = (key: string, prefix = topology.outputPrefix) =>
    deterministicKey({
      prefix,
      source: { bucket: stack.inputBucket, key },
      stripPrefix: 'incoming/',
      suffix: '.ndjson',
    });
  const waitForOutput = (key: string) =>
    waitFor(`the output of ${key}`, () => store.head(stack.outputBucket, outputKeyOf(key)), { timeoutMs: 60_000 });

  it('an upload becomes a valid output at its deterministic key, built from that upload, with its quarantine', async () => {
    const etag = await upload(clients, stack.inputBucket, INPUT, ordersCsv('d1', 3, { bad: true }));

    const head = await waitForOutput(INPUT);
    const verdict = judgeOutput(head, {
      source: { bucket: stack.inputBucket, key: INPUT },
      codeVersion: NORMALIZE_CODE_VERSION,
    });
    expect(verdict).toMatchObject({ state: OutputState.BUILT, sourceEtag: etag });
    expect(head.metadata[MetadataKey.CODE_VERSION]).toBe(NORMALIZE_CODE_VERSION);
    const lines = (await readText(clients.s3, stack.outputBucket, outputKeyOf(INPUT))).trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ id: 'd1-0' });
    // The bad row went to the quarantine side output, with its line number.
    const quarantine = await readText(clients.s3, stack.outputBucket, outputKeyOf(INPUT, topology.quarantinePrefix));
    expect(quarantine).toMatch(/"line":5/);
    await drained(clients, stack.queueUrl);
  });

  it('an identical re-upload writes nothing: same ETag and LastModified of both outputs after the function ran', async () => {
    const before = await headBoth();
    // Identical bytes, so the same ETag: the deployed function's done-check finds the output current.
    await upload(clients, stack.inputBucket, INPUT, ordersCsv('d1', 3, { bad: true }));
    // Witness that the re-upload's event was consumed: a later upload's output exists and the queue
    // is drained (a failed message would stay in flight for the queue's 360 s visibility timeout).
    await upload(clients, stack.inputBucket, SENTINEL, '{"id":"s","amount":"1"}\n');
    await waitForOutput(SENTINEL);
    await drained(clients, stack.queueUrl);
    expect(await headBoth()).toEqual(before);
  });

  /** ETag and LastModified of the main and the quarantine output of INPUT. */
  async function headBoth() {
    const result: Record<string, { etag?: string; lastModified?: string }> = {};
    for (const prefix of [topology.outputPrefix, topology.quarantinePrefix]) {
      const out = await clients.s3.send(
        new HeadObjectCommand({ Bucket: stack.outputBucket, Key: outputKeyOf(INPUT, prefix) }),
      );
      result[prefix] = { etag: out.ETag, lastModified: out.LastModified?.toISOString() };
    }
    return result;
  }
});
