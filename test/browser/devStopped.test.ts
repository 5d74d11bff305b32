import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevReady } from '../../app/dev/runDev.js';
import { createAwsClients } from '../../src/aws/clients.js';
import { ordersCsv } from '../support/summaryPipeline.js';
import { CHROMIUM, type ChromiumPage, openChromiumPage } from './support/chromium.js';
import { type CliProcess, startCli } from './support/cliProcess.js';
import { cliEnv, normalizedOutputExists, until } from './support/devSession.js';

/** With RERUN_CONSOLE_SCREENSHOTS=1 the page is saved to docs/console/ while its rerun dev is stopped. */
const SHOTS = process.env.RERUN_CONSOLE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs', 'console') : undefined;
const APP = 'stopper';

describe('rerun ui in a browser when its rerun dev stops', () => {
  let dev: CliProcess;
  let next: CliProcess | undefined;
  let ui: CliProcess;
  let browser: ChromiumPage;
  let page: Page;
  let url: string;

  const startDev = async (): Promise<{ dev: CliProcess; ready: DevReady }> => {
    const started = startCli(['dev', '--app-name', APP], cliEnv());
    return { dev: started, ready: JSON.parse(await started.line('READY ')) as DevReady };
  };

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
    const first = await startDev();
    dev = first.dev;
    const { ready } = first;
    const clients = createAwsClients({ endpoint: ready.endpoint, region: ready.region });
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: ready.inputBucket,
        Key: 'incoming/dt=2026-03-02/orders.csv',
        Body: ordersCsv('o', 3),
      }),
    );
    await until('the output', normalizedOutputExists(clients, ready, 'dt=2026-03-02/orders.csv'), 60_000, dev.stderr);
    ui = startCli(['ui', '--app-name', APP, '--from', '2026-03-01', '--to', '2026-03-03'], cliEnv());
    url = await ui.line('URL ', 30_000);
    browser = await openChromiumPage();
    page = browser.page;
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    await dev?.stop(30_000);
    await next?.stop(30_000);
  }, 90_000);

  it('keeps what it showed, says which rerun dev stopped and how to start it again, and reads the next one', async () => {
    await page.goto(url);
    const tile = page.locator('.day[data-day="2026-03-02"]');
    await tile.waitFor();
    expect(await tile.locator('.count').textContent()).toBe('1 input');
    const pid = dev.child.pid;
    expect(await page.locator('#target').textContent()).toMatch(
      new RegExp(`^rerun dev of app ${APP} \\(pid ${pid}\\)`),
    );
    await page.locator('.tabs button[data-view="live"]').click();
    const card = page.locator('#queues .card[data-queue="normalize queue"]');
    await card.waitFor();

    // Ctrl+C in the terminal of rerun dev: its emulator goes with it. The open Live view notices by itself.
    await dev.stop(30_000);
    const banner = page.locator('#stopped');
    await banner.waitFor({ state: 'visible', timeout: 30_000 });
    const said = (await banner.textContent()) ?? '';
    expect(await page.locator('#stopped-what').textContent()).toMatch(
      new RegExp(
        `^The rerun dev of app ${APP} \\(pid ${pid}\\) at http://127\\.0\\.0\\.1:\\d+ has stopped: nothing answers there\\.`,
      ),
    );
    expect(said).toContain(`Start it again with: rerun dev --app-name ${APP}`);
    expect(said).toContain('This page keeps what it last showed');
    expect(await page.locator('#stopped-restart').textContent()).toBe(`rerun dev --app-name ${APP}`);
    expect(await page.locator('body').textContent()).not.toContain('AWS_ENDPOINT_URL');
    // What it showed stays: the queue cards, and the days.
    expect(await card.isVisible()).toBe(true);
    await page.locator('.tabs button[data-view="days"]').click();
    expect(await tile.locator('.count').textContent()).toBe('1 input');
    await page.locator('#refresh-days').click();
    await page.waitForTimeout(1000);
    expect(await tile.locator('.count').textContent()).toBe('1 input');
    expect(await banner.isVisible()).toBe(true);
    // A view not opened before says it was not read, instead of reading forever.
    await page.locator('.tabs button[data-view="dead-letters"]').click();
    await page.locator('#dlqs', { hasText: 'Not read: see above.' }).waitFor({ timeout: 10_000 });
    await page.locator('.tabs button[data-view="days"]').click();
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, 'dev-stopped.png') });
    }

    // Started again (a new emulator at a new endpoint, empty): the page reads it by itself.
    const again = await startDev();
    next = again.dev;
    await banner.waitFor({ state: 'hidden', timeout: 30_000 });
    await page.locator('#target', { hasText: `pid ${next.child.pid}` }).waitFor({ timeout: 10_000 });
    expect(await page.locator('#target').textContent()).toContain(again.ready.endpoint);
    await page.locator('.day[data-day="2026-03-02"] .count', { hasText: '0 inputs' }).waitFor({ timeout: 10_000 });
  });
});
