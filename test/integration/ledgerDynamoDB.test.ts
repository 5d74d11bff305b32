import { DescribeTimeToLiveCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { RerunError } from '../../src/errors.js';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { DynamoDBLedger } from '../../src/ledger/DynamoDBLedger.js';
import type { DynamoDBLedgerOptions } from '../../src/ledger/dynamoDBLedgerOptions.js';
import {
  LedgerConfigurationError,
  LedgerInProgressError,
  LedgerLeaseLostError,
  LedgerPayloadMismatchError,
  LedgerResultUnstorableError,
  LedgerStoredFailureError,
} from '../../src/ledger/errors.js';
import { hashPayload } from '../../src/ledger/payloadHash.js';
import { createLogger } from '../../src/logging/logger.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';

const T0 = 1_700_000_000_000;
const LEASE_MS = 30_000;
const TTL_SECONDS = 86_400;

let tableName: string;
const reader = () => testClients().dynamodb;

beforeAll(async () => {
  tableName = uniqueName('ledger');
  await createLedgerTable({ client: testClients().dynamodb, tableName });
});

/** A ledger with its own client, request log, settable clock and predictable owner tokens. */
function worker(name: string, overrides: Partial<DynamoDBLedgerOptions> = {}) {
  const log = new RequestLog();
  const clock = { now: T0 };
  let claims = 0;
  const ledger = new DynamoDBLedger({
    client: testClients(log).dynamodb,
    tableName,
    now: () => clock.now,
    owner: () => `${name}-${++claims}`,
    leaseMs: LEASE_MS,
    ttlSeconds: TTL_SECONDS,
    ...overrides,
  });
  return { ledger, log, clock };
}

async function item(key: string): Promise<Record<string, string | number> | undefined> {
  const { Item } = await reader().send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: key } } }));
  if (!Item) return undefined;
  return Object.fromEntries(Object.entries(Item).map(([k, v]) => [k, v.S ?? Number(v.N)]));
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('createLedgerTable', () => {
  it('is idempotent and enables TTL on the ttl attribute', async () => {
    const client = testClients().dynamodb;
    const name = uniqueName('ledger-create');
    expect(await createLedgerTable({ client, tableName: name })).toEqual({ created: true, ttlEnabled: true });
    expect(await createLedgerTable({ client, tableName: name })).toEqual({ created: false, ttlEnabled: false });
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'ttl' });
  });
});

describe('DynamoDBLedger.once', () => {
  it('runs a new key once with two writes (claim + complete) and no read', async () => {
    const { ledger, log } = worker('a');
    const key = uniqueName('first');
    const calls: unknown[] = [];
    const outcome = await ledger.once(key, { to: 'x' }, async (context) => {
      calls.push(context);
      return { delivered: true };
    });
    expect(outcome).toEqual({ status: 'executed', result: { delivered: true }, dedupeKey: key, attempt: 1 });
    expect(calls).toEqual([{ dedupeKey: key, attempt: 1 }]);
    expect(log.operations('DynamoDB')).toEqual(['UpdateItem', 'UpdateItem']);
    expect(await item(key)).toEqual({
      pk: key,
      status: 'SUCCEEDED',
      payloadHash: hashPayload({ to: 'x' }),
      owner: 'a-1',
      attempt: 1,
      createdAt: T0,
      completedAt: T0,
      ttl: T0 / 1000 + TTL_SECONDS,
      resultJson: '{"delivered":true}',
    });
  });

  it('replays a completed key with one conditional write that returns the item, without running the effect', async () => {
    const first = worker('a');
    const key = uniqueName('replay');
    await first.ledger.once(key, { n: 1 }, async () => ({ id: 'evt_1' }));

    const second = worker('b');
    let ran = 0;
    const outcome = await second.ledger.once(key, { n: 1 }, async () => {
      ran += 1;
      return { id: 'evt_2' };
    });
    expect(outcome).toEqual({ status: 'replayed', result: { id: 'evt_1' }, dedupeKey: key, attempt: 1 });
    expect(ran).toBe(0);
    expect(second.log.operations('DynamoDB')).toEqual(['UpdateItem']);
    expect(second.log.requests[0]?.input).toMatchObject({ ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
  });

  it('replays an effect that returned nothing as undefined', async () => {
    const { ledger } = worker('a');
    const key = uniqueName('void');
    await ledger.once(key, null, async () => undefined);
    const replay = await ledger.once(key, null, async () => 'never');
    expect(replay).toEqual({ status: 'replayed', result: undefined, dedupeKey: key, attempt: 1 });
  });

  it('defers a key whose lease is held elsewhere without touching the holder record', async () => {
    const holder = worker('holder');
    const key = uniqueName('busy');
    const started = deferred();
    const release = deferred<string>();
    const running = holder.ledger.once(key, 'p', async () => {
      started.resolve();
      return release.promise;
    });
    await started.promise;
    const before = await item(key);

    const lines: string[] = [];
    const other = worker('other', { logger: createLogger({ sink: (line) => lines.push(line) }) });
    other.clock.now = T0 + 12_500; // 17.5 s of the 30 s lease left
    let ran = 0;
    const error = await caught(
      other.ledger.once(key, 'p', async () => {
        ran += 1;
      }),
    );
    expect(error).toBeInstanceOf(LedgerInProgressError);
    expect(error).toMatchObject({ retryable: true, retryAfterSeconds: 18, leaseExpiresAt: T0 + LEASE_MS });
    expect(ran).toBe(0);
    expect(other.log.operations('DynamoDB')).toEqual(['UpdateItem']); // no delete, no read
    expect(await item(key)).toEqual(before);
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('deferring this message'),
        dedupeKey: key,
        retryAfterSeconds: 18,
      }),
    );

    release.resolve('done');
    expect(await running).toMatchObject({ status: 'executed', result: 'done' });
  });

  it('lets a new holder take over an expired lease, and the stale holder cannot complete over it', async () => {
    const stale = worker('stale');
    const key = uniqueName('takeover');
    const started = deferred();
    const finish = deferred<string>();
    const staleRun = stale.ledger.once(key, 'p', async () => {
      started.resolve();
      return finish.promise;
    });
    await started.promise;

    const fresh = worker('fresh');
    fresh.clock.now = T0 + LEASE_MS; // at the very end of the lease it still holds
    await expect(fresh.ledger.once(key, 'p', async () => 'fresh')).rejects.toBeInstanceOf(LedgerInProgressError);

    fresh.clock.now = T0 + LEASE_MS + 1;
    const contexts: unknown[] = [];
    const outcome = await fresh.ledger.once(key, 'p', async (context) => {
      contexts.push(context);
      return 'fresh';
    });
    expect(outcome).toMatchObject({ status: 'executed', result: 'fresh', attempt: 2 });
    expect(contexts).toEqual([{ dedupeKey: key, attempt: 2 }]);

    stale.clock.now = T0 + LEASE_MS + 2;
    finish.resolve('stale');
    const error = await caught(staleRun);
    expect(error).toBeInstanceOf(LedgerLeaseLostError);
    expect(error).toMatchObject({ stage: 'complete', retryable: true });
    expect(await item(key)).toMatchObject({ status: 'SUCCEEDED', owner: 'fresh-2', resultJson: '"fresh"', attempt: 2 });
  });

  it('keeps a stale holder from storing its failure or releasing over the new holder', async () => {
    for (const [label, thrown] of [
      ['terminal', new RerunError('rejected', { retryable: false })],
      ['retryable', new Error('flaky')],
    ] as const) {
      const stale = worker(`stale-${label}`);
      const key = uniqueName(`stale-${label}`);
      const started = deferred();
      const fail = deferred<never>();
      const staleRun = stale.ledger.once(key, 'p', async () => {
        started.resolve();
        return fail.promise;
      });
      await started.promise;

      const fresh = worker(`fresh-${label}`);
      fresh.clock.now = T0 + LEASE_MS + 1;
      const inFlight = deferred<string>();
      const freshStarted = deferred();
      const freshRun = fresh.ledger.once(key, 'p', async () => {
        freshStarted.resolve();
        return inFlight.promise;
      });
      await freshStarted.promise;
      const freshClaim = await item(key);

      fail.reject(thrown);
      const error = await caught(staleRun);
      if (label === 'terminal') expect(error).toMatchObject({ name: 'LedgerLeaseLostError', stage: 'fail' });
      else expect(error).toBe(thrown);
      expect(await item(key)).toEqual(freshClaim); // the new holder's lease is intact

      inFlight.resolve('ok');
      await expect(freshRun).resolves.toMatchObject({ status: 'executed', result: 'ok' });
    }
  });

  it('rejects the same key with a different payload as a terminal mismatch, finished or in progress', async () => {
    const { ledger } = worker('a');
    const key = uniqueName('mismatch');
    await ledger.once(key, { amount: 10, currency: 'EUR' }, async () => 'charged');
    const error = await caught(ledger.once(key, { amount: 11, currency: 'EUR' }, async () => 'charged again'));
    expect(error).toBeInstanceOf(LedgerPayloadMismatchError);
    expect(error).toMatchObject({
      retryable: false,
      storedPayloadHash: hashPayload({ amount: 10, currency: 'EUR' }),
      payloadHash: hashPayload({ amount: 11, currency: 'EUR' }),
    });
    // Same data, other key order: not a mismatch.
    await expect(ledger.once(key, { currency: 'EUR', amount: 10 }, async () => 'x')).resolves.toMatchObject({
      status: 'replayed',
    });

    const busyKey = uniqueName('mismatch-busy');
    const release = deferred<string>();
    const started = deferred();
    const running = ledger.once(busyKey, { a: 1, b: 2 }, async () => {
      started.resolve();
      return release.promise;
    });
    await started.promise;
    await expect(ledger.once(busyKey, { a: 1, b: 3 }, async () => 'x')).rejects.toBeInstanceOf(
      LedgerPayloadMismatchError,
    );

    // An expired lease is not a way around the check either: the claim condition compares the hash.
    const later = worker('later');
    later.clock.now = T0 + 10 * LEASE_MS;
    const abandoned = await item(busyKey);
    let ran = 0;
    const afterExpiry = await caught(
      later.ledger.once(busyKey, { b: 3, a: 1 }, async () => {
        ran += 1;
      }),
    );
    expect(afterExpiry).toBeInstanceOf(LedgerPayloadMismatchError);
    expect(ran).toBe(0);
    expect(await item(busyKey)).toEqual(abandoned);
    // While the same payload may take the expired lease over.
    await expect(later.ledger.once(busyKey, { b: 2, a: 1 }, async () => 'taken over')).resolves.toMatchObject({
      status: 'executed',
      attempt: 2,
    });
    release.resolve('ok');
    await expect(running).rejects.toBeInstanceOf(LedgerLeaseLostError);
  });

  it('stores a terminal failure with its reason and replays it without running the effect again', async () => {
    const first = worker('a');
    const key = uniqueName('terminal');
    const original = new RerunError('Webhook answered 400: bad payload', { retryable: false });
    let runs = 0;
    const effect = async () => {
      runs += 1;
      throw original;
    };
    await expect(first.ledger.once(key, 'p', effect)).rejects.toBe(original);
    expect(first.log.operations('DynamoDB')).toEqual(['UpdateItem', 'UpdateItem']);
    expect(await item(key)).toMatchObject({
      status: 'FAILED',
      failureName: 'RerunError',
      failureMessage: 'Webhook answered 400: bad payload',
      completedAt: T0,
    });

    const second = worker('b');
    second.clock.now = T0 + 100 * LEASE_MS;
    const replayed = await caught(second.ledger.once(key, 'p', effect));
    expect(replayed).toBeInstanceOf(LedgerStoredFailureError);
    expect(replayed).toMatchObject({
      retryable: false,
      failure: { name: 'RerunError', message: 'Webhook answered 400: bad payload' },
      failedAt: T0,
    });
    expect(runs).toBe(1);
    expect(second.log.operations('DynamoDB')).toEqual(['UpdateItem']);
  });

  it('releases the lease on a retryable failure so the next attempt runs at once, keeping the record', async () => {
    const { ledger, log } = worker('a');
    const key = uniqueName('retryable');
    const flaky = new Error('503 from receiver');
    await expect(
      ledger.once(key, 'p', async () => {
        throw flaky;
      }),
    ).rejects.toBe(flaky);
    expect(log.operations('DynamoDB')).toEqual(['UpdateItem', 'UpdateItem']);
    expect(await item(key)).toMatchObject({
      status: 'IN_PROGRESS',
      leaseExpiresAt: 0,
      attempt: 1,
      lastErrorName: 'Error',
      lastErrorMessage: '503 from receiver',
    });

    // Same clock: no waiting for the lease, it was released.
    const outcome = await ledger.once(key, 'p', async ({ attempt }) => `ok on attempt ${attempt}`);
    expect(outcome).toMatchObject({ status: 'executed', result: 'ok on attempt 2', attempt: 2 });
  });

  it('derives the lease from the remaining Lambda time plus the margin', async () => {
    const { ledger } = worker('a', { leaseMarginMs: 2_000 });
    const key = uniqueName('lease');
    let during: Record<string, string | number> | undefined;
    await ledger.once(
      key,
      'p',
      async () => {
        during = await item(key);
      },
      { remainingTimeMs: 12_345 },
    );
    expect(during).toMatchObject({ status: 'IN_PROGRESS', leaseExpiresAt: T0 + 12_345 + 2_000, owner: 'a-1' });
  });

  it('treats a record past its TTL as absent although TTL deletion has not happened', async () => {
    const { ledger, clock, log } = worker('a');
    const key = uniqueName('ttl');
    await ledger.once(key, { v: 1 }, async () => 'old');
    clock.now = T0 + TTL_SECONDS * 1000 + 999; // the TTL second itself: still a replay
    await expect(ledger.once(key, { v: 1 }, async () => 'x')).resolves.toMatchObject({ status: 'replayed' });

    clock.now = T0 + (TTL_SECONDS + 1) * 1000;
    log.clear();
    // Another payload is fine too: the old record no longer counts.
    const outcome = await ledger.once(key, { v: 2 }, async () => 'new');
    expect(outcome).toMatchObject({ status: 'executed', result: 'new', attempt: 1 });
    // The claim loses (returning the expired item), a conditional put replaces it, then the completion.
    expect(log.operations('DynamoDB')).toEqual(['UpdateItem', 'PutItem', 'UpdateItem']);
    expect(await item(key)).toEqual({
      pk: key,
      status: 'SUCCEEDED',
      payloadHash: hashPayload({ v: 2 }),
      owner: 'a-4',
      attempt: 1,
      createdAt: clock.now,
      completedAt: clock.now,
      ttl: clock.now / 1000 + TTL_SECONDS,
      resultJson: '"new"',
    });
  });

  it('records an oversized result as done without it, and never runs the effect again', async () => {
    const { ledger } = worker('a', { maxResultBytes: 100 });
    const key = uniqueName('large');
    let runs = 0;
    const effect = async () => {
      runs += 1;
      return 'x'.repeat(200);
    };
    const first = await caught(ledger.once(key, 'p', effect));
    expect(first).toBeInstanceOf(LedgerResultUnstorableError);
    expect(first).toMatchObject({ retryable: false, reason: 'result is 202 bytes of JSON (limit 100)' });
    expect(await item(key)).toMatchObject({
      status: 'SUCCEEDED',
      resultOmitted: 'result is 202 bytes of JSON (limit 100)',
    });
    await expect(ledger.once(key, 'p', effect)).rejects.toBeInstanceOf(LedgerResultUnstorableError);
    expect(runs).toBe(1);
  });

  it('holds its claim when the SDK retries a claim or completion whose response was lost', async () => {
    const log = new RequestLog();
    const client = testClients(log).dynamodb;
    let dropped = 0;
    // After DynamoDB applied the write, pretend the response never arrived (a socket timeout): the
    // SDK's retry strategy (outside this middleware) sends the same conditional write again.
    client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        if (dropped < 2) {
          dropped += 1;
          throw Object.assign(new Error('response lost'), { name: 'TimeoutError', $metadata: {} });
        }
        return result;
      },
      { step: 'deserialize', name: 'loseResponse' },
    );
    const ledger = new DynamoDBLedger({ client, tableName, now: () => T0, owner: () => 'only', leaseMs: LEASE_MS });
    const key = uniqueName('lost-response');
    let runs = 0;
    const outcome = await ledger.once(key, 'p', async () => {
      runs += 1;
      return 'ok';
    });
    expect(outcome).toMatchObject({ status: 'executed', result: 'ok', attempt: 1 });
    expect(runs).toBe(1);
    expect(dropped).toBe(2);
    expect(log.operations('DynamoDB')).toEqual(['UpdateItem', 'UpdateItem', 'UpdateItem', 'UpdateItem']);
    expect(await item(key)).toMatchObject({ status: 'SUCCEEDED', owner: 'only', attempt: 1 });
  });

  it('rejects bad options and keys loudly', () => {
    const client = testClients().dynamodb;
    expect(() => new DynamoDBLedger({ client, tableName: '' })).toThrow(LedgerConfigurationError);
    expect(() => new DynamoDBLedger({ client, tableName, leaseTime: 5 } as never)).toThrow(
      /unknown option 'leaseTime'/,
    );
    expect(() => new DynamoDBLedger({ client, tableName, ttlSeconds: 10, leaseMs: 60_000 })).toThrow(/outlast/);
    expect(() => new DynamoDBLedger({ client, tableName, maxResultBytes: 500_000 })).toThrow(/400 KB/);
    const { ledger } = worker('a');
    return Promise.all([
      expect(ledger.once('', 'p', async () => 1)).rejects.toBeInstanceOf(LedgerConfigurationError),
      expect(ledger.once('k'.repeat(3000), 'p', async () => 1)).rejects.toThrow(/2048/),
    ]);
  });
});
