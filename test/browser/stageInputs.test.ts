import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishDevSession } from '../../app/common/devSessionFile.js';
import { type MotoServer, startMotoServer } from '../../local/emulator/motoServer.js';
import { type AwsClients, createAwsClients } from '../../src/aws/clients.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline } from '../../src/pipeline/pipelineDescription.js';
import { CHROMIUM, type ChromiumPage, openChromiumPage } from './support/chromium.js';
import { type CliProcess, startCli } from './support/cliProcess.js';

const APP = 'flatuploads';

/** A user's pipeline of one object stage over a flat prefix: no partitions, no window stage. */
const pipeline = definePipeline({
  name: 'uploads',
  stages: {
    upper: {
      kind: 'object',
      input: { prefix: 'uploads/' },
      outputKey: { prefix: 'upper/', stripPrefix: 'uploads/' },
      codeVersion: 'upper@1',
    },
  },
});

describe("rerun ui in a browser on a user's object stage whose inputs are not keyed by day", () => {
  let moto: MotoServer;
  let clients: AwsClients;
  let session: ReturnType<typeof publishDevSession>;
  let ui: CliProcess;
  let browser: ChromiumPage;
  let page: Page;
  let url: string;
  const inputBucket = `${APP}-input`;
  const outputBucket = `${APP}-output`;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
    moto = await startMotoServer();
    clients = createAwsClients({ endpoint: moto.endpoint, region: 'us-east-1' });
    for (const bucket of [inputBucket, outputBucket])
      await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const queue = async (name: string) =>
      (await clients.sqs.send(new CreateQueueCommand({ QueueName: `${APP}-${name}` }))).QueueUrl as string;
    const urls = {
      queueUrl: await queue('normalize-queue'),
      dlqUrl: await queue('normalize-dlq'),
      summaryQueueUrl: await queue('summarize-queue'),
      summaryDlqUrl: await queue('summarize-dlq'),
    };
    for (const key of ['uploads/a.csv', 'uploads/b.csv']) {
      await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: key, Body: key }));
    }
    const output = deterministicKey({
      prefix: 'upper/',
      source: { bucket: inputBucket, key: 'uploads/a.csv' },
      stripPrefix: 'uploads/',
    });
    await clients.s3.send(new PutObjectCommand({ Bucket: outputBucket, Key: output, Body: 'A\n' }));
    // A running rerun dev of the pipeline, as its session file records it (this process is the session's).
    const env: NodeJS.ProcessEnv = {
      XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), 'rerun-uiflat-state-')),
      PATH: process.env.PATH ?? '',
    };
    session = publishDevSession(
      {
        appName: APP,
        endpoint: moto.endpoint,
        region: 'us-east-1',
        emulator: 'embedded',
        inputBucket,
        outputBucket,
        ...urls,
        pipeline: describePipeline(pipeline),
      },
      { env, pid: process.pid },
    );
    ui = startCli(['ui', '--app-name', APP, '--from', '2026-12-05', '--to', '2026-12-05'], env);
    url = await ui.line('URL ', 30_000);
    browser = await openChromiumPage();
    page = browser.page;
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    session?.close();
    await moto?.stop();
  }, 60_000);

  it('shows no day of zero inputs: it says why, and opens all the inputs as one group', async () => {
    await page.goto(url);
    const tile = page.locator('.day[data-day="undated"]');
    await tile.waitFor();
    expect(await page.locator('.day').count()).toBe(1);
    expect(await tile.locator('.date').textContent()).toBe('All inputs');
    expect(await tile.locator('.count').textContent()).toBe('2 inputs');
    const note = page.locator('#days-note');
    expect(await note.isVisible()).toBe(true);
    expect(await note.textContent()).toBe(
      'No days: stage "upper" declares no time partitions: its inputs under uploads/ are shown as one group, all inputs, not by day.',
    );
    // Nothing dated: the page opens the one group, classified by the stage's own key rule.
    const row = page.locator('#inputs tr[data-key="uploads/a.csv"]');
    await row.waitFor();
    expect(await page.locator('#day-title').textContent()).toBe('All inputs');
    expect(await row.getAttribute('data-class')).toBe('covered');
    expect(await page.locator('#inputs tr[data-key="uploads/b.csv"]').getAttribute('data-class')).toBe('pending');
  });
});
