import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
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

const APP = 'clickstream';
const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;

/** A user's pipeline: clicks keyed `year=/month=/day=/hour=/`, counted by an hourly window stage. */
const pipeline = definePipeline({
  name: 'clickstream',
  stages: {
    clicks: {
      kind: 'object',
      input: { prefix: 'clicks/' },
      outputKey: { prefix: 'clicks-out/', stripPrefix: 'clicks/' },
      partitions: HOURLY,
      codeVersion: 'clicks@1',
    },
    hourly: {
      kind: 'window',
      input: { stage: 'clicks' },
      partitions: HOURLY,
      outputPrefix: 'hourly/',
      fileName: 'counts.json',
      codeVersion: 'hourly@2',
    },
  },
});

describe("rerun ui in a browser on a user's hourly window stage", () => {
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
      hourly: { queueUrl: await queue('hourly-queue'), dlqUrl: await queue('hourly-dlq') },
    };
    for (const path of [
      'year=2026/month=12/day=05/hour=13/a.json',
      'year=2026/month=12/day=05/hour=13/b.json',
      'year=2026/month=12/day=05/hour=14/c.json',
    ]) {
      const key = `clicks/${path}`;
      await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: key, Body: key }));
      const output = deterministicKey({
        prefix: 'clicks-out/',
        source: { bucket: inputBucket, key },
        stripPrefix: 'clicks/',
      });
      await clients.s3.send(new PutObjectCommand({ Bucket: outputBucket, Key: output, Body: `${path}\n` }));
    }
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: urls.hourly.dlqUrl, MessageBody: '{"window":"x"}' }));
    // A running rerun dev of the pipeline, as its session file records it (this process is the session's).
    const env: NodeJS.ProcessEnv = {
      XDG_RUNTIME_DIR: mkdtempSync(join(tmpdir(), 'rerun-uiwin-state-')),
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
        queueUrl: urls.queueUrl,
        dlqUrl: urls.dlqUrl,
        summaryQueueUrl: urls.summaryQueueUrl,
        summaryDlqUrl: urls.summaryDlqUrl,
        pipeline: describePipeline(pipeline),
        windowStages: { hourly: urls.hourly },
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

  it("shows the stage's hours, and an hour's inputs listed by its year=/month=/day=/hour=/ keys", async () => {
    await page.goto(url);
    const hour = page.locator('.day[data-day="2026-12-05T13"]');
    await hour.waitFor();
    expect(await page.locator('.day').count()).toBe(24);
    expect(await hour.locator('.date').textContent()).toBe('2026-12-05T13');
    expect(await hour.locator('.count').textContent()).toBe('2 inputs');
    await hour.click();
    const root = `clicks-out/${inputBucket}/year=2026/month=12/day=05`;
    const row = page.locator(`#inputs tr[data-key="${root}/hour=13/a.json"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-class')).toBe('input');
    expect(await page.locator('#inputs tbody tr').evaluateAll((rows) => rows.length)).toBe(2);
    expect(await row.locator('.why').textContent()).toBe("read by the window's build (an output of stage clicks)");
  });

  it("labels the window stage's queue rows and DLQ panel by its name", async () => {
    await page.goto(url);
    await page.locator('.tabs button[data-view="live"]').click();
    const card = page.locator('#queues .card[data-stage="hourly"]');
    await card.first().waitFor();
    expect(await card.locator('.name').allTextContents()).toEqual(['hourly queue', 'hourly DLQ']);
    expect(await page.locator('#queues .card[data-queue="hourly DLQ"] .big').textContent()).toBe('1');
    expect(await card.locator('.sub').allTextContents()).toContain('window stage hourly, given up: see Dead letters');
    await page.locator('.tabs button[data-view="dead-letters"]').click();
    const panel = page.locator('#dlqs .panel[data-stage="hourly"]');
    await panel.waitFor();
    expect(await panel.locator('h2').textContent()).toBe('hourly dead-letter queue (window stage)');
    expect(await panel.locator('[data-stat="depth"] b').textContent()).toBe('1');
  });

  it("labels the object stage's queue rows and DLQ panel by the stage, with the worker queue's role", async () => {
    await page.goto(url);
    await page.locator('.tabs button[data-view="live"]').click();
    const queue = page.locator('#queues .card[data-queue="clicks queue"]');
    await queue.waitFor();
    expect(await page.locator('#queues .card[data-queue="normalize queue"]').count()).toBe(0);
    expect(await queue.locator('.sub').allTextContents()).toContain('uploads, reprocess, redrive');
    const dlq = page.locator('#queues .card[data-queue="clicks DLQ"]');
    expect(await dlq.locator('.sub').allTextContents()).toContain('given up: see Dead letters');
    await page.locator('.tabs button[data-view="dead-letters"]').click();
    const panel = page.locator('#dlqs .panel[data-queue="normalize"]');
    await panel.waitFor();
    expect(await panel.locator('h2').textContent()).toBe('clicks dead-letter queue');
  });
});
