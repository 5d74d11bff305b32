import { IAMClient } from '@aws-sdk/client-iam';
import { describe, expect, inject, it } from 'vitest';
import { ConsoleApi } from '../../app/ui/consoleApi.js';
import { type ConsoleSource, resolveConsoleSource } from '../../app/ui/consoleSource.js';
import { upload } from '../support/pipeline.js';
import { ordersCsv } from '../support/summaryPipeline.js';
import { deployedClients, deployedStack, drained, ministackEndpoint, ROOT_KEY } from './support/deployedStack.js';
import { consoleReaderPolicy, createOperator, type OperatorCredentials } from './support/operatorIdentity.js';

/**
 * Runs `work` as `rerun ui --stack NAME` in a shell that exported the user's key would: the CLI's
 * clients take the default credential chain, which reads the key at each client's first request,
 * so the key stays in the environment until the work ends.
 */
async function asUser<T>(user: OperatorCredentials, work: (source: ConsoleSource) => Promise<T>): Promise<T> {
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
  process.env.AWS_ACCESS_KEY_ID = user.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = user.secretAccessKey;
  try {
    const source = await resolveConsoleSource(
      { stack: deployedStack().stackName },
      { AWS_ENDPOINT_URL: ministackEndpoint(), AWS_REGION: 'us-east-1' },
    );
    return await work(source);
  } finally {
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
  }
}

describe("deployed stack: rerun ui's live view, with IAM enforced", () => {
  const clients = deployedClients();
  const stack = deployedStack();

  it("as the operator, shows the queues and names each read the operator's policy denies", async () => {
    const live = await asUser(inject('operator'), (source) => new ConsoleApi(source).live(0));
    expect(live.from).toBe('cloudwatch');
    expect(live.queues.map((q) => q.name)).toEqual([
      'normalize queue',
      'normalize DLQ',
      'summarize queue',
      'summarize DLQ',
    ]);
    expect(live.notes.length).toBeGreaterThanOrEqual(2);
    expect(live.notes.filter((n) => n.startsWith('Outcomes from '))).not.toEqual([]);
    expect(live.notes.find((n) => n.startsWith('Throughput and queue ages'))).toMatch(/AccessDenied|not authorized/i);
    for (const note of live.notes) expect(note).toMatch(/AccessDenied|not authorized/i);
  });

  it("as a console reader (the operator's policy and the two reads), shows an upload's outcome from the function's log group", async () => {
    const iam = new IAMClient({ endpoint: ministackEndpoint(), region: 'us-east-1', credentials: ROOT_KEY });
    const reader = await createOperator(iam, stack, { role: 'console', policy: consoleReaderPolicy(stack) });
    await asUser(reader, async (source) => {
      const consoleApi = new ConsoleApi(source);
      const key = `incoming/dt=2026-02-05/console-${Date.now()}.csv`;
      await upload(clients, stack.inputBucket, key, ordersCsv('c', 2, { bad: true }));
      const subject = `s3://${stack.inputBucket}/${key}`;
      const deadline = Date.now() + 90_000;
      let seen: { status: string; quarantined?: number } | undefined;
      let notes: readonly string[] = [];
      let seq = 0;
      while (!seen && Date.now() < deadline) {
        const live = await consoleApi.live(seq);
        notes = live.notes;
        seq = live.feed?.seq ?? seq;
        seen = live.feed?.outcomes.find((o) => o.subject === subject);
        if (!seen) await new Promise((r) => setTimeout(r, 5_000));
      }
      expect(notes).toEqual([]);
      expect(seen).toMatchObject({ status: 'processed', quarantined: 1 });
    });
    await drained(clients, stack.queueUrl);
  }, 150_000);
});
