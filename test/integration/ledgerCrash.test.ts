import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookSink, type WebhookSink } from '../../local/sink/WebhookSink.js';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { DynamoDBLedger } from '../../src/ledger/DynamoDBLedger.js';
import { LedgerInProgressError } from '../../src/ledger/errors.js';
import { notifyWebhook } from '../../src/notify/notifyWebhook.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';

const T0 = 1_700_000_000_000;
const LEASE_MS = 20_000;
const WORKER = fileURLToPath(new URL('../fixtures/ledger/crashWorker.ts', import.meta.url));

let tableName: string;
let sink: WebhookSink;

beforeAll(async () => {
  tableName = uniqueName('ledger-crash');
  await createLedgerTable({ client: testClients().dynamodb, tableName });
  sink = await startWebhookSink();
});
afterAll(async () => {
  await sink.stop();
});

/** Runs the crash worker in its own process and waits for it to die; returns what it printed and how it ended. */
function crashWorker(key: string, payload: unknown, crashAt: 'after-claim' | 'after-effect') {
  const config = {
    endpoint: awsEndpoint(),
    tableName,
    key,
    payload,
    now: T0,
    leaseMs: LEASE_MS,
    sinkUrl: sink.url,
    crashAt,
  };
  return new Promise<{ signal: NodeJS.Signals | null; reached: Record<string, unknown> | undefined; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
        env: { ...process.env, CRASH_WORKER: JSON.stringify(config) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.once('error', reject);
      child.once('exit', (_code, signal) => {
        const line = stdout.split('\n').find((l) => l.startsWith('{"reached"'));
        resolve({ signal, reached: line ? JSON.parse(line).reached : undefined, stderr });
      });
    },
  );
}

async function item(key: string) {
  const { Item } = await testClients().dynamodb.send(
    new GetItemCommand({ TableName: tableName, Key: { pk: { S: key } } }),
  );
  return Item ? Object.fromEntries(Object.entries(Item).map(([k, v]) => [k, v.S ?? Number(v.N)])) : undefined;
}

function retryingLedger(now: number) {
  return new DynamoDBLedger({ client: testClients().dynamodb, tableName, now: () => now, leaseMs: LEASE_MS });
}

describe('a worker killed mid-way', () => {
  for (const crashAt of ['after-claim', 'after-effect'] as const) {
    it(`is finished by the retry after its lease expires, and the sink applies the effect once (${crashAt})`, async () => {
      const key = uniqueName(`crash-${crashAt}`);
      const payload = { output: `normalized/${key}.ndjson` };
      const crashed = await crashWorker(key, payload, crashAt);
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
      expect(crashed.reached).toMatchObject({ point: crashAt, attempt: 1 });

      // What the dead worker left: its claim, never completed.
      expect(await item(key)).toMatchObject({
        status: 'IN_PROGRESS',
        owner: 'crashed-worker',
        leaseExpiresAt: T0 + LEASE_MS,
        attempt: 1,
      });
      const applied = sink.deliveries().filter((d) => d.key === key);
      expect(applied).toHaveLength(crashAt === 'after-effect' ? 1 : 0);

      let runs = 0;
      const effect = async ({ dedupeKey }: { dedupeKey: string }) => {
        runs += 1;
        return notifyWebhook({ url: `${sink.url}/crash`, body: payload, dedupeKey });
      };

      // A redelivery while the dead worker's lease still runs is deferred, not run and not failed.
      const early = await retryingLedger(T0 + 5_000)
        .once(key, payload, effect)
        .catch((e: unknown) => e);
      expect(early).toBeInstanceOf(LedgerInProgressError);
      expect(early).toMatchObject({ retryAfterSeconds: 16 });
      expect(runs).toBe(0);

      // After the lease: the retry takes over and completes.
      const outcome = await retryingLedger(T0 + LEASE_MS + 1).once(key, payload, effect);
      expect(outcome).toMatchObject({ status: 'executed', attempt: 2, result: { status: 200 } });
      expect(runs).toBe(1);
      expect(await item(key)).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });

      // The receiver applied the effect once; after the crash-after-effect it discarded one repeat.
      expect(sink.deliveries().filter((d) => d.key === key)).toEqual([
        expect.objectContaining({
          applied: true,
          attempts: crashAt === 'after-effect' ? 2 : 1,
          repeats: crashAt === 'after-effect' ? 1 : 0,
          body: payload,
        }),
      ]);

      // And later redeliveries replay without any request to the receiver.
      await expect(retryingLedger(T0 + 10 * LEASE_MS).once(key, payload, effect)).resolves.toMatchObject({
        status: 'replayed',
      });
      expect(runs).toBe(1);
    });
  }
});
