import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevReady } from '../../app/dev/runDev.js';
import { type AwsClients, createAwsClients } from '../../src/aws/clients.js';
import { ordersCsv } from '../support/summaryPipeline.js';
import { CHROMIUM, type ChromiumPage, openChromiumPage } from './support/chromium.js';
import { type CliProcess, startCli } from './support/cliProcess.js';
import { cliEnv, normalizedOutputExists, runCliAgainst, until as untilWithin } from './support/devSession.js';

/** With RERUN_CONSOLE_SCREENSHOTS=1 the views are saved to docs/console/ (the README shows them). */
const SHOTS = process.env.RERUN_CONSOLE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs', 'console') : undefined;
const APP = 'acme';

/** The page's window, as far as the checks use it (the project's types have no DOM library). */
type BrowserWindow = { getComputedStyle(element: unknown): { backgroundColor: string } };

/** The seeded days: what each holds and what `rerun status` must call it. */
const SEED: Record<string, string[]> = {
  '2026-03-02': ['orders-eu.csv', 'orders-us.csv'],
  '2026-03-03': ['orders-eu.csv', 'orders-us.csv', 'returns.csv'],
  '2026-03-04': ['orders-eu.csv', 'orders-poison.csv'],
  '2026-03-05': ['orders-eu.csv', 'orders-with-bad-rows.csv', 'notes.txt'],
  '2026-03-06': ['orders-eu.csv', 'orders-us.csv'],
  '2026-03-07': ['orders-eu.csv'],
};

describe('rerun ui in a browser: what a person sees', () => {
  let dev: CliProcess;
  let ui: CliProcess;
  let ready: DevReady;
  let clients: AwsClients;
  let browser: ChromiumPage;
  let page: Page;
  let url: string;

  const upload = (key: string, body: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: ready.inputBucket, Key: `incoming/${key}`, Body: body }));
  const depth = async (queueUrl: string) =>
    Number(
      (
        await clients.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
        )
      ).Attributes?.ApproximateNumberOfMessages ?? 0,
    );
  const until = (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) =>
    untilWithin(what, check, timeoutMs, dev.stderr);
  const outputExists = (key: string) => normalizedOutputExists(clients, ready, key);
  /** `rerun backfill --wait` of a window, in process, against the dev session's emulator. */
  const backfill = (from: string, to: string) =>
    runCliAgainst(ready, [
      'backfill',
      '--from',
      from,
      '--to',
      to,
      '--wait',
      '--poll-interval',
      '200',
      '--timeout',
      '60',
      '--app-name',
      APP,
    ]);

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
    dev = startCli(
      [
        'dev',
        '--app-name',
        APP,
        '--handler',
        'test/browser/support/seedHandler.ts',
        // Generous timeouts (a loaded machine must not turn a slow batch into dead letters), and
        // two receives before the DLQ.
        '--max-receive-count',
        '2',
        '--visibility-timeout',
        '6',
        '--function-timeout',
        '5',
      ],
      cliEnv(),
    );
    ready = JSON.parse(await dev.line('READY ')) as DevReady;
    clients = createAwsClients({ endpoint: ready.endpoint, region: ready.region });
    for (const [day, files] of Object.entries(SEED)) {
      for (const file of files) {
        const body = file.includes('bad-rows')
          ? ordersCsv(`${day}-${file}`, 3, { bad: true })
          : file.endsWith('.txt')
            ? 'not a supported type\n'
            : ordersCsv(`${day}-${file}`, 4);
        await upload(`dt=${day}/${file}`, body);
      }
    }
    // A message that is no S3 event: rejected for good on its first receive, and it would be again.
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: ready.queueUrl, MessageBody: 'not an S3 event' }));
    // Both reach the DLQ after their receives (the poison with a recorded reason).
    await until('two dead letters', async () => (await depth(ready.dlqUrl)) === 2, 90_000);
    await until('the last output', outputExists('dt=2026-03-07/orders-eu.csv'));
    const backfilled = await backfill('2026-03-02', '2026-03-06');
    expect(backfilled.code, backfilled.stderr).toBe(0);
    // A late file for a published day: its summary is stale now.
    await upload('dt=2026-03-06/orders-late.csv', ordersCsv('late', 2));
    await until('the late output', outputExists('dt=2026-03-06/orders-late.csv'));

    ui = startCli(['ui', '--app-name', APP, '--from', '2026-03-01', '--to', '2026-03-10'], cliEnv());
    url = await ui.line('URL ', 30_000);
    browser = await openChromiumPage();
    page = browser.page;
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    await dev?.stop(30_000);
  }, 60_000);

  it('shows each day coloured by its rerun status, with its count, and a failure reason in the day', async () => {
    await page.goto(url);
    const tile = (day: string) => page.locator(`.day[data-day="${day}"]`);
    await tile('2026-03-02').waitFor();
    const seen = async (day: string) => ({
      status: await tile(day).getAttribute('data-status'),
      count: await tile(day).locator('.count').textContent(),
      colour: await tile(day).evaluate(
        (e) => (globalThis as unknown as BrowserWindow).getComputedStyle(e).backgroundColor,
      ),
    });
    const green = 'rgb(46, 158, 91)';
    expect(await seen('2026-03-02')).toEqual({ status: 'published', count: '2 inputs', colour: green });
    expect(await seen('2026-03-04')).toEqual({ status: 'published', count: '2 inputs', colour: green });
    expect(await tile('2026-03-04').locator('.badge').textContent()).toBe('1 DLQ');
    expect(await seen('2026-03-06')).toEqual({ status: 'stale', count: '3 inputs', colour: 'rgb(224, 165, 38)' });
    expect(await seen('2026-03-07')).toEqual({ status: 'missing', count: '1 input', colour: 'rgb(184, 190, 199)' });
    expect(await seen('2026-03-10')).toMatchObject({ status: 'missing', count: '0 inputs' });
    // A day without inputs is not a gap: its tile says so instead of "missing".
    expect(await tile('2026-03-10').locator('.status').textContent()).toBe('no inputs');
    expect(await tile('2026-03-07').locator('.status').textContent()).toBe('missing');
    expect(await page.locator('#days-cost').textContent()).toMatch(
      /^4 published, 1 missing, 1 stale, 4 with no inputs · \d+ list \+ \d+ HEAD requests$/,
    );

    await tile('2026-03-04').click();
    const poison = page.locator('#inputs tr[data-key="incoming/dt=2026-03-04/orders-poison.csv"]');
    await poison.waitFor();
    expect(await poison.getAttribute('data-class')).toBe('dead-lettered');
    expect(await poison.locator('.why').textContent()).toBe('Error: cannot parse amount "1.000,50" (bug #42)');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'days.png') });
  });

  it('keeps the token out of the address bar and out of cookies, so a second server on 127.0.0.1 never receives it', async () => {
    await page.goto(url);
    await page.locator('.day[data-day="2026-03-02"]').waitFor();
    const token = new URL(url).searchParams.get('token') ?? '';
    expect(token.length).toBeGreaterThan(20);
    expect(page.url()).not.toContain('token=');
    const cookies = await page.evaluate(
      () => (globalThis as unknown as { document: { cookie: string } }).document.cookie,
    );
    expect(cookies).toBe('');
    // A reload still works: the tab keeps the token in its sessionStorage (per origin, port included).
    await page.reload();
    await page.locator('.day[data-day="2026-03-02"]').waitFor();

    // Another server on the same host, another port: what the browser sends it when this browser goes there.
    const seen: { url: string; headers: Record<string, string | string[] | undefined> }[] = [];
    const other = createServer((request, response) => {
      seen.push({ url: request.url ?? '', headers: request.headers });
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end('<!doctype html><title>another server</title>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', () => resolve()));
    const otherPage = await page.context().newPage();
    try {
      await otherPage.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/elsewhere`);
    } finally {
      await otherPage.close();
      // Chromium keeps its sockets to the server open (one it preconnected never sent a request): end them.
      await new Promise<void>((resolve) => {
        other.close(() => resolve());
        other.closeAllConnections();
      });
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const request of seen) {
      expect(request.headers.cookie, request.url).toBeUndefined();
      expect(JSON.stringify(request), request.url).not.toContain(token);
    }
  });

  it('cannot be framed by a page of another server', async () => {
    // Another server on the same host whose page frames the console, token and all.
    const other = createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end(`<!doctype html><title>framing page</title><iframe id="console" src="${url}"></iframe>`);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', () => resolve()));
    const framing = await page.context().newPage();
    try {
      const consoleAnswered = framing.waitForResponse((r) => r.url().startsWith(new URL(url).origin));
      await framing.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      // The console answered the frame's request; Chromium then refused to show it (frame-ancestors 'none').
      expect((await consoleAnswered).status()).toBe(200);
      const frame = framing.frames().find((f) => f !== framing.mainFrame());
      expect(frame, 'the framing page has its frame').toBeDefined();
      await framing.waitForLoadState('load');
      expect(await frame?.locator('.day').count()).toBe(0);
      expect(frame?.url()).not.toContain(new URL(url).origin);
    } finally {
      await framing.close();
      await new Promise<void>((resolve) => {
        other.close(() => resolve());
        other.closeAllConnections();
      });
    }
  });

  it("shows an input's output and quarantine lines", async () => {
    await page.locator('.day[data-day="2026-03-05"]').click();
    const row = page.locator('#inputs tr[data-key="incoming/dt=2026-03-05/orders-with-bad-rows.csv"]');
    await row.click();
    const panels = page.locator('#output .panel');
    await panels.nth(2).waitFor();
    expect(await panels.nth(1).locator('pre.lines').textContent()).toContain(
      '"id":"2026-03-05-orders-with-bad-rows.csv-0"',
    );
    expect(await panels.nth(2).locator('pre.lines').textContent()).toContain('"reason"');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'output.png') });
  });

  it('shows each dead letter with its failure record and the command to run, receiving nothing from the DLQ', async () => {
    await page.locator('.tabs button[data-view="dead-letters"]').click();
    const panel = page.locator('#dlqs .panel[data-queue="normalize"]');
    await panel.locator('tbody tr').nth(1).waitFor();
    const rows = await panel
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-message-id'),
          ...[...tr.querySelectorAll('td')].map((td) => td.textContent),
        ]),
      );
    const bySubject = Object.fromEntries(rows.map((r) => [r[1], r]));
    expect(bySubject[`s3://${ready.inputBucket}/incoming/dt=2026-03-04/orders-poison.csv`]?.slice(2)).toEqual([
      '2 of 2',
      'Error: cannot parse amount "1.000,50" (bug #42)',
      'receives ran out: may succeed after a fix',
    ]);
    // The message that is no S3 event: its record names no object, so the row names its message.
    const invalid = rows.find((r) => r[1] === `message ${r[0]}`);
    expect(invalid?.[3]).toMatch(/S3 event/);
    expect(invalid?.[4]).toBe('non-retryable');
    expect(rows).toHaveLength(2);
    expect(await panel.locator('[data-stat="depth"] b').textContent()).toBe('2');
    expect(await panel.locator('.redrive-command').textContent()).toBe(
      `rerun redrive --queue normalize --app-name ${APP}`,
    );
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'dead-letters.png') });
  });

  it('shows an outcome live, as it happens after an upload, with the queues', async () => {
    await page.locator('.tabs button[data-view="live"]').click();
    await page.locator('#queues .card[data-queue="normalize DLQ"]').waitFor();
    expect(await page.locator('#queues .card[data-queue="normalize DLQ"] .big').textContent()).toBe('2');
    const subject = `s3://${ready.inputBucket}/incoming/dt=2026-03-09/orders-fresh.csv`;
    expect(await page.locator('#outcomes tbody tr', { hasText: subject }).count()).toBe(0);
    await upload('dt=2026-03-09/orders-fresh.csv', ordersCsv('fresh', 5));
    const row = page.locator('#outcomes tbody tr', { hasText: subject });
    await row.waitFor({ timeout: 30_000 });
    expect(await row.getAttribute('data-status')).toBe('processed');
    expect(await row.locator('.why').textContent()).toMatch(/^output created: records 5/);
    await page.locator('#chart rect').first().waitFor();
    // The chart has axes: outcomes per interval from 0 to the peak, and the minutes before now.
    const yAxis = await page.locator('#chart-y span').allTextContents();
    expect(yAxis).toHaveLength(3);
    expect(yAxis[2]).toBe('0');
    expect(Number(yAxis[0])).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#chart-x span').allTextContents()).toEqual([
      expect.stringMatching(/^\d+ min ago$/),
      expect.stringMatching(/^\d+ min ago$/),
      'now',
    ]);
    // The backfill the seeding ran, from its run file: ended, with its progress.
    const run = page.locator('#runs .run[data-command="backfill"]');
    await run.waitFor();
    expect(await run.getAttribute('data-state')).toBe('ended');
    expect(await run.locator('.run-head b').textContent()).toBe('backfill 2026-03-02..2026-03-06 (mode stale)');
    expect(await run.textContent()).toMatch(/ended, exit 0.*5\/5 days published/);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'live.png') });
  });
});
