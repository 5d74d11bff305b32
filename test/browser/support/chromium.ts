import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';

/** Debian's chromium (apt-get install chromium); playwright-core never downloads a browser. */
export const CHROMIUM = process.env.RERUN_CHROMIUM || '/usr/bin/chromium';

/** Headless in a container: no sandbox, no GPU, nothing fetched in the background. */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A page of a headless Chromium at 1280x800, in a fresh profile; `close` ends it and removes the profile. */
export interface ChromiumPage {
  readonly page: Page;
  close(): Promise<void>;
}

/**
 * Starts Debian's Chromium headless with a profile of its own, and opens one page.
 *
 * @example
 * const browser = await openChromiumPage();
 * await browser.page.goto(url);
 * await browser.close();
 */
export async function openChromiumPage(): Promise<ChromiumPage> {
  const profile = mkdtempSync(join(tmpdir(), 'rerun-chromium-'));
  const context = await chromium
    .launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1280, height: 800 },
    })
    .catch((error: unknown) => {
      rmSync(profile, { recursive: true, force: true });
      throw error;
    });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
