import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevReady } from '../../app/dev/runDev.js';
import { createAwsClients } from '../../src/aws/clients.js';
import { type ChromiumPage, openChromiumPage } from './support/chromium.js';
import { type CliProcess, startCli } from './support/cliProcess.js';
import { cliEnv, normalizedOutputExists, runCliAgainst, until } from './support/devSession.js';

/** Its own app name, so a developer's `npm start` on the same machine is left alone. */
const APP = 'demoui';
/** The demo's dated samples (the dt= folders of examples/) and their counts per day. */
const DEMO_DAYS = { '2026-03-01': 1, '2026-03-02': 2, '2026-03-03': 1 } as const;
const DATED = [
  'dt=2026-03-01/orders.csv',
  'dt=2026-03-02/orders.csv',
  'dt=2026-03-02/readings.ndjson',
  'dt=2026-03-03/orders.csv',
];

/**
 * The "done when": `npm start` (`rerun dev --demo`), then `npx rerun ui` with no window,
 * shows the demo's days; then a backfill of them shows in Live while it runs, and the days turn
 * published.
 */
describe('rerun ui after npm start: the demo in a browser', () => {
  let dev: CliProcess;
  let ui: CliProcess;
  let ready: DevReady;
  let browser: ChromiumPage;
  let page: Page;
  let devPaused = false;

  const resume = () => {
    if (devPaused && dev.child.pid) process.kill(dev.child.pid, 'SIGCONT');
    devPaused = false;
  };

  beforeAll(async () => {
    dev = startCli(['dev', '--demo', '--app-name', APP], cliEnv());
    ready = JSON.parse(await dev.line('READY ')) as DevReady;
    const clients = createAwsClients({ endpoint: ready.endpoint, region: ready.region });
    // One deadline for the four samples.
    const deadline = Date.now() + 90_000;
    for (const key of DATED) {
      const normalized = normalizedOutputExists(clients, ready, key);
      await until(`the demo to normalize ${key}`, normalized, deadline - Date.now(), dev.stderr);
    }
    ui = startCli(['ui', '--app-name', APP], cliEnv());
    const url = await ui.line('URL ', 30_000);
    browser = await openChromiumPage();
    page = browser.page;
    await page.goto(url);
  }, 240_000);

  afterAll(async () => {
    resume();
    await browser?.close();
    await ui?.stop();
    await dev?.stop(30_000);
  }, 60_000);

  it("opens on the demo's days, each with its count, normalized and not yet summarized", async () => {
    const tile = (day: string) => page.locator(`.day[data-day="${day}"]`);
    await tile('2026-03-03').waitFor();
    // None of the last 14 days has inputs: the window is the 14 days up to the demo's last.
    expect(await page.locator('#window').textContent()).toBe('2026-02-18 → 2026-03-03');
    for (const [day, n] of Object.entries(DEMO_DAYS)) {
      expect(await tile(day).getAttribute('data-status')).toBe('missing');
      expect(await tile(day).locator('.count').textContent()).toBe(`${n} input${n === 1 ? '' : 's'}`);
    }
    expect(await page.locator('.day[data-day="undated"]').count()).toBe(1);
  });

  it('shows a backfill of them in Live while it runs, with its progress, and then its end', async () => {
    await page.locator('.tabs button[data-view="live"]').click();
    await page.locator('#runs p, #runs .run').first().waitFor();
    // The local worker paused: the backfill's tasks wait in the queue, and so does the backfill.
    if (!dev.child.pid) throw new Error('rerun dev has no process id');
    process.kill(dev.child.pid, 'SIGSTOP');
    devPaused = true;
    const args = ['backfill', '--from', '2026-03-01', '--to', '2026-03-03', '--wait', '--poll-interval', '300'];
    const backfill = runCliAgainst(ready, [...args, '--timeout', '180', '--app-name', APP]);
    try {
      const running = page.locator('#runs .run[data-command="backfill"][data-state="running"]', {
        hasText: '0/3 days published',
      });
      await running.waitFor({ timeout: 60_000 });
      expect(await running.locator('.run-head b').textContent()).toBe('backfill 2026-03-01..2026-03-03 (mode stale)');
      expect(await running.locator('.phase').textContent()).toBe('waiting');
      expect(await running.textContent()).toMatch(/queued \d+ · in flight \d+/);
    } finally {
      resume();
    }
    const { code, stderr } = await backfill;
    expect(code, stderr).toBe(0);
    const ended = page.locator('#runs .run[data-command="backfill"][data-state="ended"]');
    await ended.waitFor({ timeout: 30_000 });
    expect(await ended.textContent()).toMatch(/ended, exit 0.*3\/3 days published/);
    // It is no longer "waiting".
    expect(await ended.locator('.phase').textContent()).toBe('done');

    await page.locator('.tabs button[data-view="days"]').click();
    await page.locator('#refresh-days').click();
    await page.locator('.day[data-day="2026-03-03"][data-status="published"]').waitFor({ timeout: 30_000 });
    for (const day of Object.keys(DEMO_DAYS)) {
      expect(await page.locator(`.day[data-day="${day}"]`).getAttribute('data-status')).toBe('published');
    }
  });
});
