import { request } from 'node:http';
import { CloudWatchClient, PutMetricDataCommand, type StandardUnit } from '@aws-sdk/client-cloudwatch';
import {
  CloudWatchLogsClient,
  CreateLogGroupCommand,
  CreateLogStreamCommand,
  PutLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../app/cli/dispatch.js';
import type { CliIo } from '../../app/common/command.js';
import { S3PartitionStore } from '../../app/partition/S3PartitionStore.js';
import { StackOutput } from '../../app/stackOutputs.js';
import type { CloudWatchSnapshot } from '../../app/ui/cloudWatchFeed.js';
import { ConsoleApi } from '../../app/ui/consoleApi.js';
import { type ConsoleServer, startConsoleServer } from '../../app/ui/consoleServer.js';
import { type ConsoleSource, resolveConsoleSource } from '../../app/ui/consoleSource.js';
import { CONSOLE_COMMANDS, ConsoleWriteRefusedError } from '../../app/ui/readOnlyClients.js';
import { createLogger } from '../../src/logging/logger.js';
import { emfOutcomeMetrics } from '../../src/metrics/emfOutcomeMetrics.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { queueDepth, upload } from '../support/pipeline.js';
import {
  createOutputsStack,
  normalizeStageRunner,
  ordersCsv,
  provisionTwoStagePipeline,
  type TwoStagePipeline,
} from '../support/summaryPipeline.js';

const DAY = '2026-04-07';

/** Every request that reached the emulator through the console's clients (recorded after its guard). */
interface WireRequest {
  readonly service: 's3' | 'sqs' | 'cloudwatch' | 'logs';
  readonly command: string;
  readonly queueUrl?: string;
}

type Stacked = { middlewareStack: { add(mw: unknown, options: Record<string, unknown>): void } };

function recordWire(source: ConsoleSource, wire: WireRequest[]): void {
  const clients = {
    s3: source.target.clients.s3,
    sqs: source.target.clients.sqs,
    cloudwatch: source.cloudWatch?.cloudwatch,
    logs: source.cloudWatch?.logs,
  };
  for (const service of ['s3', 'sqs', 'cloudwatch', 'logs'] as const) {
    if (!clients[service]) continue;
    (clients[service] as unknown as Stacked).middlewareStack.add(
      (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) =>
        async (args: { input: { QueueUrl?: string } }) => {
          wire.push({
            service,
            command: context.commandName ?? '?',
            ...(args.input.QueueUrl ? { queueUrl: args.input.QueueUrl } : {}),
          });
          return next(args);
        },
      // finalizeRequest runs after the guard (initialize): what is recorded is what was sent.
      { step: 'finalizeRequest', name: 'testWireRecorder' },
    );
  }
}

/** A GET with a chosen Host header and token (fetch does not let a caller set Host). */
function rawGet(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('rerun ui: the operator console', () => {
  const clients = testClients();
  let p: TwoStagePipeline;
  let source: ConsoleSource;
  let server: ConsoleServer;
  const wire: WireRequest[] = [];
  const base = () => `http://127.0.0.1:${server.port}`;
  // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, read by the assertions below
  const api = async (path: string): Promise<any> => {
    const response = await fetch(`${base()}${path}`, { headers: { 'X-Rerun-Token': server.token } });
    expect(response.status, path).toBe(200);
    return response.json();
  };

  beforeAll(async () => {
    p = await provisionTwoStagePipeline(clients);
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/good.csv`, ordersCsv('g', 3));
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/rows.csv`, ordersCsv('r', 2, { bad: true }));
    await upload(clients, p.stack.inputBucket, `incoming/dt=${DAY}/poison.csv`, ordersCsv('p', 1));
    // Outside any day, on both sides of the `dt=` keys in key order.
    await upload(clients, p.stack.inputBucket, 'incoming/a-loose.csv', ordersCsv('a', 1));
    await upload(clients, p.stack.inputBucket, 'incoming/z-loose.txt', 'not a supported type\n');
    const real = createNormalizeWorker({ outputBucket: p.stack.outputBucket, prefixes: p.t });
    const buggy = defineWorker({
      ...real,
      async transform(input, out) {
        if (input.source.key.includes('poison')) throw new Error('cannot parse amount "1.000,50" (bug #42)');
        return real.transform(input, out);
      },
    });
    await normalizeStageRunner(clients, p, buggy).runUntilDrained({ timeoutMs: 60_000 });
    expect(await queueDepth(clients, p.stack.dlqUrl)).toBe(1);
    source = await resolveConsoleSource({ 'app-name': p.appName }, { AWS_ENDPOINT_URL: awsEndpoint() });
    recordWire(source, wire);
    server = await startConsoleServer({ api: new ConsoleApi(source) });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('refuses an API request without the token (401), with a wrong one (403), any request for another Host (403), and anything but GET (405)', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{40,}$/);
    for (const path of ['/api/overview', '/api/days?from=2026-04-01&to=2026-04-07']) {
      expect((await fetch(`${base()}${path}`)).status, path).toBe(401);
      const wrong = await fetch(`${base()}${path}`, { headers: { 'X-Rerun-Token': `${server.token}x` } });
      expect(wrong.status, path).toBe(403);
    }
    expect(
      await rawGet(server.port, '/api/overview', {
        Host: `evil.example:${server.port}`,
        'X-Rerun-Token': server.token,
      }),
    ).toBe(403);
    expect(
      await rawGet(server.port, '/api/overview', { Host: `localhost:${server.port}`, 'X-Rerun-Token': server.token }),
    ).toBe(200);
    const post = await fetch(`${base()}/api/overview`, { method: 'POST', headers: { 'X-Rerun-Token': server.token } });
    expect(post.status).toBe(405);

    // The printed URL opens the page itself (its files hold no data); the page's script sends the token in a header.
    const opened = await fetch(server.url, { redirect: 'manual' });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('set-cookie')).toBeNull();
    expect(await opened.text()).toContain('<script type="module" src="/assets/console.js">');
  });

  it('shows what rerun status computes and the failure records rerun redrive reads, and sends nothing but reads to S3, SQS, CloudWatch and DynamoDB', async () => {
    const outputsBefore = await new S3PartitionStore(clients.s3).listAll(p.stack.outputBucket, { prefix: '' });
    wire.length = 0;

    const overview = await api('/api/overview');
    expect(overview).toMatchObject({ kind: 'aws', appName: p.appName, inputBucket: p.stack.inputBucket });
    const days = await api(`/api/days?from=2026-04-06&to=${DAY}`);
    expect(days.partitions.map((d: { day: string; status: string }) => [d.day, d.status])).toEqual([
      ['2026-04-06', 'missing'],
      [DAY, 'missing'],
    ]);
    expect(days.partitions[1].coverage).toMatchObject({ inputs: 3, covered: 2, deadLettered: { count: 1 } });
    const page = await api(`/api/inputs?day=${DAY}&limit=2`);
    expect(page.items.map((i: { key: string; class: string }) => [i.key, i.class])).toEqual([
      [`incoming/dt=${DAY}/good.csv`, 'covered'],
      [`incoming/dt=${DAY}/poison.csv`, 'dead-lettered'],
    ]);
    expect(page.items[1].reason).toBe('Error: cannot parse amount "1.000,50" (bug #42)');
    expect(page.next).toBe(`incoming/dt=${DAY}/poison.csv`);
    const rest = await api(`/api/inputs?day=${DAY}&limit=2&after=${encodeURIComponent(page.next)}`);
    expect(rest.items.map((i: { key: string }) => i.key)).toEqual([`incoming/dt=${DAY}/rows.csv`]);
    expect(rest.next).toBeUndefined();
    const undated = await api('/api/inputs?day=undated&limit=1');
    expect(undated.items).toMatchObject([{ key: 'incoming/a-loose.csv', class: 'covered' }]);
    const undatedRest = await api(`/api/inputs?day=undated&limit=1&after=${encodeURIComponent(undated.next)}`);
    expect(undatedRest.items).toMatchObject([{ key: 'incoming/z-loose.txt', class: 'skipped' }]);
    expect(undatedRest.items[0].skipReason).toMatch(/^unsupported file type/);
    expect(undatedRest.next).toBeUndefined();
    const output = await api(`/api/output?key=${encodeURIComponent(`incoming/dt=${DAY}/rows.csv`)}`);
    expect(output.output.lines).toHaveLength(2);
    expect(output.quarantine.lines[0]).toMatch(/"reason"/);
    const live = await api('/api/live');
    expect(live.from).toBe('cloudwatch'); // no running rerun dev: CloudWatch, as for a deployed stack
    expect(live.queues.map((q: { name: string; visible: number }) => [q.name, q.visible])).toEqual([
      ['normalize queue', 0],
      ['normalize DLQ', 1],
      ['summarize queue', 0],
      ['summarize DLQ', 0],
    ]);
    const letters = await api('/api/dead-letters?queue=normalize');
    expect(letters).toMatchObject({ depth: 1, command: `rerun redrive --queue normalize --app-name ${p.appName}` });
    expect(letters.letters[0]).toMatchObject({
      subject: `s3://${p.stack.inputBucket}/incoming/dt=${DAY}/poison.csv`,
      reason: 'Error: cannot parse amount "1.000,50" (bug #42)',
      retryable: true, // a redrive after the fix helps
    });
    await api('/api/dead-letters?queue=summarize');

    // Every request that reached the emulator is a read; nothing is received from any queue.
    const allowed = new Set<string>(Object.values(CONSOLE_COMMANDS).flat());
    expect(wire.length).toBeGreaterThan(10);
    expect(wire.filter((r) => !allowed.has(r.command))).toEqual([]);
    expect(new Set(wire.map((r) => r.service))).toEqual(new Set(['s3', 'sqs', 'cloudwatch']));
    expect(wire.filter((r) => r.command === 'ReceiveMessageCommand' || r.command.startsWith('ChangeMessage'))).toEqual(
      [],
    );
    // And so nothing changed: the same objects, the message still in the DLQ.
    expect(await new S3PartitionStore(clients.s3).listAll(p.stack.outputBucket, { prefix: '' })).toEqual(outputsBefore);
    expect(await queueDepth(clients, p.stack.dlqUrl)).toBe(1);
    expect(await queueDepth(clients, p.stack.queueUrl)).toBe(0);
  });

  it('cannot send a write: its clients refuse every command but the reads before it leaves', async () => {
    wire.length = 0;
    const { s3, sqs } = source.target.clients;
    // No DynamoDB client at all: the console does not read the ledger, so it cannot write it either.
    expect('dynamodb' in source.target.clients).toBe(false);
    await expect(
      s3.send(new PutObjectCommand({ Bucket: p.stack.outputBucket, Key: 'x', Body: 'x' })),
    ).rejects.toBeInstanceOf(ConsoleWriteRefusedError);
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: p.stack.queueUrl, MessageBody: 'x' }))).rejects.toThrow(
      /read-only: it refused to send sqs SendMessageCommand/,
    );
    const cloudwatch = source.cloudWatch?.cloudwatch;
    expect(cloudwatch).toBeDefined();
    await expect(
      cloudwatch?.send(new PutMetricDataCommand({ Namespace: 'rerun', MetricData: [{ MetricName: 'x', Value: 1 }] })),
    ).rejects.toThrow(/read-only: it refused to send cloudwatch PutMetricDataCommand/);
    expect(wire).toEqual([]);
  });

  it('`rerun ui --stack NAME` prints its URL and shows the stack read from its CloudFormation outputs, until Ctrl+C', async () => {
    const stackName = await createOutputsStack(p, 'console-stack');
    const stdout: string[] = [];
    let stderr = '';
    const ctrlC = new AbortController();
    const io: CliIo = {
      stdout: (line) => void stdout.push(line),
      stderr: (text) => {
        stderr += text;
      },
      env: {
        AWS_ENDPOINT_URL: awsEndpoint(),
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      },
      isTTY: false,
      signal: ctrlC.signal,
    };
    const running = runCli(['ui', '--stack', stackName], io);
    const deadline = Date.now() + 30_000;
    while (stdout.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const url = new URL((stdout[0] ?? '').replace(/^URL /, ''));
    expect(url.hostname, stderr).toBe('127.0.0.1');
    expect(stderr).toContain(`the console of the stack ${stackName}`);
    const get = async (path: string) =>
      (
        await fetch(`${url.origin}${path}`, { headers: { 'X-Rerun-Token': url.searchParams.get('token') ?? '' } })
      ).json();
    expect(await get('/api/overview')).toMatchObject({ kind: 'stack', stackName, live: 'cloudwatch' });
    const letters = await get('/api/dead-letters?queue=normalize');
    expect(letters).toMatchObject({
      dlqUrl: p.stack.dlqUrl,
      command: `rerun redrive --queue normalize --stack ${stackName}`,
    });
    ctrlC.abort();
    expect(await running).toBe(0);
    await expect(fetch(`${url.origin}/api/overview`)).rejects.toThrow();
  });

  it("shows a deployed stack live: outcomes from its workers' log groups, throughput and queue ages from CloudWatch metrics", async () => {
    const day = '2026-04-08';
    await upload(clients, p.stack.inputBucket, `incoming/dt=${day}/live.csv`, ordersCsv('l', 2, { bad: true }));
    await upload(clients, p.stack.inputBucket, `incoming/dt=${day}/live.txt`, 'not a supported type\n');
    // The stack's function as Lambda runs it: its logger writes JSON lines to its log (here captured),
    // and emfOutcomeMetrics writes the outcome metrics as EMF lines, which CloudWatch Logs extracts.
    const logLines: string[] = [];
    const emfLines: string[] = [];
    const runner = normalizeStageRunner(clients, p, undefined, {
      logger: createLogger({ sink: (line) => void logLines.push(line) }),
      onOutcome: emfOutcomeMetrics({ sink: (line) => void emfLines.push(line) }),
    });
    await runner.runUntilDrained({ timeoutMs: 60_000 });
    expect(emfLines.length).toBeGreaterThan(0);
    const endpoint = { endpoint: awsEndpoint(), region: 'us-east-1' };
    const logs = new CloudWatchLogsClient(endpoint);
    const cloudwatch = new CloudWatchClient(endpoint);
    const logGroup = `/aws/lambda/${uniqueName('console-normalize')}`;
    await logs.send(new CreateLogGroupCommand({ logGroupName: logGroup }));
    await logs.send(new CreateLogStreamCommand({ logGroupName: logGroup, logStreamName: 'stream' }));
    const now = Date.now();
    await logs.send(
      new PutLogEventsCommand({
        logGroupName: logGroup,
        logStreamName: 'stream',
        logEvents: [...logLines, ...emfLines].map((message, i) => ({ message, timestamp: now - 1000 + i })),
      }),
    );
    // What CloudWatch extracts from each EMF line: one datapoint per metric, with its dimensions.
    for (const line of emfLines) {
      const doc = JSON.parse(line);
      const directive = doc._aws.CloudWatchMetrics[0];
      await cloudwatch.send(
        new PutMetricDataCommand({
          Namespace: directive.Namespace,
          MetricData: directive.Metrics.map((m: { Name: string; Unit: StandardUnit }) => ({
            MetricName: m.Name,
            Unit: m.Unit,
            Value: doc[m.Name],
            Timestamp: new Date(doc._aws.Timestamp),
            Dimensions: directive.Dimensions[0].map((name: string) => ({ Name: name, Value: doc[name] })),
          })),
        }),
      );
    }
    // And what SQS publishes for the work queue.
    const queueName = p.stack.queueUrl.slice(p.stack.queueUrl.lastIndexOf('/') + 1);
    await cloudwatch.send(
      new PutMetricDataCommand({
        Namespace: 'AWS/SQS',
        MetricData: [
          {
            MetricName: 'ApproximateAgeOfOldestMessage',
            Value: 42,
            Unit: 'Seconds',
            Timestamp: new Date(now - 60_000),
            Dimensions: [{ Name: 'QueueName', Value: queueName }],
          },
        ],
      }),
    );
    const stackName = await createOutputsStack(p, 'console-live', { [StackOutput.LOG_GROUP]: logGroup });
    const stacked = await resolveConsoleSource(
      { stack: stackName },
      { AWS_ENDPOINT_URL: awsEndpoint(), AWS_REGION: 'us-east-1' },
    );
    expect(stacked.cloudWatch?.logGroups).toEqual([logGroup]);
    let clock = Date.now();
    const consoleApi = new ConsoleApi(stacked, { now: () => clock });
    const live = await consoleApi.live(0);
    expect(live.from).toBe('cloudwatch');
    expect(live.notes).toEqual([]);
    const seen = (live.feed?.outcomes ?? []).map((o) => [o.status, o.subject, o.quarantined ?? 0]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['processed', `s3://${p.stack.inputBucket}/incoming/dt=${day}/live.csv`, 1],
        ['skipped', `s3://${p.stack.inputBucket}/incoming/dt=${day}/live.txt`, 0],
      ]),
    );
    const totals: Record<string, number> = {};
    for (const bucket of live.feed?.throughput ?? []) {
      for (const [kind, n] of Object.entries(bucket.counts)) totals[kind] = (totals[kind] ?? 0) + n;
    }
    expect(totals).toMatchObject({ processed: 1, skipped: 1 });
    expect((live.feed as CloudWatchSnapshot).quarantinedEntries).toBe(1);
    expect(live.queues.find((q) => q.name === 'normalize queue')?.oldest?.seconds).toBe(42);
    // A later poll (past the 5 s between two reads of the logs) reads them again from the newest event
    // seen: nothing is new, and the events read already are not shown twice.
    clock += 6000;
    const again = await consoleApi.live(live.feed?.seq ?? 0);
    expect(again.feed?.outcomes).toEqual([]);
  });
});
