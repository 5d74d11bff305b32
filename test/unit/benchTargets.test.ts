import { describe, expect, it } from 'vitest';
import { AWS_LIST_PRICES_USD, costPerMillionItems } from '../../bench/awsCost.js';
import { coldStartTarget } from '../../bench/coldStart.js';
import type { FirstRunMixFigures, FirstRunMixResult } from '../../bench/firstRunMix.js';
import type { PeakRssResult } from '../../bench/peakRss.js';
import type { ReprocessPlanningResult } from '../../bench/reprocessPlanning.js';
import type { SideBySideResult } from '../../bench/sideBySide.js';
import { chainLatencyMs } from '../../bench/sideBySideTargets.js';
import { TARGET_IDS, TargetStatus } from '../../bench/targetCheck.js';
import { checkTargets } from '../../bench/targets.js';

const ITEMS = 200;
const SQS = { 'SQS:ReceiveMessage': 24, 'SQS:DeleteMessageBatch': 20 };

/** One phase's figures from its counted requests and Lambda time (only what the targets read). */
function phase(operations: Record<string, number>, options: { msPerItem?: number; correct?: number } = {}) {
  const perItem = (service: string) =>
    Object.entries(operations)
      .filter(([op]) => op.startsWith(`${service}:`))
      .reduce((n, [, c]) => n + c / ITEMS, 0);
  const lambda = { invocations: 20, durationMs: (options.msPerItem ?? 10) * ITEMS, memoryMiB: 512 };
  return {
    items: ITEMS,
    requestsPerItem: { S3: perItem('S3'), DynamoDB: perItem('DynamoDB'), SQS: perItem('SQS') },
    operations: { ...operations, ...SQS },
    lambda: { ...lambda, msPerItem: options.msPerItem ?? 10 },
    costPerMillionItems: costPerMillionItems({ ...operations, ...SQS }, ITEMS, lambda),
    s3BodyBytesPerItem: 0,
    bodyBytesPerItem: 0,
    itemsPerSecond: 100,
    busyMs: 2000,
    invocations: 20,
    correctOutputs: options.correct ?? ITEMS,
  };
}
const throughput = (first: number, rerun: number) => ({
  firstItemsPerSecond: first,
  firstRuns: [first],
  rerunItemsPerSecond: rerun,
  rerunRuns: [rerun],
});

/** rerun at the physical minimum against the baseline's GET + PUT + 2 DynamoDB writes. */
function sideBySide(
  over: {
    rerunFirst?: Record<string, number>;
    rerunDuplicate?: Record<string, number>;
    latency?: [number, number];
    e2e?: [number, number];
  } = {},
) {
  const [rl, pl] = over.latency ?? [130, 100];
  const [re, pe] = over.e2e ?? [62, 50];
  const first = over.rerunFirst ?? { 'S3:GetObject': 200, 'S3:PutObject': 200 };
  const damage = { deleted: 20, corrupted: 20 };
  return {
    items: ITEMS,
    repeats: 1,
    memoryMiB: 512,
    runnerCeilingItemsPerSecond: 120,
    outputsIdentical: true,
    systems: {
      rerun: {
        first: phase(first),
        duplicate: phase(over.rerunDuplicate ?? { 'S3:HeadObject': 200 }, { msPerItem: 3 }),
        rerun: phase({ 'S3:HeadObject': 200 }, { msPerItem: 3 }),
        repair: {
          ...phase({ 'S3:HeadObject': 220, 'S3:GetObject': 40, 'S3:PutObject': 40 }, { msPerItem: 4 }),
          ...damage,
          repaired: 40,
        },
        overwrite: phase({ 'S3:PutObject': 200, 'S3:HeadObject': 200, 'S3:GetObject': 200 }, { msPerItem: 12 }),
        replay: phase({ 'S3:HeadObject': 200 }, { msPerItem: 3 }),
        worker: throughput(rl, 300),
        workerWithLatency: throughput(rl, 300),
        endToEnd: { itemsPerSecond: re, runs: [re] },
      },
      powertools: {
        first: phase(
          { 'DynamoDB:PutItem': 200, 'S3:GetObject': 200, 'S3:PutObject': 200, 'DynamoDB:UpdateItem': 200 },
          { msPerItem: 12 },
        ),
        duplicate: phase({ 'DynamoDB:PutItem': 200 }, { msPerItem: 3 }),
        rerun: phase({ 'DynamoDB:PutItem': 200 }, { msPerItem: 3 }),
        repair: { ...phase({ 'DynamoDB:PutItem': 200 }, { msPerItem: 3, correct: 160 }), ...damage, repaired: 0 },
        overwrite: phase(
          { 'DynamoDB:PutItem': 200, 'S3:GetObject': 200, 'S3:PutObject': 200, 'DynamoDB:UpdateItem': 200 },
          { msPerItem: 12 },
        ),
        replay: phase({ 'DynamoDB:PutItem': 200 }, { msPerItem: 3 }),
        worker: throughput(pl, 320),
        workerWithLatency: throughput(pl, 320),
        endToEnd: { itemsPerSecond: pe, runs: [pe] },
      },
    },
  } as unknown as SideBySideResult;
}
const target = (side: SideBySideResult, id: string) => checkTargets({ sideBySide: side }).find((t) => t.id === id);

describe('bench cost and targets', () => {
  it('prices a duplicate: one HEAD per item is $0.40 per million items; one DynamoDB write $0.625', () => {
    expect(costPerMillionItems({ 'S3:HeadObject': 200 }, 200)).toEqual({
      s3: 0.4,
      dynamodb: 0,
      sqs: 0,
      lambda: 0,
      total: 0.4,
    });
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
    ).toEqual({ s3: 10, dynamodb: 0, sqs: 0, lambda: 0, total: 10 });
    expect(costPerMillionItems({ 'SQS:ReceiveMessage': 1, 'SQS:DeleteMessageBatch': 1 }, 10).sqs).toBe(0.08);
  });

  it('bills Lambda per GB-second at the memory and per invocation: 1 s at 512 MB and one request for 10 items', () => {
    // 0.5 GB-s x $0.0000133334 + $0.0000002, per 10 items, is $0.687 per million items.
    const cost = costPerMillionItems({}, 10, { invocations: 1, durationMs: 1000, memoryMiB: 512 });
    expect(cost.lambda).toBe(0.687);
    expect(cost.total).toBe(0.687);
  });

  it('a duplicate chain is one modelled S3 round trip for rerun and one DynamoDB write for Powertools', () => {
    expect(chainLatencyMs({ S3: 1, DynamoDB: 0 }) / chainLatencyMs({ S3: 0, DynamoDB: 1 })).toBeGreaterThan(1);
  });

  it("meets the request targets on the counted requests and prints the first run's latency bound", () => {
    const side = sideBySide();
    expect(target(side, 'first-run-requests')?.status).toBe(TargetStatus.MET);
    // Without the first-run section, S3's duplicates on a prefix seen overwritten are not measured.
    expect(target(side, 'requests-per-duplicate')?.status).toBe(TargetStatus.NOT_MEASURED);
    const first = target(side, 'first-run-vs-powertools');
    // 2 x 25 ms against 2 x 25 + 2 x 8 ms: 66 / 50.
    expect(first?.bound).toBe(1.32);
    expect(first?.status).toBe(TargetStatus.MET);
    expect(first?.measured).toContain('latency bound 1.32 x');
  });

  it('judges requests per duplicate as issue 32 sets them: 1 per re-send and on a prefix seen overwritten, 3 otherwise', () => {
    const seen = (operations: Record<string, number>) =>
      ({
        workload: 'duplicate-after-overwrite',
        firstRun: 'adaptive',
        items: 200,
        operations,
        requestsPerItem: Object.values(operations).reduce((a, b) => a + b, 0) / 200,
        s3UsdPerMillion: 0,
      }) as unknown as FirstRunMixFigures;
    const judged = (side: SideBySideResult, afterOverwrite: FirstRunMixFigures) =>
      checkTargets({
        sideBySide: side,
        firstRunMix: {
          figures: [],
          verdicts: [],
          duplicateAfterOverwrite: afterOverwrite,
        } as unknown as FirstRunMixResult,
      }).find((t) => t.id === 'requests-per-duplicate');
    // S3's second delivery on a prefix of new objects: a create in vain and the HEAD, 3, within its bound.
    const fresh = sideBySide({ rerunDuplicate: { 'S3:GetObject': 200, 'S3:PutObject': 200, 'S3:HeadObject': 200 } });
    const met = judged(fresh, seen({ 'S3:HeadObject': 200 }));
    expect(met?.status).toBe(TargetStatus.MET);
    expect(met?.measured).toMatch(
      /^a rerun reprocess re-send: 1 .*; S3's second delivery: 3 \(.*; floor 1, bound 3\); on a prefix seen overwritten: 1 \(S3:HeadObject 1 per item over 200\)$/,
    );
    // On a prefix the sandbox has seen overwritten, a duplicate that still creates first misses by 2.
    const missed = judged(fresh, seen({ 'S3:GetObject': 200, 'S3:PutObject': 200, 'S3:HeadObject': 200 }));
    expect(missed).toMatchObject({
      status: TargetStatus.MISSED,
      missedBy: "S3's second delivery on a prefix seen overwritten 2 request(s) per item too many",
    });
    // Above 3 for S3's second delivery is a miss too.
    const worse = sideBySide({ rerunDuplicate: { 'S3:GetObject': 400, 'S3:PutObject': 200, 'S3:HeadObject': 200 } });
    expect(judged(worse, seen({ 'S3:HeadObject': 200 }))?.missedBy).toBe(
      "S3's second delivery 1 request(s) per item too many",
    );
  });

  it('counts a HEAD before the work as a missed first-run target, and judges the ratio on the harder figure', () => {
    const side = sideBySide({
      rerunFirst: { 'S3:HeadObject': 200, 'S3:GetObject': 200, 'S3:PutObject': 200 },
      latency: [130, 100],
      e2e: [59, 50],
    });
    const requests = target(side, 'first-run-requests');
    expect(requests?.status).toBe(TargetStatus.MISSED);
    expect(requests?.missedBy).toBe('1 request(s) per item too many');
    const first = target(side, 'first-run-vs-powertools');
    expect(first?.bound).toBe(0.88);
    expect(first?.status).toBe(TargetStatus.MISSED);
    expect(first?.missedBy).toBe('end to end 1.18 x, 0.02 x short of 1.2 x');
  });

  it('meets rerun-vs-powertools at 0.9 of its bound, and misses it below', () => {
    // Bound: one 8 ms write against one 25 ms HEAD, 0.32 x.
    const near = sideBySide();
    (near.systems.rerun.workerWithLatency as { rerunItemsPerSecond: number }).rerunItemsPerSecond = 96;
    (near.systems.powertools.workerWithLatency as { rerunItemsPerSecond: number }).rerunItemsPerSecond = 320;
    expect(target(near, 'rerun-vs-powertools')?.status).toBe(TargetStatus.MET);
    (near.systems.rerun.workerWithLatency as { rerunItemsPerSecond: number }).rerunItemsPerSecond = 80;
    const far = target(near, 'rerun-vs-powertools');
    expect(far?.status).toBe(TargetStatus.MISSED);
    expect(far?.missedBy).toContain('0.78 x of the bound 0.32 x');
  });

  it("compares the repair phase without rerun's repair requests, and per correct output", () => {
    const cost = target(sideBySide(), 'cost-per-million');
    expect(cost?.measured).toContain(
      'correct outputs after the repair: rerun 200 of 200 (40 of 40 damaged repaired), Powertools 160 of 200 (0 repaired)',
    );
    expect(cost?.measured).toContain("leaves rerun's repair requests out (40 GetObject, 40 PutObject)");
    expect(cost?.measured).toContain('repair per million outputs it made correct $');
    expect(cost?.measured).toContain('vs no output (infinite)');
    expect(cost?.status).toBe(TargetStatus.MET);
    // A repair that makes rerun's Lambda time dearer than the baseline's shows as missed.
    const slow = sideBySide();
    const repair = slow.systems.rerun.repair as {
      costPerMillionItems: { total: number };
      lambda: { durationMs: number };
    };
    repair.lambda.durationMs = 200 * 400;
    const missed = target(slow, 'cost-per-million');
    expect(missed?.status).toBe(TargetStatus.MISSED);
    expect(missed?.missedBy).toContain('repair (repair writes left out)');
  });

  it('judges the cold start on the CPU medians of at least 9 runs, normalize against the baseline, the bare S3 client the floor', () => {
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const figures = (handler: string, cpu: number[]) => ({
      handler,
      firstInvokeMs: cpu.map((c) => c + 100),
      medianMs: median(cpu) + 100,
      cpuMs: cpu,
      medianCpuMs: median(cpu),
    });
    const nine = (base: number) => Array.from({ length: 9 }, (_, i) => base + (i % 3) * 10);
    const met = coldStartTarget({
      runs: 9,
      normalize: figures('normalize', nine(130)),
      powertools: figures('powertools-baseline', nine(150)),
      bareS3: figures('bare S3 client (floor)', nine(100)),
    });
    expect(met.status).toBe(TargetStatus.MET);
    expect(met.measured).toMatch(
      /^CPU: normalize 140 ms vs Powertools 160 ms, floor \(bare S3 client\) 110 ms \(medians of 9: /,
    );
    // Slower than the baseline in CPU, whatever the wall time says.
    const slower = coldStartTarget({
      runs: 9,
      normalize: { ...figures('normalize', nine(170)), medianMs: 1 },
      powertools: figures('powertools-baseline', nine(150)),
    });
    expect(slower).toMatchObject({ status: TargetStatus.MISSED, missedBy: '20 ms of CPU more' });
    expect(slower.measured).toContain('floor not measured');
    // A median of fewer than 9 runs is not the target's figure.
    const few = coldStartTarget({
      runs: 5,
      normalize: figures('normalize', [130, 130, 130, 130, 130]),
      powertools: figures('powertools-baseline', [150, 150, 150, 150, 150]),
    });
    expect(few).toMatchObject({ status: TargetStatus.MISSED, missedBy: '4 run(s) too few (--cold-start-runs)' });
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
      peakRss: [run('csv', 101, 95), run('csv-wide', 90, 150), run('ndjson', 131.5, 45)],
    });
    const rss = targets.find((t) => t.id === 'peak-rss-1gib');
    expect(rss?.status).toBe(TargetStatus.MISSED);
    expect(rss?.missedBy).toBe('ndjson 3.5 MiB over');
    const core = targets.find((t) => t.id === 'normalize-mib-per-core');
    expect(core?.status).toBe(TargetStatus.MET);
    expect(core?.measured).toContain('95 MiB per CPU second of the bundled worker process over the 1 GiB csv input');
    expect(core?.measured).toContain('; csv-wide 150; ndjson 45');
    // Issue 32's floor is 90 MiB per CPU second: 89 misses it.
    const slowCsv = checkTargets({ peakRss: [run('csv', 101, 89), run('csv-wide', 100, 150), run('ndjson', 100, 45)] });
    expect(slowCsv.find((t) => t.id === 'peak-rss-1gib')?.status).toBe(TargetStatus.MET);
    const slow = slowCsv.find((t) => t.id === 'normalize-mib-per-core');
    expect(slow?.missedBy).toBe('1 MiB/s short');
    expect(slow?.why).toContain('csv rows are short (about 1024 bytes)');
  });

  it('judges each workload as mix-<workload>: with SQS and Lambda, against the cheaper fixed path + 5 % and the baseline', () => {
    const fig = (workload: string, firstRun: string, requestsPerItem: number, s3UsdPerMillion: number) => ({
      workload,
      firstRun,
      items: 200,
      operations: {},
      requestsPerItem,
      s3UsdPerMillion,
    });
    const firstRunMix = {
      figures: [
        ...[
          ['create', 2.01, 5.4],
          ['check', 3, 5.8],
          ['adaptive', 2.01, 5.4],
          ['adaptive-probe', 2.02, 5.4],
        ].map(([run, n, usd]) => fig('append', run as string, n as number, usd as number)),
        ...[
          ['create', 2.6, 6.56],
          ['check', 3.2, 5.88],
          ['adaptive', 3.2, 5.9],
          ['adaptive-probe', 3.2, 5.9],
        ].map(([run, n, usd]) => fig('mutable', run as string, n as number, usd as number)),
        ...[
          ['create', 3, 5.8],
          ['check', 1, 0.4],
          ['adaptive', 1.03, 0.43],
          ['adaptive-probe', 1, 0.4],
        ].map(([run, n, usd]) => fig('reupload', run as string, n as number, usd as number)),
      ],
      verdicts: [],
    } as unknown as FirstRunMixResult;
    const side = sideBySide();
    // rerun's phases at 130 items/s under modelled latency, the baseline's at 100.
    for (const phase of ['first', 'duplicate', 'overwrite'] as const) {
      (side.systems.rerun[phase] as { itemsPerSecond: number }).itemsPerSecond = 130;
    }
    const targets = checkTargets({ firstRunMix, sideBySide: side });
    const byId = (id: string) => targets.find((t) => t.id === id);
    // append: S3 5.40 + SQS and Lambda of 99 % first runs and 1 % duplicates (0.1745) + 0.02 requests more
    // than the phases at 25 ms each (0.0033) = 5.58; its chain 2.01 against the phases' 1.99: 128.7 items/s.
    expect(byId('mix-append')?.status).toBe(TargetStatus.MET);
    expect(byId('mix-append')?.measured).toContain('adaptive 5.58 USD per million items at 129 items/s');
    expect(byId('mix-append')?.measured).toContain('checked first 6.14 USD (bound 5.86 USD)');
    expect(byId('mix-append')?.measured).toContain('at 100 items/s (1.29 x); end to end 1.24 x');
    // mutable: checking first for its new objects makes the chain 3.2 against the phases' 2.2: 89.4 items/s.
    expect(byId('mix-mutable')).toMatchObject({
      status: TargetStatus.MISSED,
      missedBy: "items/s 0.89 x of the baseline's, 0.11 x short of 1.00 x",
    });
    // reupload: 0.43 + 0.128 + 0.005 = 0.563 against 0.528 checked first + 5 % = 0.554.
    expect(byId('mix-reupload')).toMatchObject({
      status: TargetStatus.MISSED,
      missedBy: "0.0086 USD above the fixed paths' bound",
    });
    expect(byId('mix-reupload')?.why).toContain("unknownPrefix 'check'");
    // Without the side-by-side section there is no Lambda, SQS or baseline to judge with.
    const alone = checkTargets({ firstRunMix });
    expect(alone.find((t) => t.id === 'mix-append')?.status).toBe(TargetStatus.NOT_MEASURED);
    // Judged from the side-by-side and reprocess sections, the second of which did not run here.
    expect(byId('mix-reprocess')?.status).toBe(TargetStatus.NOT_MEASURED);
  });

  it('judges mix-reprocess: the plan of a done prefix against every input sent again, rerun worker and baseline', () => {
    const planning = (list: number, lookup: number, ms: number) =>
      ({ items: 1000, listing: { ms, requests: { list, lookup, head: 0 } } }) as unknown as ReprocessPlanningResult;
    const judged = (plan: ReprocessPlanningResult | undefined, side: SideBySideResult | null = sideBySide()) =>
      checkTargets({ ...(side ? { sideBySide: side } : {}), ...(plan ? { reprocessPlanning: plan } : {}) }).find(
        (t) => t.id === 'mix-reprocess',
      );
    // Two input LISTs and two output LISTs a page of 1,000: 0.02 USD per million, at 2,000 items/s.
    const met = judged(planning(4, 0, 500));
    expect(met?.status).toBe(TargetStatus.MET);
    expect(met?.measured).toContain(
      'the plan 0.0200 USD per million items (4 LISTs, 0 lookups and 0 HEADs over 1000 inputs',
    );
    expect(met?.measured).toContain('at 2000 items/s');
    // A plan of three requests by key per input costs more than sending each again (a HEAD, SQS, Lambda).
    const looked = judged(planning(4, 3000, 500));
    expect(looked?.status).toBe(TargetStatus.MISSED);
    expect(looked?.missedBy).toMatch(
      /^above the fixed path's bound by 0\.\d\d USD; above the baseline by 0\.\d\d USD$/,
    );
    // A plan slower than the baseline's re-sends (100 items/s here) misses on throughput alone.
    const slow = judged(planning(4, 0, 20_000));
    expect(slow).toMatchObject({ status: TargetStatus.MISSED, missedBy: "50 items per second under the baseline's" });
    expect(judged(undefined)?.status).toBe(TargetStatus.NOT_MEASURED);
    expect(judged(planning(4, 0, 500), null)?.status).toBe(TargetStatus.NOT_MEASURED);
  });

  it('judges overwrite-requests on both fixed paths of the first-run section: <= 4 checked first, <= 5 created first', () => {
    const figures = (firstRun: 'create' | 'check', operations: Record<string, number>) => ({
      workload: 'overwrite',
      firstRun,
      items: 10,
      operations,
      requestsPerItem: Object.values(operations).reduce((a, b) => a + b, 0) / 10,
      s3UsdPerMillion: 0,
    });
    const judged = (create: Record<string, number>, check: Record<string, number>) =>
      checkTargets({
        firstRunMix: {
          figures: [],
          verdicts: [],
          overwrite: { create: figures('create', create), check: figures('check', check) },
        } as unknown as FirstRunMixResult,
      }).find((t) => t.id === 'overwrite-requests');
    const fiveCreated = { 'S3:GetObject': 20, 'S3:PutObject': 20, 'S3:HeadObject': 10 };
    const fourChecked = { 'S3:HeadObject': 10, 'S3:GetObject': 20, 'S3:PutObject': 10 };
    expect(judged(fiveCreated, fourChecked)).toMatchObject({
      status: TargetStatus.MET,
      measured: expect.stringContaining('checked first 4 (S3:HeadObject 1, S3:GetObject 2, S3:PutObject 1)'),
    });
    // The six requests of an overwrite that read the input again before publishing: missed on that path alone.
    expect(judged({ ...fiveCreated, 'S3:GetObject': 30 }, fourChecked)).toMatchObject({
      status: TargetStatus.MISSED,
      missedBy: 'created first 1 request(s) per item too many',
    });
    expect(checkTargets({}).find((t) => t.id === 'overwrite-requests')?.status).toBe(TargetStatus.NOT_MEASURED);
  });

  it('lists every target of the issue by its stable id, as not measured when its section did not run', () => {
    const targets = checkTargets({});
    expect(targets.map((t) => t.id)).toEqual([...TARGET_IDS]);
    expect(targets.every((t) => t.status === TargetStatus.NOT_MEASURED && !t.met)).toBe(true);
  });
});

describe('bench/judge.ts: a saved report judged again', () => {
  it('recomputes the targets from the saved sections, whatever targets the report was saved with', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'rerun-judge-'));
    const file = join(dir, 'report.json');
    // Saved by an older bench: one stale target, a side-by-side section to judge.
    writeFileSync(
      file,
      JSON.stringify({ sideBySide: sideBySide(), targets: [{ id: 'first-run-requests', met: false }] }),
    );
    const judged = JSON.parse(
      execFileSync(process.execPath, ['--import', 'tsx', 'bench/judge.ts', file, '--json'], { encoding: 'utf8' }),
    ) as { id: string; status: string }[];
    expect(judged.map((t) => t.id)).toEqual([...TARGET_IDS]);
    expect(judged.find((t) => t.id === 'first-run-requests')?.status).toBe(TargetStatus.MET);
    expect(judged.find((t) => t.id === 'cold-start')?.status).toBe(TargetStatus.NOT_MEASURED);
  });
});
