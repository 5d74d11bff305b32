import { afterEach, describe, expect, it } from 'vitest';
import { type SinkRequestInfo, startWebhookSink, type WebhookSink } from '../../local/sink/WebhookSink.js';

const sinks: WebhookSink[] = [];
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.stop()));
});

async function sink(options: Parameters<typeof startWebhookSink>[0] = {}): Promise<WebhookSink> {
  const started = await startWebhookSink(options);
  sinks.push(started);
  return started;
}

async function post(url: string, body: unknown, key?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

describe('WebhookSink', () => {
  it('records a delivery and lists it at GET /deliveries', async () => {
    const s = await sink({ now: () => Date.UTC(2025, 0, 1) });
    const answer = await post(`${s.url}/notify`, { hello: 'world' }, 'k1');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ received: true, key: 'k1', delivery: 1 });
    const listed = await (await fetch(`${s.url}/deliveries`)).json();
    expect(listed).toEqual([
      {
        key: 'k1',
        missingKey: false,
        path: '/notify',
        body: { hello: 'world' },
        attempts: 1,
        applied: true,
        repeats: 0,
        conflicts: 0,
        response: { status: 200, body: answer.text },
        firstReceivedAt: '2025-01-01T00:00:00.000Z',
      },
    ]);
    expect(s.deliveries()).toEqual(listed);
  });

  it('answers a repeated Idempotency-Key with the first response and counts the repeat', async () => {
    const s = await sink();
    const first = await post(`${s.url}/a`, { n: 1 }, 'dup');
    await post(`${s.url}/a`, { n: 9 }, 'other');
    const again = await post(`${s.url}/b`, { n: 1 }, 'dup');
    expect(again).toEqual(first);
    expect(s.deliveries().map(({ key, attempts, repeats, path }) => ({ key, attempts, repeats, path }))).toEqual([
      { key: 'dup', attempts: 2, repeats: 1, path: '/a' },
      { key: 'other', attempts: 1, repeats: 0, path: '/a' },
    ]);
  });

  it('refuses a reused key with a different body (422) and keeps the applied one', async () => {
    const s = await sink();
    await post(s.url, { amount: 1 }, 'k');
    const reused = await post(s.url, { amount: 2 }, 'k');
    expect(reused.status).toBe(422);
    // The same data with another key order is a repeat, not a conflict.
    await post(s.url, '{"b":2,"a":1}', 'k2');
    expect((await post(s.url, '{"a":1,"b":2}', 'k2')).status).toBe(200);
    expect(s.deliveries()).toMatchObject([
      { key: 'k', body: { amount: 1 }, attempts: 2, repeats: 0, conflicts: 1 },
      { key: 'k2', attempts: 2, repeats: 1, conflicts: 0 },
    ]);
  });

  it('records POSTs without the header one by one and flags them', async () => {
    const s = await sink();
    await post(s.url, 'plain text');
    await post(s.url, 'plain text');
    expect(s.deliveries()).toMatchObject([
      { key: null, missingKey: true, body: 'plain text', attempts: 1, applied: true },
      { key: null, missingKey: true, body: 'plain text', attempts: 1, applied: true },
    ]);
  });

  it('fails the first N attempts per key with 503 without applying them', async () => {
    const s = await sink({ failFirst: 2 });
    expect((await post(s.url, {}, 'k')).status).toBe(503);
    expect(s.deliveries()).toMatchObject([{ key: 'k', attempts: 1, applied: false, response: undefined }]);
    expect((await post(s.url, {}, 'k')).status).toBe(503);
    expect((await post(s.url, {}, 'k')).status).toBe(200);
    expect((await post(s.url, {}, 'k')).status).toBe(200);
    expect(s.deliveries()).toMatchObject([{ key: 'k', attempts: 4, applied: true, repeats: 1 }]);
  });

  it('lets a test inject any answer and delay', async () => {
    const seen: SinkRequestInfo[] = [];
    const s = await sink({
      inject: (info) => {
        seen.push(info);
        return info.path === '/slow' ? { status: 504, body: 'late', delayMs: 200 } : undefined;
      },
    });
    const started = Date.now();
    expect(await post(`${s.url}/slow`, {}, 's')).toEqual({ status: 504, text: 'late' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect((await post(`${s.url}/fast`, {}, 'f')).status).toBe(200);
    expect(seen).toEqual([
      { key: 's', path: '/slow', attempt: 1 },
      { key: 'f', path: '/fast', attempt: 1 },
    ]);
  });

  it('answers 413 to an oversized body and 404 to other methods, recording neither', async () => {
    const s = await sink({ maxBodyBytes: 10 });
    expect((await post(s.url, 'x'.repeat(100), 'big')).status).toBe(413);
    expect((await fetch(`${s.url}/deliveries`, { method: 'DELETE' })).status).toBe(404);
    expect(s.deliveries()).toEqual([]);
  });

  it('stops listening', async () => {
    const s = await startWebhookSink();
    await s.stop();
    await expect(fetch(`${s.url}/deliveries`)).rejects.toThrow();
  });
});
