import { describe, expect, it } from 'vitest';
import { AWS_LIST_PRICES_USD, costPerMillionItems } from '../../bench/awsCost.js';
import type { PeakRssResult } from '../../bench/peakRss.js';
import { chainLatencyMs, checkTargets, TARGET_IDS, TargetStatus } from '../../bench/report.js';
import type { SideBySideResult } from '../../bench/sideBySide.js';

/** One phase's figures from its counted requests (only what the targets read). */
function phase(operations: Record<string, number>, items = 200, repair = { deleted: 0, corrupted: 0, repaired: 0 }) {
  const perItem = (service: string) =>
    Object.entries(operations)
      .filter(([op]) => op.startsWith(`${service}:`))
      .reduce((n, [, c]) => n + c / items, 0);
  return {
    items,
    requestsPerItem: { S3: perItem('S3'), DynamoDB: perItem('DynamoDB'), SQS: perItem('SQS') },
    operations,
    costPerMillionItems: costPerMillionItems(operations, items),
    s3BodyBytesPerItem: 0,
    bodyBytesPerItem: 0,
    itemsPerSecond: 100,
    busyMs: 2000,
    invocations: 20,
    ...repair,
  };
}
const throughput = { firstItemsPerSecond: 100, firstRuns: [100], rerunItemsPerSecond: 100, rerunRuns: [100] };

describe('bench cost and targets', () => {
  it('prices a duplicate: one HEAD per item is $0.40 per million items; one DynamoDB write $0.625', () => {
    expect(costPerMillionItems({ 'S3:HeadObject': 200 }, 200)).toEqual({ s3: 0.4, dynamodb: 0, sqs: 0, total: 0.4 });
    expect(costPerMillionItems({ 'DynamoDB:PutItem': 200 }, 200).dynamodb).toBe(
      AWS_LIST_PRICES_USD.dynamodbWriteUnitPerMillion,
    );
  });

  it('bills PUT-class S3 requests at $5 per million, deletes nothing, and leaves drain checks out', () => {
    expect(
      costPerMillionItems(
        { 'S3:PutObject': 10, 'S3:UploadPart': 10, 'S3:DeleteObject': 10, 'SQS:GetQueueAttributes': 10 },
        10,
      ),
    ).toEqual({ s3: 10, dynamodb: 0, sqs: 0, total: 10 });
    expect(costPerMillionItems({ 'SQS:ReceiveMessage': 1, 'SQS:DeleteMessageBatch': 1 }, 10).sqs).toBe(0.08);
  });

  it('a duplicate chain is one modelled S3 round trip for rerun and one DynamoDB write for Powertools', () => {
    expect(chainLatencyMs({ S3: 1, DynamoDB: 0 }) / chainLatencyMs({ S3: 0, DynamoDB: 1 })).toBeGreaterThan(1);
  });

  it('splits the repair phase into its done-checks and the repair itself, each priced from its requests', () => {
    const sqs = { 'SQS:ReceiveMessage': 24, 'SQS:DeleteMessageBatch': 20 };
    const damage = { deleted: 20, corrupted: 20 };
    const side = {
      items: 200,
      repeats: 1,
      runnerCeilingItemsPerSecond: 120,
      outputsIdentical: true,
      systems: {
        rerun: {
          first: phase({ 'S3:HeadObject': 200, 'S3:GetObject': 200, 'S3:PutObject': 200, ...sqs }),
          rerun: phase({ 'S3:HeadObject': 200, ...sqs }),
          repair: phase({ 'S3:HeadObject': 220, 'S3:GetObject': 40, 'S3:PutObject': 40, ...sqs }, 200, {
            ...damage,
            repaired: 40,
          }),
          worker: throughput,
          workerWithLatency: throughput,
        },
        powertools: {
          first: phase({
            'DynamoDB:PutItem': 200,
            'S3:GetObject': 200,
            'S3:PutObject': 200,
            'DynamoDB:UpdateItem': 200,
            ...sqs,
          }),
          rerun: phase({ 'DynamoDB:PutItem': 200, ...sqs }),
          repair: phase({ 'DynamoDB:PutItem': 200, ...sqs }, 200, { ...damage, repaired: 0 }),
          worker: throughput,
          workerWithLatency: throughput,
        },
      },
    } as unknown as SideBySideResult;
    const cost = checkTargets({ sideBySide: side }).find((t) => t.id === 'cost-per-million');
    expect(cost?.status).toBe(TargetStatus.MISSED);
    // Done-checks: 200 HEADs ($0.40) + 44 SQS requests ($0.088) per 200 items; the repair: 20 HEADs, 40 GETs, 40 PUTs.
    expect(cost?.why).toContain(
      "done-checks (one HEAD per item, and SQS) cost $0.488 per million items, below Powertools' $0.713",
    );
    expect(cost?.why).toContain(
      'the rest, $1.12, is the repair of 40 damaged outputs (20 HeadObject, 40 GetObject, 40 PutObject',
    );
  });

  it('judges peak RSS on the highest of the runs and the CSV throughput on the slower CSV', () => {
    const run = (format: PeakRssResult['format'], peakRssMiB: number, mibPerCpuSecond: number) =>
      ({
        format,
        peakRssMiB,
        mibPerCpuSecond,
        idleRssMiB: 60,
        inputBytes: 1024 ** 3,
        rows: 1024 ** 2,
        seconds: 20,
      }) as PeakRssResult;
    const targets = checkTargets({
      peakRss: [run('csv', 101, 80), run('csv-wide', 90, 150), run('ndjson', 131.5, 45)],
    });
    const rss = targets.find((t) => t.id === 'peak-rss-1gib');
    expect(rss?.status).toBe(TargetStatus.MISSED);
    expect(rss?.missedBy).toBe('ndjson 3.5 MiB over');
    const core = targets.find((t) => t.id === 'normalize-mib-per-core');
    expect(core?.status).toBe(TargetStatus.MET);
    expect(core?.measured).toContain('80 MiB per CPU second of the bundled worker process over the 1 GiB csv input');
    expect(core?.measured).toContain('; csv-wide 150; ndjson 45');
    const slowCsv = checkTargets({ peakRss: [run('csv', 101, 59), run('csv-wide', 100, 150), run('ndjson', 100, 45)] });
    expect(slowCsv.find((t) => t.id === 'peak-rss-1gib')?.status).toBe(TargetStatus.MET);
    const slow = slowCsv.find((t) => t.id === 'normalize-mib-per-core');
    expect(slow?.missedBy).toBe('1 MiB/s short');
    expect(slow?.why).toContain('csv rows are short (about 1024 bytes)');
  });

  it('lists every target of the issue by its stable id, as not measured when its section did not run', () => {
    const targets = checkTargets({});
    expect(targets.map((t) => t.id)).toEqual([...TARGET_IDS]);
    expect(targets.every((t) => t.status === TargetStatus.NOT_MEASURED && !t.met)).toBe(true);
  });
});
