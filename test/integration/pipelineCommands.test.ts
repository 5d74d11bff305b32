import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { explainAwsError, PipelineResourceError } from '../../app/common/pipelineResources.js';
import { testClients, uniqueName } from '../support/aws.js';
import { queueDepth, upload } from '../support/pipeline.js';
import { normalizeStageRunner, ordersCsv, provisionTwoStagePipeline, rerunCli } from '../support/summaryPipeline.js';

describe('rerun status / backfill / redrive: arguments, targets and errors', () => {
  const clients = testClients();

  it('answer --help with their options', async () => {
    for (const [name, option] of [
      ['status', '--no-validate'],
      ['backfill', '--mode MODE'],
      ['redrive', '--max N'],
    ] as const) {
      const help = await rerunCli([name, '--help']);
      expect(help.code).toBe(0);
      expect(help.stderr).toBe('');
      expect(help.text).toMatch(new RegExp(`^Usage: rerun ${name}`));
      expect(help.text).toContain(option);
      expect(help.text).toContain('--json');
    }
  });

  it('refuse a missing or malformed window, mode or rate before touching AWS (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['status', '--to', '2026-01-05'], /--from and --to are required/],
      [['status', '--from', '2026-01-05', '--to', '2026-01-04'], /ends \(2026-01-04\) before it starts/],
      [['backfill', '--from', '2026-02-30', '--to', '2026-03-01'], /--from "2026-02-30" is not a day/],
      [
        ['backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--mode', 'failed'],
        /--mode must be missing, stale or all/,
      ],
      [['backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--rate', 'fast'], /--rate must be an integer/],
      [['redrive', '--max', '0'], /--max must be an integer from 1/],
    ];
    for (const [args, message] of cases) {
      const run = await rerunCli([...args, '--app-name', uniqueName('nothing')]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toEqual([]);
    }
  });

  it('name the missing resource, where it was looked for, and what to do (exit 1)', async () => {
    const app = uniqueName('absent');
    const status = await rerunCli(['status', '--from', '2026-01-01', '--to', '2026-01-02', '--app-name', app]);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(
      new RegExp(`The output bucket "${app}-output" does not exist at http://127\\.0\\.0\\.1:\\d+\\.`),
    );
    expect(status.stderr).toMatch(
      /Pass --output-bucket or set RERUN_OUTPUT_BUCKET \(the stack output OutputBucketName/,
    );

    const json = await rerunCli(['status', '--from', '2026-01-01', '--to', '2026-01-02', '--app-name', app, '--json']);
    expect(json.json()).toMatchObject({
      error: { name: 'PipelineResourceError', message: expect.stringMatching(/does not exist/) },
    });

    // The bucket exists, the summarize queue does not.
    const p = await provisionTwoStagePipeline(clients);
    const noQueue = await rerunCli([
      'backfill',
      '--from',
      '2026-01-01',
      '--to',
      '2026-01-02',
      '--output-bucket',
      p.stack.outputBucket,
      '--app-name',
      app,
    ]);
    expect(noQueue.code).toBe(1);
    expect(noQueue.stderr).toMatch(
      new RegExp(
        `The summarize queue "${app}-summarize-queue\\.fifo" does not exist at .*For a deployed stack pass --stack NAME .* or set RERUN_SUMMARY_QUEUE_URL`,
      ),
    );

    const unreachable = await rerunCli(['status', '--from', '2026-01-01', '--to', '2026-01-02'], {
      env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
    });
    expect(unreachable.code).toBe(1);
    // Checked before any AWS call (app/common/checkedEndpoint.ts): the variable is named, with the fix.
    expect(unreachable.stderr).toMatch(
      /^rerun status: Nothing listens at AWS_ENDPOINT_URL=http:\/\/127\.0\.0\.1:9 \(connection refused\)\. Start that emulator/,
    );
  });

  it('explain access denied and missing credentials in the same terms', () => {
    const resource = { role: 'output bucket', name: 'b', where: 'AWS (eu-west-1)', hint: 'h' };
    const denied = explainAwsError(
      Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }),
      resource,
    );
    expect(denied).toBeInstanceOf(PipelineResourceError);
    expect((denied as Error).message).toMatch(
      /^Access denied to the output bucket "b" at AWS \(eu-west-1\) \(Access Denied\)\. Use credentials/,
    );
    const noCredentials = explainAwsError(
      Object.assign(new Error('Could not load credentials'), { name: 'CredentialsProviderError' }),
      resource,
    );
    expect((noCredentials as Error).message).toMatch(/No AWS credentials to reach the output bucket "b"/);
    const other = new Error('something else');
    expect(explainAwsError(other, resource)).toBe(other);
  });

  it('redrive tells a DLQ whose messages another reader holds from an empty one', async () => {
    const p = await provisionTwoStagePipeline(clients);
    for (const i of [1, 2, 3]) {
      await clients.sqs.send(new SendMessageCommand({ QueueUrl: p.stack.dlqUrl, MessageBody: `{"poison":${i}}` }));
    }
    // Another reader (a second redrive, a console poll) holds all three invisible for a while.
    let held = 0;
    while (held < 3) {
      const out = await clients.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: p.stack.dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 120 }),
      );
      held += out.Messages?.length ?? 0;
    }
    const run = await rerunCli(['redrive', '--queue', 'normalize', '--dry-run', '--app-name', p.appName]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.text).toMatch(
      /^No visible message in the DLQ: about 3 are held invisible by another reader \(another rerun redrive, a console poll, a consumer of the DLQ\)\. They return when that reader's visibility timeout ends: run this again then\.$/m,
    );
    expect(run.text).not.toMatch(/^No message in the DLQ\./m);
    expect(run.stdout.at(-1)).toMatch(/^SUMMARY \{.*"inspected":0,.*"inFlight":3/);
    // One more arrives, visible: it is listed, and the held ones are counted beside it.
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: p.stack.dlqUrl, MessageBody: '{"poison":4}' }));
    const some = await rerunCli(['redrive', '--queue', 'normalize', '--dry-run', '--app-name', p.appName]);
    expect(some.text).toMatch(
      /^1 message\(s\)\. About 3 more are held invisible by another reader: not shown, not moved\.$/m,
    );

    // An empty DLQ is still called empty.
    const empty = await rerunCli(['redrive', '--queue', 'summarize', '--dry-run', '--app-name', p.appName]);
    expect(empty.text).toMatch(/^No message in the DLQ\.$/m);
  });

  it('find a deployed stack from RERUN_* variables alone, and a dry run prints the plan and sends nothing', async () => {
    const p = await provisionTwoStagePipeline(clients);
    await upload(clients, p.stack.inputBucket, 'incoming/dt=2026-01-02/a.csv', ordersCsv('a', 2));
    await normalizeStageRunner(clients, p).runUntilDrained({ timeoutMs: 60_000 });
    const env = {
      RERUN_INPUT_BUCKET: p.stack.inputBucket,
      RERUN_OUTPUT_BUCKET: p.stack.outputBucket,
      RERUN_SUMMARY_QUEUE_URL: p.summary.queueUrl,
    };
    const dry = await rerunCli(['backfill', '--from', '2026-01-01', '--to', '2026-01-03', '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    // The plan is the result, on stdout; SUMMARY closes it.
    expect(dry.text).toMatch(
      /Window 2026-01-01\.\.2026-01-03: 3 partitions: 0 published, 3 missing, 0 stale, 0 invalid\./,
    );
    expect(dry.text).toMatch(/Mode stale: 3 partition\(s\) to enqueue \(dry run: nothing is sent\)/);
    expect(dry.text).toMatch(/dt=2026-01-02\s+missing\s+1\s+no summary published \(1 input: 1 with outputs\)/);
    expect(dry.stdout.at(-1)).toMatch(/^SUMMARY \{.*"dryRun":true,"planned":3,"enqueued":0/);
    expect(await queueDepth(clients, p.summary.queueUrl)).toBe(0);

    // The most common mistake with a deployed stack: the wrong input bucket. Status says what to check.
    const wrong = await rerunCli(
      ['status', '--from', '2026-01-01', '--to', '2026-01-03', '--input-bucket', 'not-the-input'],
      { env },
    );
    // Status lists the inputs too, so a wrong input bucket is named as such, with what to check.
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/The input bucket "not-the-input" does not exist at .*Check --input-bucket/);
    const right = await rerunCli(['status', '--from', '2026-01-01', '--to', '2026-01-03'], { env });
    expect(right.stderr).not.toMatch(/note:/);

    const missingOnly = await rerunCli(
      ['backfill', '--from', '2026-01-01', '--to', '2026-01-03', '--mode', 'missing', '--json'],
      { env },
    );
    expect(missingOnly.json()).toMatchObject({ planned: 3, enqueued: 3, mode: 'missing' });
    expect(await queueDepth(clients, p.summary.queueUrl)).toBe(3);
  });
});
