import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookSink, type WebhookSink } from '../../local/sink/WebhookSink.js';
import { createLedgerTable } from '../../src/ledger/createLedgerTable.js';
import { DynamoDBLedger } from '../../src/ledger/DynamoDBLedger.js';
import { LedgerStoredFailureError } from '../../src/ledger/errors.js';
import { notifyOutputOnce } from '../../src/notify/notifyOutputOnce.js';
import { WebhookDeliveryError } from '../../src/notify/notifyWebhook.js';
import {
  outputNotificationBody,
  outputNotificationKey,
  type PublishedOutput,
} from '../../src/notify/outputNotification.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';

let tableName: string;
let sink: WebhookSink;
const failingKeys = new Map<string, { status: number; times: number }>();

beforeAll(async () => {
  tableName = uniqueName('notify-ledger');
  await createLedgerTable({ client: testClients().dynamodb, tableName });
  // One sink for the file; outputs whose key contains "flaky"/"rejected" get injected answers.
  sink = await startWebhookSink({
    inject: ({ key, attempt }) => {
      const rule = key === null ? undefined : failingKeys.get(key);
      return rule && attempt <= rule.times ? { status: rule.status, body: 'injected' } : undefined;
    },
  });
});
afterAll(async () => {
  await sink.stop();
});

function output(name: string, sha256 = 'a'.repeat(64)): PublishedOutput {
  return {
    bucket: 'rerun-output',
    key: `normalized/${name}.ndjson`,
    sha256,
    records: 3,
    codeVersion: 'normalize@1',
    source: { bucket: 'rerun-input', key: `incoming/${name}.csv` },
  };
}

function ledger(log?: RequestLog) {
  return new DynamoDBLedger({ client: testClients(log).dynamodb, tableName });
}

const deliveriesFor = (key: string) => sink.deliveries().filter((d) => d.key === key);

describe('notifyOutputOnce', () => {
  it('notifies once per output content; a rerun over unchanged input sends nothing', async () => {
    const out = output(uniqueName('a'));
    const url = `${sink.url}/notify`;
    const firstLog = new RequestLog();
    const first = await notifyOutputOnce({ ledger: ledger(firstLog), url, output: out });
    expect(first).toMatchObject({ status: 'executed', dedupeKey: outputNotificationKey(out), result: { status: 200 } });
    expect(firstLog.count({ service: 'DynamoDB' })).toBe(2);

    const rerunLog = new RequestLog();
    const rerun = await notifyOutputOnce({ ledger: ledger(rerunLog), url, output: { ...out } });
    expect(rerun).toMatchObject({ status: 'replayed', result: first.result });
    expect(rerunLog.count({ service: 'DynamoDB' })).toBe(1);

    expect(deliveriesFor(outputNotificationKey(out))).toEqual([
      expect.objectContaining({ attempts: 1, repeats: 0, applied: true, body: outputNotificationBody(out) }),
    ]);
  });

  it('sends a new notification when the output content changes', async () => {
    const name = uniqueName('b');
    const url = `${sink.url}/notify`;
    const v1 = output(name, '1'.repeat(64));
    const v2 = output(name, '2'.repeat(64));
    await notifyOutputOnce({ ledger: ledger(), url, output: v1 });
    const changed = await notifyOutputOnce({ ledger: ledger(), url, output: v2 });
    expect(changed.status).toBe('executed');
    expect(outputNotificationKey(v1)).not.toBe(outputNotificationKey(v2));
    expect(deliveriesFor(outputNotificationKey(v2))).toHaveLength(1);
    expect(deliveriesFor(outputNotificationKey(v1))).toHaveLength(1);
  });

  it('retries after a receiver outage and the receiver applies the notification once', async () => {
    const out = output(uniqueName('flaky'));
    const key = outputNotificationKey(out);
    failingKeys.set(key, { status: 503, times: 1 });
    const url = `${sink.url}/notify`;
    const error = await notifyOutputOnce({ ledger: ledger(), url, output: out }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookDeliveryError);
    expect(error).toMatchObject({ retryable: true, status: 503 });

    const retry = await notifyOutputOnce({ ledger: ledger(), url, output: out });
    expect(retry).toMatchObject({ status: 'executed', attempt: 2 });
    expect(deliveriesFor(key)).toEqual([expect.objectContaining({ attempts: 2, applied: true, repeats: 0 })]);
  });

  it('stores a rejection by the receiver and replays it instead of sending again', async () => {
    const out = output(uniqueName('rejected'));
    const key = outputNotificationKey(out);
    failingKeys.set(key, { status: 400, times: 99 });
    const url = `${sink.url}/notify`;
    await expect(notifyOutputOnce({ ledger: ledger(), url, output: out })).rejects.toMatchObject({
      name: 'WebhookDeliveryError',
      retryable: false,
      status: 400,
    });
    const replay = await notifyOutputOnce({ ledger: ledger(), url, output: out }).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(LedgerStoredFailureError);
    expect((replay as LedgerStoredFailureError).failure.message).toContain('answered 400');
    expect(deliveriesFor(key)).toEqual([expect.objectContaining({ attempts: 1, applied: false })]);
  });

  it('ends the request before the Lambda deadline', async () => {
    const slow = await startWebhookSink({ inject: () => ({ status: 200, delayMs: 3_000 }) });
    try {
      const started = Date.now();
      const error = await notifyOutputOnce({
        ledger: ledger(),
        url: slow.url,
        output: output(uniqueName('slow')),
        remainingTimeMs: 1_500,
      }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'WebhookDeliveryError', retryable: true });
      expect((error as Error).message).toContain('within 500 ms');
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      await slow.stop();
    }
  });
});
