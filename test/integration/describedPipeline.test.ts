import { createHash } from 'node:crypto';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { referenceInputRules } from '../../app/common/inputRules.js';
import { resolvePlanningStage, stageInputRules } from '../../app/common/pipelineStage.js';
import { StackOutput } from '../../app/stackOutputs.js';
import { ConsoleApi } from '../../app/ui/consoleApi.js';
import { resolveConsoleSource } from '../../app/ui/consoleSource.js';
import { buildOutputMetadata } from '../../src/done/outputMetadata.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { describePipeline } from '../../src/pipeline/pipelineDescription.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { rerunCli } from '../support/summaryPipeline.js';

/** The README's user pipeline: inputs under incoming/, outputs at upper/{bucket}/{key without incoming/}. */
const uploads = definePipeline({
  name: 'uploads',
  stages: {
    upper: {
      kind: 'object',
      input: { prefix: 'incoming/' },
      outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' },
      codeVersion: 'upper@1',
    },
  },
});

const INPUTS = ['incoming/a.csv', 'incoming/dt=2026-12-05/b.csv', 'incoming/dt=2026-12-05/c d.txt', 'incoming/z.json'];

describe('rerun reprocess --stack on the README user pipeline (moto CloudFormation)', () => {
  const clients = testClients();

  /**
   * The user pipeline's buckets and queue with every input's output in place (written after its
   * input, as the worker would), and a stack whose outputs name them as RerunPipeline's do, with
   * the description published or not.
   */
  async function userPipeline(publish: boolean) {
    const inputBucket = uniqueName('uploads-in');
    const outputBucket = uniqueName('uploads-out');
    await clients.s3.send(new CreateBucketCommand({ Bucket: inputBucket }));
    await clients.s3.send(new CreateBucketCommand({ Bucket: outputBucket }));
    const queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('uploads-q') })))
      .QueueUrl as string;
    const dlqUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('uploads-dlq') })))
      .QueueUrl as string;
    const etags = new Map<string, string>();
    for (const key of INPUTS) {
      const put = await clients.s3.send(new PutObjectCommand({ Bucket: inputBucket, Key: key, Body: 'x' }));
      etags.set(key, (put.ETag as string).replaceAll('"', ''));
    }
    // Written after the inputs (LastModified has a one-second grain): current, not stale. Each is an
    // intact output as the worker writes it: built from its input's ETag by upper@1, sealed by its SHA-256.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const sha256Base64 = createHash('sha256').update('X').digest('base64');
    for (const key of INPUTS) {
      const source = { bucket: inputBucket, key };
      const outputKey = deterministicKey({ prefix: 'upper/', source, stripPrefix: 'incoming/' });
      await clients.s3.send(
        new PutObjectCommand({
          Bucket: outputBucket,
          Key: outputKey,
          Body: 'X',
          ChecksumAlgorithm: 'SHA256',
          ChecksumSHA256: sha256Base64,
          Metadata: buildOutputMetadata({
            source: { ...source, etag: etags.get(key) as string },
            codeVersion: 'upper@1',
            integrity: { kind: 'sha256', sha256Base64, bytes: 1 },
          }),
        }),
      );
    }
    const outputs: Record<string, string> = {
      [StackOutput.INPUT_BUCKET]: inputBucket,
      [StackOutput.OUTPUT_BUCKET]: outputBucket,
      [StackOutput.QUEUE_URL]: queueUrl,
      [StackOutput.DLQ_URL]: dlqUrl,
      ...(publish
        ? {
            [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(describePipeline(uploads)),
            [StackOutput.PIPELINE_STAGE]: 'upper',
          }
        : {}),
    };
    const stackName = uniqueName('Uploads');
    await new CloudFormationClient({ endpoint: awsEndpoint(), region: 'us-east-1' }).send(
      new CreateStackCommand({
        StackName: stackName,
        TemplateBody: JSON.stringify({
          Resources: { Placeholder: { Type: 'AWS::SQS::Queue' } },
          Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
        }),
      }),
    );
    return { inputBucket, outputBucket, stackName };
  }

  it('plans 0 when every input has its output: the key rule is the published one, not the reference layout', async () => {
    const p = await userPipeline(true);
    const run = await rerunCli(['reprocess', '--stack', p.stackName, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ planned: 0 });
  });

  it('plans exactly the one input whose output was deleted', async () => {
    const p = await userPipeline(true);
    const gone = 'incoming/dt=2026-12-05/c d.txt';
    await clients.s3.send(
      new DeleteObjectCommand({ Bucket: p.outputBucket, Key: `upper/${p.inputBucket}/dt=2026-12-05/c d.txt` }),
    );
    const run = await rerunCli(['reprocess', '--stack', p.stackName, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const result = run.json() as {
      planned: number;
      plan: Record<string, number>;
      sample: { state: string; inputKey: string; outputKey: string }[];
    };
    expect(result.planned).toBe(1);
    expect(result.sample.map((s) => [s.state, s.inputKey, s.outputKey])).toEqual([
      ['missing', gone, `upper/${p.inputBucket}/dt=2026-12-05/c d.txt`],
    ]);
  });

  it('refuses, saying it cannot know the key rule, when the stack publishes no description', async () => {
    const p = await userPipeline(false);
    const run = await rerunCli(['reprocess', '--stack', p.stackName, '--dry-run']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `rerun reprocess: The stack "${p.stackName}" publishes no pipeline description .*cannot know its worker's output key rule`,
      ),
    );
    expect(run.stderr).toMatch(
      /give RerunPipeline the pipeline .* with outputs: true and redeploy, or pass --pipeline FILE/,
    );
    expect(run.stdout).toEqual([]);
  });

  it('reads the description from --pipeline FILE, and refuses an unknown --stage with the nearest name', async () => {
    const p = await userPipeline(false);
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'rerun-describe-')), 'pipeline.json');
    writeFileSync(file, JSON.stringify(describePipeline(uploads)));
    const run = await rerunCli(['reprocess', '--stack', p.stackName, '--pipeline', file, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toMatchObject({ planned: 0 });
    const wrong = await rerunCli([
      'reprocess',
      '--stack',
      p.stackName,
      '--pipeline',
      file,
      '--stage',
      'uper',
      '--dry-run',
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/--stage uper: .* has no stage named "uper"; did you mean "upper"\?/);
  });

  it("rerun status judges a user stage's inputs by its published rule: current, missing, stale, and --from refused", async () => {
    const p = await userPipeline(true);
    const all = await rerunCli(['status', '--stack', p.stackName, '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.json()).toMatchObject({
      stage: 'upper',
      prefix: 'incoming/',
      inputs: INPUTS.length,
      toDo: 0,
      counts: { current: INPUTS.length, missing: 0, stale: 0, orphan: 0, skipped: 0 },
    });
    // One output deleted, one input changed (other bytes, so its output's recorded source is not the input's).
    // A second later: LastModified has a one-second grain, and an input no newer than its output is not a
    // candidate of the listing (docs/JUDGING.md; --verify finds it).
    await clients.s3.send(new DeleteObjectCommand({ Bucket: p.outputBucket, Key: `upper/${p.inputBucket}/z.json` }));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await clients.s3.send(new PutObjectCommand({ Bucket: p.inputBucket, Key: 'incoming/a.csv', Body: 'other bytes' }));
    // The same bytes again (a sync after a touch): newer than its output, but built from the same ETag.
    await clients.s3.send(
      new PutObjectCommand({ Bucket: p.inputBucket, Key: 'incoming/dt=2026-12-05/b.csv', Body: 'x' }),
    );
    const run = await rerunCli(['status', '--stack', p.stackName]);
    expect(run.code, run.stderr).toBe(0);
    const text = run.text;
    expect(text).toMatch(/^current +2 +done/m);
    expect(text).toMatch(/^missing +1 +to do: no output/m);
    expect(text).toMatch(/^stale +1 +to do: its output was built from other input bytes/m);
    expect(text).toMatch(/^ +missing +incoming\/z\.json +/m);
    expect(text).toMatch(/^ +stale +incoming\/a\.csv +/m);
    const summary = JSON.parse(
      (run.stdout.find((l) => l.startsWith('SUMMARY ')) as string).slice('SUMMARY '.length),
    ) as Record<string, unknown>;
    expect(summary).toMatchObject({ stage: 'upper', inputs: 4, toDo: 2, current: 2, missing: 1, stale: 1 });
    expect(summary.requests).toMatchObject({ head: 2 });
    // Status sent nothing: reprocess still plans the same two.
    const plan = await rerunCli(['reprocess', '--stack', p.stackName, '--dry-run', '--json']);
    expect(plan.json()).toMatchObject({ planned: 2 });
    const windowed = await rerunCli(['status', '--stack', p.stackName, '--from', '2026-12-05', '--to', '2026-12-05']);
    expect(windowed.code).toBe(2);
    expect(windowed.stderr).toMatch(/stage "upper" of the stack ".*" is an object stage/);
  });

  it("the console judges the user's inputs by the published key rule, not the reference normalizer's skip rules", async () => {
    const p = await userPipeline(true);
    const source = await resolveConsoleSource({ stack: p.stackName }, { AWS_ENDPOINT_URL: awsEndpoint() });
    const stage = await resolvePlanningStage(source.target, { stack: p.stackName });
    const api = new ConsoleApi(source, {
      rules: stageInputRules(stage, source.target, referenceInputRules(source.target)),
    });
    const day = await api.inputs('2026-12-05', undefined, 10);
    // c d.txt is no format of the reference normalizer's (it would be "skipped"): here it is covered.
    expect(day.items.map((i) => [i.key, i.class, i.outputKey])).toEqual([
      ['incoming/dt=2026-12-05/b.csv', 'covered', `upper/${p.inputBucket}/dt=2026-12-05/b.csv`],
      ['incoming/dt=2026-12-05/c d.txt', 'covered', `upper/${p.inputBucket}/dt=2026-12-05/c d.txt`],
    ]);
    expect((await api.overview()).inputPrefix).toBe('incoming/');
    const output = await api.output('incoming/z.json');
    expect(output.outputKey).toBe(`upper/${p.inputBucket}/z.json`);
    expect(output.output).toBeDefined();
  });
});
