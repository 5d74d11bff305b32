import { type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MotoServer, startMotoServer } from '../../local/emulator/motoServer.js';
import { startWebhookSink, type WebhookSink } from '../../local/sink/WebhookSink.js';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { DynamoDBLedger } from '../../src/ledger/DynamoDBLedger.js';
import { LedgerInProgressError } from '../../src/ledger/errors.js';
import { createPipelineClients } from '../../src/ledger/pipelineClients.js';
import { notifyWebhook } from '../../src/notify/notifyWebhook.js';
import { RequestLog, uniqueName } from '../support/aws.js';

const WORKERS = 8;
const KEYS = 500;
const CONCURRENCY_PER_WORKER = 8;

let tableName: string;
let sink: WebhookSink;
let moto: MotoServer;

// DynamoDB checks a condition and writes the item as one atomic step; moto's threaded server does not
// (measured: 2 of 200 keys had two winning `attribute_not_exists` updates under 8 concurrent clients).
// This race therefore runs on a moto of its own whose writes run one at a time
// (local/emulator/atomicMotoServer.py), which keeps the heavy race off the shared emulator too.
beforeAll(async () => {
  moto = await startMotoServer();
  tableName = uniqueName('ledger-race');
  await createLedgerTable({ client: dynamodb(), tableName });
  sink = await startWebhookSink();
});
afterAll(async () => {
  await sink?.stop();
  await moto?.stop();
});

/** A new client on the race's moto; with a log, every request attempt is recorded. */
function dynamodb(log?: RequestLog): DynamoDBClient {
  const client = createPipelineClients({ endpoint: moto.endpoint, region: 'us-east-1' }).dynamodb;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      log?.requests.push({
        service: 'DynamoDB',
        operation: (context.commandName ?? 'Unknown').replace(/Command$/, ''),
        input: args.input as Record<string, unknown>,
      });
      return next(args);
    },
    { step: 'deserialize', name: 'raceRequestLog' },
  );
  return client;
}

/** Runs `task` over `items` with at most `limit` in flight (never an unbounded Promise.all). */
async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
}

type Outcome = 'executed' | 'replayed' | 'deferred';

describe('8 workers racing over the same 500 keys', () => {
  it('runs every effect exactly once, and the sink applies each key once', { timeout: 240_000 }, async () => {
    const keys = Array.from({ length: KEYS }, (_, i) => `race-${tableName}-${i}`);
    const effectRuns = new Map<string, number>();
    const logs = Array.from({ length: WORKERS }, () => new RequestLog());
    // Independent ledgers, each with its own SDK client (as separate Lambda instances would have).
    const ledgers = logs.map((log) => new DynamoDBLedger({ client: dynamodb(log), tableName }));
    const outcomes = new Map<string, Outcome[]>(keys.map((key) => [key, []]));

    const run = async (ledger: DynamoDBLedger, key: string) => {
      try {
        const { status } = await ledger.once(key, { key }, async ({ dedupeKey }) => {
          effectRuns.set(key, (effectRuns.get(key) ?? 0) + 1);
          return notifyWebhook({ url: `${sink.url}/race`, body: { key }, dedupeKey });
        });
        outcomes.get(key)?.push(status);
      } catch (error) {
        if (!(error instanceof LedgerInProgressError)) throw error;
        outcomes.get(key)?.push('deferred');
      }
    };

    const started = performance.now();
    await Promise.all(ledgers.map((ledger) => pool(keys, CONCURRENCY_PER_WORKER, (key) => run(ledger, key))));
    const raceMs = performance.now() - started;

    for (const key of keys) {
      expect(effectRuns.get(key), key).toBe(1);
      const seen = outcomes.get(key) ?? [];
      expect(seen, key).toHaveLength(WORKERS);
      expect(
        seen.filter((o) => o === 'executed'),
        key,
      ).toHaveLength(1);
    }
    const deliveries = sink.deliveries().filter((d) => d.path === '/race');
    expect(deliveries).toHaveLength(KEYS);
    expect(deliveries.every((d) => d.attempts === 1 && d.repeats === 0 && d.applied)).toBe(true);
    expect(new Set(deliveries.map((d) => d.key))).toEqual(new Set(keys));

    // Cost: one conditional write per call, plus one completing write per executed key; no reads.
    const requests = logs.flatMap((log) => log.requests);
    expect(requests.filter((r) => r.operation === 'UpdateItem')).toHaveLength(WORKERS * KEYS + KEYS);
    expect(requests.filter((r) => r.operation !== 'UpdateItem')).toEqual([]);

    const all = [...outcomes.values()].flat();
    const deferred = all.filter((o) => o === 'deferred').length;
    console.info(
      `[ledger race] ${WORKERS} workers x ${KEYS} keys (${CONCURRENCY_PER_WORKER} in flight each): ` +
        `${raceMs.toFixed(0)} ms; executed ${KEYS}, replayed ${all.length - KEYS - deferred}, deferred ${deferred}`,
    );

    // The deferred messages come back after their lease: one more worker replays every key (one
    // conditional write each) and nothing runs again.
    const replayLog = new RequestLog();
    const replayer = new DynamoDBLedger({ client: dynamodb(replayLog), tableName });
    const replayed: Outcome[] = [];
    await pool(keys, CONCURRENCY_PER_WORKER, async (key) => {
      const outcome = await replayer.once(key, { key }, async () => {
        throw new Error(`effect ran again for ${key}`);
      });
      replayed.push(outcome.status);
    });
    expect(replayed).toEqual(Array(KEYS).fill('replayed'));
    expect(replayLog.count({ operation: 'UpdateItem' })).toBe(KEYS);
    expect(sink.deliveries().filter((d) => d.path === '/race')).toHaveLength(KEYS);

    const scan = await dynamodb().send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: '#s = :succeeded',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':succeeded': { S: 'SUCCEEDED' } },
        Select: 'COUNT',
      }),
    );
    expect(scan.Count).toBe(KEYS);
  });
});
