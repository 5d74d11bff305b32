import { afterEach, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../local/runner/freeLoopbackPort.js';
import { type SinkFault, startWebhookSink, type WebhookSink } from '../../local/sink/WebhookSink.js';
import { notifyWebhook, WebhookDeliveryError } from '../../src/notify/notifyWebhook.js';

const sinks: WebhookSink[] = [];
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.stop()));
});

async function sinkAnswering(fault?: SinkFault): Promise<WebhookSink> {
  const sink = await startWebhookSink(fault ? { inject: () => fault } : {});
  sinks.push(sink);
  return sink;
}

async function failure(promise: Promise<unknown>): Promise<WebhookDeliveryError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebhookDeliveryError) return error;
    throw error;
  }
  throw new Error('expected a WebhookDeliveryError');
}

describe('notifyWebhook', () => {
  it('POSTs the JSON body with the dedupe key as Idempotency-Key and returns the answer', async () => {
    const sink = await sinkAnswering();
    const answer = await notifyWebhook({
      url: `${sink.url}/hooks/rerun`,
      body: { output: 'normalized/a.ndjson' },
      dedupeKey: 'rerun-notify-v1-abc',
      headers: { authorization: 'Bearer t' },
    });
    expect(answer).toEqual({
      status: 200,
      body: JSON.stringify({ received: true, key: 'rerun-notify-v1-abc', delivery: 1 }),
    });
    expect(sink.deliveries()).toMatchObject([
      { key: 'rerun-notify-v1-abc', path: '/hooks/rerun', body: { output: 'normalized/a.ndjson' }, attempts: 1 },
    ]);
  });

  it.each([408, 429, 500, 503])('treats %i as retryable', async (status) => {
    const sink = await sinkAnswering({ status, body: 'busy' });
    const error = await failure(notifyWebhook({ url: sink.url, body: {}, dedupeKey: 'k' }));
    expect(error).toMatchObject({ retryable: true, status });
    expect(error.message).toContain(`answered ${status}`);
  });

  it.each([400, 401, 404, 409, 422])(
    'treats %i as terminal, naming the status and the start of the body',
    async (status) => {
      const sink = await sinkAnswering({ status, body: 'field "output" is required' });
      const error = await failure(notifyWebhook({ url: sink.url, body: {}, dedupeKey: 'k' }));
      expect(error).toMatchObject({ retryable: false, status });
      expect(error.message).toContain('field "output" is required');
    },
  );

  it('does not follow a redirect (a POST turned into a GET would drop the notification)', async () => {
    const target = await sinkAnswering();
    const redirecting = await startWebhookSink({ inject: () => ({ status: 302, body: '' }) });
    sinks.push(redirecting);
    const error = await failure(notifyWebhook({ url: redirecting.url, body: {}, dedupeKey: 'k' }));
    expect(error).toMatchObject({ retryable: false, status: 302 });
    expect(target.deliveries()).toEqual([]);
  });

  it('reads a numeric Retry-After and never echoes the query string (it may hold a secret)', async () => {
    const error = await failure(
      notifyWebhook({
        url: 'http://127.0.0.1:1/hook?token=SECRET',
        body: {},
        dedupeKey: 'k',
        fetch: async () => new Response('slow down', { status: 429, headers: { 'retry-after': '7' } }),
      }),
    );
    expect(error).toMatchObject({ retryable: true, status: 429, retryAfterSeconds: 7 });
    expect(error.message).not.toContain('SECRET');
  });

  it('times out as a retryable error', async () => {
    const sink = await sinkAnswering({ status: 200, delayMs: 2_000 });
    const started = Date.now();
    const error = await failure(notifyWebhook({ url: sink.url, body: {}, dedupeKey: 'k', timeoutMs: 200 }));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(error).toMatchObject({ retryable: true, status: undefined });
    expect(error.message).toContain('did not answer within 200 ms');
  });

  it('reports an unreachable receiver as retryable', async () => {
    const port = await freeLoopbackPort();
    const error = await failure(notifyWebhook({ url: `http://127.0.0.1:${port}/`, body: {}, dedupeKey: 'k' }));
    expect(error).toMatchObject({ retryable: true, status: undefined });
    expect(error.message).toMatch(/could not be reached.*ECONNREFUSED/);
  });

  it('keeps only a bounded excerpt of a large 2xx body', async () => {
    const error = await notifyWebhook({
      url: 'http://127.0.0.1:1/',
      body: {},
      dedupeKey: 'k',
      fetch: async () => new Response('y'.repeat(100_000), { status: 201 }),
    });
    expect(error.status).toBe(201);
    expect(error.body).toHaveLength(1024);
  });

  it('refuses a dedupe key that cannot be a header, and an invalid URL, as terminal', async () => {
    expect(await failure(notifyWebhook({ url: 'http://127.0.0.1:1/', body: {}, dedupeKey: 'a\nb' }))).toMatchObject({
      retryable: false,
    });
    expect(await failure(notifyWebhook({ url: 'not a url', body: {}, dedupeKey: 'k' }))).toMatchObject({
      retryable: false,
    });
  });
});
