import { describe, expect, it } from 'vitest';
import { summaryKey, summaryLayout } from '../../app/partition/summaryLayout.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { upload } from '../support/pipeline.js';
import { readText } from '../support/s3.js';
import { ordersCsv } from '../support/summaryPipeline.js';
import { deployedClients, deployedStack, drained, rerunOnStack, waitFor } from './support/deployedStack.js';

const INPUTS: Record<string, string> = {
  'incoming/dt=2026-03-01/north.csv': ordersCsv('n', 2, { bad: true }),
  'incoming/dt=2026-03-01/south.ndjson': '{"id":"s1","amount":"4.00"}\n{"id":"s2","amount":"6.00"}\n',
  'incoming/dt=2026-03-02/east.csv': ordersCsv('e', 3),
};
const WINDOW = ['--from', '2026-03-01', '--to', '2026-03-02'];

interface StatusJson {
  counts: { published: number; missing: number; stale: number; invalid: number };
}

describe('deployed stack: rerun backfill --wait publishes daily summaries through the deployed summarize function', () => {
  const clients = deployedClients();
  const stack = deployedStack();

  it('status sees the window missing, backfill --stack publishes it, status reports it published, a second backfill plans nothing', async () => {
    const store = new S3ObjectStore(clients.s3);
    for (const [key, body] of Object.entries(INPUTS)) await upload(clients, stack.inputBucket, key, body);
    for (const key of Object.keys(INPUTS)) {
      const output = deterministicKey({
        prefix: 'normalized/',
        source: { bucket: stack.inputBucket, key },
        stripPrefix: 'incoming/',
        suffix: '.ndjson',
      });
      await waitFor(`the output of ${key}`, () => store.head(stack.outputBucket, output));
    }
    await drained(clients, stack.queueUrl);

    const before = await rerunOnStack(['status', ...WINDOW, '--json']);
    expect(before.code, before.stderr).toBe(0);
    expect(before.json<StatusJson>().counts).toEqual({ published: 0, missing: 2, stale: 0, invalid: 0, incomplete: 0 });

    const backfill = await rerunOnStack([
      'backfill',
      ...WINDOW,
      '--wait',
      '--poll-interval',
      '300',
      '--timeout',
      '90',
      '--json',
    ]);
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(backfill.json()).toMatchObject({
      planned: 2,
      enqueued: 2,
      waited: 'complete',
      published: 2,
      deadLettered: 0,
    });

    const summary = JSON.parse(
      await readText(clients.s3, stack.outputBucket, summaryKey(summaryLayout(stack.inputBucket), '2026-03-01')),
    );
    expect(summary).toMatchObject({ files: 2, records: 4, quarantined: 1 });

    const after = await rerunOnStack(['status', ...WINDOW, '--json']);
    expect(after.json<StatusJson>().counts).toEqual({ published: 2, missing: 0, stale: 0, invalid: 0, incomplete: 0 });
    const again = await rerunOnStack(['backfill', ...WINDOW, '--json']);
    expect(again.json()).toMatchObject({ planned: 0, enqueued: 0 });
  });
});
