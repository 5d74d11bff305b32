import { describe, expect, it } from 'vitest';
import { awsEndpoint, testClients } from '../support/aws.js';
import { formatChaosTable, scenarioRow } from './support/chaosTable.js';
import {
  describeKillPoint,
  discoverItemRequests,
  type KillPoint,
  killPointsOf,
  runItemBoundaryKills,
} from './support/itemBoundaryKills.js';
import { type ChaosEnvironment, runChaosScenario } from './support/runChaosScenario.js';
import { boundedScenarios, chaosRunner, chaosTopology } from './support/scenarios.js';
import { discoverSummaryTaskRequests, runSummaryTaskKills } from './support/summaryTaskKills.js';

/**
 * The bounded chaos run inside `npm test` (the full set, with a printed table: `npm run test:chaos`).
 * Runner processes of both stages (LocalRunner + the deployed normalize handler, with the ledger
 * and the webhook; LocalRunner + the deployed summarize handler, fed by backfills and the schedule's
 * message) are disturbed; the final state must equal a clean run of the same inputs. The two tests run
 * concurrently: each mostly waits for visibility timeouts.
 */
describe.concurrent('chaos (bounded): the result equals a clean run of the same inputs', () => {
  const env = (): ChaosEnvironment => ({
    endpoint: awsEndpoint(),
    clients: testClients(),
    topology: chaosTopology,
    runner: chaosRunner,
  });

  it('both stages: HTTP faults of every kind, SIGKILLs, duplicate and late deliveries, inputs overwritten and deleted mid-run', async () => {
    const [scenario] = boundedScenarios(0);
    if (!scenario) throw new Error('no bounded scenario');
    const result = await runChaosScenario(env(), scenario);
    process.stderr.write(formatChaosTable([scenarioRow(result)]));

    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({
      lost: 0,
      duplicated: 0,
      dlqNonPoison: 0,
      dlqMissingPoison: 0,
      dlqWithoutFailureRecord: 0,
    });
    expect(result.itemsVerified).toBe(scenario.items);
    // Both stages: every day of the window has the summary of its final lineage, equal to the clean
    // run's (or differing only by outputs of deleted inputs that were kept).
    const { summaries } = result;
    expect(summaries.summariesVerified).toBe(4);
    expect(summaries.summariesEqualToClean + summaries.summariesWithKeptDeleted).toBe(4);
    expect(result.summaryTasks).toMatchObject({ midRun: 4, duplicates: 4, scheduled: 1 });
    // The run was really disturbed: faults of several kinds were injected and runners of both stages were killed.
    expect(result.faultsInjected).toBeGreaterThan(20);
    expect(Object.keys(result.faultsByKind).length).toBeGreaterThanOrEqual(5);
    expect(result.killsByStage.normalize).toBeGreaterThanOrEqual(1);
    expect(result.killsByStage.normalize).toBeLessThanOrEqual(scenario.kills?.count ?? 0);
    expect(result.killsByStage.summarize).toBe(scenario.summaryKills?.count);
    // 2 runners per stage, + a restart per kill (+ restarts after a crash at start-up).
    expect(result.runnerStarts).toBeGreaterThanOrEqual(4 + result.kills);
  }, 180_000);

  it('SIGKILL after the output PUT, after the ledger claim, after the webhook POST the receiver applied', async () => {
    const item = { key: 'incoming/kill me/orders+returns.csv', body: 'id,customer,amount\n1,Ada,10.50\n2,broken\n' };
    const discovery = await discoverItemRequests(env(), item);
    // The item's work in a clean run, request by request: the boundaries `npm run test:chaos` kills at.
    // S3's first delivery of the upload's event creates at once when it is received within the function's
    // timeout of the upload (a fresh delivery, src/batch/isFreshDelivery.ts); a runner that starts late on
    // a loaded machine receives it later, and then runs the done-check first. Both are the product's paths.
    const receive = [
      'SQS:ReceiveMessage',
      // The failure recorder reads the queue's maxReceiveCount once per container (GetQueueUrl; the
      // GetQueueAttributes after it is polling-classified), to know a last receive when it starts.
      'SQS:GetQueueUrl',
    ];
    // The closing done-check of an output that lists a side output: the output's HEAD, then the side
    // output's HEAD and the input's conditional GET (304: unchanged while it was built) side by side
    // (Promise.all in src/worker/doneCheck.ts readInput), so S3 may see those two in either order.
    const closingCheck = [
      ['S3:HeadObject', 'S3:HeadObject', 'S3:GetObject'],
      ['S3:HeadObject', 'S3:GetObject', 'S3:HeadObject'],
    ];
    const publishAndNotify = (closing: string[]) => [
      'S3:PutObject', // quarantine (side outputs first)
      'S3:PutObject', // normalized output: the commit point
      ...closing,
      'DynamoDB:UpdateItem', // ledger claim
      'HTTP:POST', // webhook
      'DynamoDB:UpdateItem', // ledger completion
      'SQS:DeleteMessageBatch',
    ];
    const expected = closingCheck.flatMap((closing) => [
      [...receive, 'S3:GetObject', ...publishAndNotify(closing)], // created first
      [...receive, 'S3:HeadObject', 'S3:GetObject', ...publishAndNotify(closing)], // checked first
    ]);
    const recorded = discovery.sequence.map((r) => `${r.service}:${r.operation}`);
    expect(expected).toContainEqual(recorded);
    // 23 points created first, 25 with the HEAD first, as test/chaos/README.md says.
    expect(killPointsOf(discovery.sequence)).toHaveLength(recorded[2] === 'S3:HeadObject' ? 25 : 23);

    const chosen: KillPoint[] = [
      { service: 'S3', operation: 'PutObject', occurrence: 2, phase: 'after-response' },
      { service: 'DynamoDB', operation: 'UpdateItem', occurrence: 1, phase: 'after-response' },
      { service: 'HTTP', operation: 'POST', occurrence: 1, phase: 'after-response' },
    ];
    const results = await runItemBoundaryKills(env(), item, discovery, chosen, 3);
    for (const result of results) {
      expect(result.problems, result.label).toEqual([]);
      expect(result, result.label).toMatchObject({ killed: true, lost: 0, duplicated: 0, notificationsApplied: 1 });
      expect(result.runnerStarts, result.label).toBe(2);
    }
    // Killed after the receiver applied the POST, before the ledger recorded it: the next attempt
    // sends the same Idempotency-Key and the receiver answers from its record instead of applying it again.
    expect(results.find((r) => r.label === describeKillPoint(chosen[2] as KillPoint))?.sinkRepeats).toBe(1);
  }, 180_000);

  it('summary stage: SIGKILL after the summary is published, before its staging copy is removed and its marker written', async () => {
    const day = '2026-01-05';
    const inputs = [
      { key: `incoming/dt=${day}/orders.csv`, body: 'id,customer,amount\n1,Ada,10.50\n2,broken\n' },
      { key: `incoming/dt=${day}/events.ndjson`, body: '{"id":1,"kind":"click"}\n' },
    ];
    const discovery = await discoverSummaryTaskRequests(env(), inputs, day);
    // One partition task in a clean run, request by request (`npm run test:chaos` kills at each).
    expect(discovery.sequence.map((r) => `${r.service}:${r.operation}`)).toEqual([
      'SQS:ReceiveMessage',
      'SQS:GetQueueUrl', // the failure recorder's maxReceiveCount, once per container
      'S3:ListObjectsV2', // lineage: normalized outputs of the day
      'S3:ListObjectsV2', // lineage: quarantine objects of the day
      'S3:ListObjectsV2', // coverage: the day's inputs
      'S3:ListObjectsV2', // coverage: the day's failure index entries
      'S3:HeadObject', // done-check of the published summary
      'S3:GetObject', // each input, pinned to its listed ETag
      'S3:GetObject',
      'S3:GetObject',
      'S3:PutObject', // stage
      'S3:GetObject', // read the staged copy back and validate it
      'S3:PutObject', // publish: the commit point
      'S3:DeleteObject', // remove the staging copy
      'S3:ListObjectsV2', // markers of the day
      'S3:PutObject', // the manifest marker
      'SQS:DeleteMessageBatch',
    ]);
    expect(killPointsOf(discovery.sequence)).toHaveLength(33); // as test/chaos/README.md says
    const chosen: KillPoint[] = [
      { service: 'S3', operation: 'PutObject', occurrence: 2, phase: 'after-response' },
      { service: 'S3', operation: 'DeleteObject', occurrence: 1, phase: 'after-response' },
    ];
    const results = await runSummaryTaskKills(env(), inputs, day, discovery, chosen, 2);
    for (const result of results) {
      // The retry finds the summary current, writes the marker, and removes the staging copy.
      expect(result.problems, result.label).toEqual([]);
      expect(result, result.label).toMatchObject({ killed: true, lost: 0, duplicated: 0, itemsVerified: 1 });
      expect(result.runnerStarts, result.label).toBe(2);
    }
  }, 180_000);
});
