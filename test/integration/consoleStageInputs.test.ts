import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { inputRulesOf } from '../../app/partition/inputCoverage.js';
import { StackOutput } from '../../app/stackOutputs.js';
import { listInputPage, UNDATED } from '../../app/ui/dayInputs.js';
import { outsideDaysGroup, stageInputLayout } from '../../app/ui/stageInputLayout.js';
import { failureIndexKey } from '../../src/failures/failureIndex.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { definePipeline } from '../../src/pipeline/definePipeline.js';
import { outputKeyOf } from '../../src/pipeline/keyRule.js';
import { describePipeline, type PipelineDefinition } from '../../src/pipeline/pipelineDescription.js';
import { S3PartitionStore } from '../../src/s3/S3PartitionStore.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { withConsoleCli } from '../support/consoleCli.js';
import { createBucket } from '../support/s3.js';

const HOURLY = { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } as const;

/** A user's object stage with no window stage after it: its inputs are counted by its own layout. */
function objectOnly(name: string, partitions?: PipelineDefinition['stages'][string]['partitions']): PipelineDefinition {
  return definePipeline({
    name: 'plain',
    stages: {
      [name]: {
        kind: 'object',
        input: { prefix: 'incoming/' },
        outputKey: { prefix: `${name}/`, stripPrefix: 'incoming/', suffix: '.lines' },
        ...(partitions ? { partitions } : {}),
        codeVersion: `${name}@1`,
      },
    },
  }) as PipelineDefinition;
}

interface Page {
  items: { key: string; class: string }[];
  next?: string;
}

describe("rerun ui's inputs view of a user's object stage, by the stage's own layout (moto)", () => {
  const clients = testClients();
  const env = {
    AWS_ENDPOINT_URL: awsEndpoint(),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
  const put = (bucket: string, key: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));

  /** A stack of the user's that publishes `pipeline` over two fresh buckets. */
  async function userStack(pipeline: PipelineDefinition, stage: string) {
    const inputBucket = await createBucket(clients.s3, uniqueName('uiobj-in'));
    const outputBucket = await createBucket(clients.s3, uniqueName('uiobj-out'));
    const outputs = {
      [StackOutput.INPUT_BUCKET]: inputBucket,
      [StackOutput.OUTPUT_BUCKET]: outputBucket,
      [StackOutput.PIPELINE_DESCRIPTION]: JSON.stringify(describePipeline(pipeline)),
      [StackOutput.PIPELINE_STAGE]: stage,
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
    const outputOf = (key: string) =>
      deterministicKey({
        prefix: `${stage}/`,
        source: { bucket: inputBucket, key },
        stripPrefix: 'incoming/',
        suffix: '.lines',
      });
    return { inputBucket, outputBucket, stackName, outputOf };
  }

  /** `rerun ui --stack NAME`; gives its API's answers (any status), then stops it. */
  function withConsole<T>(
    stackName: string,
    use: (get: (path: string) => Promise<{ status: number; body: unknown }>) => Promise<T>,
  ): Promise<T> {
    return withConsoleCli(['--stack', stackName], env, (api) => use(api.answer));
  }
  const ok = async (get: (path: string) => Promise<{ status: number; body: unknown }>, path: string) => {
    const { status, body } = await get(path);
    expect(status, JSON.stringify(body)).toBe(200);
    return body;
  };

  describe('inputs keyed year=/month=/day=/hour=', () => {
    let stack: Awaited<ReturnType<typeof userStack>>;
    const day14 = [
      'incoming/year=2025/month=03/day=14/hour=09/a.json',
      'incoming/year=2025/month=03/day=14/hour=23/b.json',
    ];
    const day15 = 'incoming/year=2025/month=03/day=15/hour=00/c.json';
    // In no day of the template: a day folder without hours, and a file directly under the prefix.
    const outside = ['incoming/readme.txt', 'incoming/year=2025/month=03/day=15/notes.txt'];

    beforeAll(async () => {
      stack = await userStack(objectOnly('clean', HOURLY), 'clean');
      for (const key of [...day14, day15, ...outside]) await put(stack.inputBucket, key);
      await put(stack.outputBucket, stack.outputOf(day14[0] as string));
      // b.json was given up on: its failure index entry is filed as the recorder files it (its key has no dt=).
      const b = { bucket: stack.inputBucket, key: day14[1] as string };
      await put(stack.outputBucket, failureIndexKey('failures/', b, 'clean-queue', 'm-1', 'non-retryable'));
    });

    it('opens on the latest day of the layout and counts each day by one listing of its prefix', async () => {
      await withConsole(stack.stackName, async (get) => {
        expect(await ok(get, '/api/overview')).toMatchObject({
          stage: { name: 'clean', kind: 'inputs' },
          inputLayout: { kind: 'days', template: HOURLY.template },
          latestInput: { window: '2025-03-15', day: '2025-03-15' },
          window: { from: '2025-03-02', to: '2025-03-15' },
        });
        const days = (await ok(get, '/api/days?from=2025-03-13&to=2025-03-15')) as {
          partitions: { day: string; inputs: number; status: string }[];
          requests: { list: number };
          note?: string;
        };
        expect(days.partitions.map((p) => [p.day, p.inputs, p.status])).toEqual([
          ['2025-03-13', 0, 'unjudged'],
          ['2025-03-14', 2, 'unjudged'],
          ['2025-03-15', 1, 'unjudged'],
        ]);
        expect(days.requests.list).toBe(3);
        expect(days.note).toBeUndefined();
      });
    });

    it("lists a day's inputs classified by the stage's key rule, and the keys in no day apart", async () => {
      await withConsole(stack.stackName, async (get) => {
        const day = (await ok(get, '/api/inputs?day=2025-03-14&limit=50')) as Page;
        expect(day.items.map((i) => [i.key, i.class])).toEqual([
          [day14[0], 'covered'],
          [day14[1], 'dead-lettered'],
        ]);
        const later = (await ok(get, '/api/inputs?day=2025-03-15&limit=50')) as Page;
        expect(later.items.map((i) => [i.key, i.class])).toEqual([[day15, 'pending']]);
        const undated = (await ok(get, '/api/inputs?day=undated&limit=50')) as Page;
        expect(undated.items.map((i) => i.key)).toEqual(outside);
      });
    });
    it('finds the keys in no day a bounded listing at a time, going on from the last key it read', async () => {
      const layout = stageInputLayout('clean', 'incoming/', HOURLY);
      const sources = {
        reader: new S3PartitionStore(clients.s3),
        s3: clients.s3,
        outputBucket: stack.outputBucket,
        rules: inputRulesOf(
          { outputKey: outputKeyOf({ prefix: 'clean/', stripPrefix: 'incoming/', suffix: '.lines' }) },
          { bucket: stack.inputBucket, prefix: 'incoming/', failurePrefix: 'failures/' },
        ),
        readFailure: async () => undefined,
      };
      // Two keys read per page: readme.txt and a.json, then b.json and c.json (both in a day), then notes.txt.
      const group = { ...outsideDaysGroup(layout, 'incoming/'), maxScanned: 2 };
      const pages: [string[], string | undefined][] = [];
      let after: string | undefined;
      do {
        const page = await listInputPage(sources, UNDATED, { ...(after ? { after } : {}), limit: 50 }, group);
        pages.push([page.items.map((i) => i.key), page.next]);
        after = page.next;
      } while (after !== undefined && pages.length < 5);
      expect(pages).toEqual([
        [[outside[0]], day14[0]],
        [[], day15],
        [[outside[1]], undefined],
      ]);
    });
  });

  describe('inputs under a flat prefix (no partitions declared)', () => {
    let stack: Awaited<ReturnType<typeof userStack>>;
    // A dt= folder is no day of a stage that declares none: its input is one of all the others.
    const keys = ['incoming/a.csv', 'incoming/dt=2025-03-14/c.csv', 'incoming/sub/b.csv'];

    beforeAll(async () => {
      stack = await userStack(objectOnly('upper'), 'upper');
      for (const key of keys) await put(stack.inputBucket, key);
      await put(stack.outputBucket, stack.outputOf(keys[0] as string));
    });

    it('shows no day, says why, and pages all the inputs as one group', async () => {
      await withConsole(stack.stackName, async (get) => {
        const overview = (await ok(get, '/api/overview')) as { inputLayout: { kind: string; note: string } };
        expect(overview.inputLayout.kind).toBe('all');
        expect(overview.inputLayout.note).toContain('stage "upper" declares no time partitions');
        const days = (await ok(get, '/api/days?from=2025-03-13&to=2025-03-15')) as {
          partitions: unknown[];
          note?: string;
          counts: Record<string, number>;
        };
        expect(days.partitions).toEqual([]);
        expect(days.counts).toEqual({});
        expect(days.note).toBe(overview.inputLayout.note);
        const first = (await ok(get, '/api/inputs?day=undated&limit=2')) as Page;
        expect(first.items.map((i) => [i.key, i.class])).toEqual([
          [keys[0], 'covered'],
          [keys[1], 'pending'],
        ]);
        expect(first.next).toBe(keys[1]);
        const second = (await ok(
          get,
          `/api/inputs?day=undated&limit=2&after=${encodeURIComponent(keys[1] as string)}`,
        )) as Page;
        expect(second.items.map((i) => [i.key, i.class])).toEqual([[keys[2], 'pending']]);
        expect(second.next).toBeUndefined();
        // A day of a layout with no days is refused by name, never answered with an empty page.
        const refused = await get('/api/inputs?day=2025-03-14');
        expect(refused.status).toBe(400);
        expect(JSON.stringify(refused.body)).toContain('declares no time partitions');
      });
    });
  });
});
