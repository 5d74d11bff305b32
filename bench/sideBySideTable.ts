import { AWS_LIST_PRICES_USD } from './awsCost.js';
import { PHASES, type Phase, type SideBySideResult } from './sideBySide.js';
import { perOutputs, repairWithoutRepairWrites } from './sideBySideTargets.js';
import { MODELLED_AWS_LATENCY_MS } from './workerThroughput.js';

/** A text table: the first column left-aligned, the others right-aligned. */
export type TableRenderer = (header: string[], rows: string[][]) => string;

const PHASE_LABEL: Record<Phase, string> = {
  first: 'first run',
  rerun: 'duplicate (fresh)',
  repair: 'repair (re-sent)',
  overwrite: 'overwrite',
  replay: 'old event replayed',
};

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)} x` : '-');

/** Per phase: requests, Lambda time, cost and correct outputs of both systems. */
function phaseRows(side: SideBySideResult): string[][] {
  const r = side.systems.rerun;
  const p = side.systems.powertools;
  return PHASES.flatMap((phase) => {
    const [a, b] = [r[phase], p[phase]];
    const label = PHASE_LABEL[phase];
    const cost = (c: typeof a.costPerMillionItems) => `${c.total} (${c.s3} + ${c.dynamodb} + ${c.sqs} + ${c.lambda})`;
    return [
      [
        `${label}: S3 + DynamoDB requests / item`,
        `${num(a.requestsPerItem.S3)} + ${num(a.requestsPerItem.DynamoDB)}`,
        `${num(b.requestsPerItem.S3)} + ${num(b.requestsPerItem.DynamoDB)}`,
        '',
      ],
      [
        `${label}: Lambda ms / item (invocations)`,
        `${num(a.lambda.msPerItem)} (${a.invocations})`,
        `${num(b.lambda.msPerItem)} (${b.invocations})`,
        ratio(a.lambda.msPerItem, b.lambda.msPerItem),
      ],
      [
        `${label}: USD / million items (S3 + DynamoDB + SQS + Lambda)`,
        cost(a.costPerMillionItems),
        cost(b.costPerMillionItems),
        ratio(a.costPerMillionItems.total, b.costPerMillionItems.total),
      ],
      [`${label}: correct outputs after`, `${a.correctOutputs} of ${a.items}`, `${b.correctOutputs} of ${b.items}`, ''],
    ];
  });
}

/** The repair's cost comparisons and the throughput rows. */
function summaryRows(side: SideBySideResult): string[][] {
  const r = side.systems.rerun;
  const p = side.systems.powertools;
  const repairOnly = repairWithoutRepairWrites(r.repair);
  const usd = (n: number) => (Number.isFinite(n) ? num(n) : '-');
  return [
    [
      "repair: USD / million items, rerun's repair requests left out",
      String(repairOnly.total),
      String(p.repair.costPerMillionItems.total),
      ratio(repairOnly.total, p.repair.costPerMillionItems.total),
    ],
    [
      'repair: USD / million outputs it made correct',
      usd(perOutputs(r.repair, r.repair.repaired)),
      usd(perOutputs(p.repair, p.repair.repaired)),
      '',
    ],
    [
      'repair: USD / million outputs correct after it',
      usd(perOutputs(r.repair, r.repair.correctOutputs)),
      usd(perOutputs(p.repair, p.repair.correctOutputs)),
      '',
    ],
    [
      `repair: outputs deleted (${r.repair.deleted}) or corrupted (${r.repair.corrupted}), repaired`,
      `${r.repair.repaired}`,
      `${p.repair.repaired}`,
      '',
    ],
    [
      `first run: items / s, worker alone (median of ${side.repeats})`,
      num(r.worker.firstItemsPerSecond),
      num(p.worker.firstItemsPerSecond),
      ratio(r.worker.firstItemsPerSecond, p.worker.firstItemsPerSecond),
    ],
    [
      'first run: items / s, worker alone, + modelled latency',
      num(r.workerWithLatency.firstItemsPerSecond),
      num(p.workerWithLatency.firstItemsPerSecond),
      ratio(r.workerWithLatency.firstItemsPerSecond, p.workerWithLatency.firstItemsPerSecond),
    ],
    [
      `first run: items / s, end to end (median of ${r.endToEnd.runs.length}, no added latency)`,
      num(r.endToEnd.itemsPerSecond),
      num(p.endToEnd.itemsPerSecond),
      ratio(r.endToEnd.itemsPerSecond, p.endToEnd.itemsPerSecond),
    ],
    [
      'duplicate: items / s, worker alone',
      num(r.worker.rerunItemsPerSecond),
      num(p.worker.rerunItemsPerSecond),
      ratio(r.worker.rerunItemsPerSecond, p.worker.rerunItemsPerSecond),
    ],
    [
      'duplicate: items / s, worker alone, + modelled latency',
      num(r.workerWithLatency.rerunItemsPerSecond),
      num(p.workerWithLatency.rerunItemsPerSecond),
      ratio(r.workerWithLatency.rerunItemsPerSecond, p.workerWithLatency.rerunItemsPerSecond),
    ],
    ['outputs byte-identical after the first run', side.outputsIdentical ? 'yes' : 'NO', '', ''],
  ];
}

/**
 * The side-by-side section of the human-readable report: requests, Lambda time and cost per phase,
 * correct outputs after each phase, and the throughput rows.
 *
 * @example
 * out.push(...formatSideBySide(report.sideBySide, table));
 */
export function formatSideBySide(side: SideBySideResult, table: TableRenderer): string[] {
  const r = side.systems.rerun;
  const repairOnly = repairWithoutRepairWrites(r.repair);
  const rows = [...phaseRows(side), ...summaryRows(side)];
  const warnings = PHASES.flatMap((phase) =>
    (['rerun', 'powertools'] as const).flatMap((system) => {
      const anomaly = side.systems[system][phase].anomaly;
      return anomaly ? [`WARNING ${system} ${phase}: ${anomaly} (its time includes a visibility timeout)`] : [];
    }),
  );
  const prices = AWS_LIST_PRICES_USD;
  return [
    `Side by side: ${side.items} items (valid CSV/NDJSON), same emulator, same local runner (batch 10, 4 concurrent invocations, all records of a batch at once in both); ` +
      `the phases run under modelled latency (S3 ${MODELLED_AWS_LATENCY_MS.S3} ms, DynamoDB ${MODELLED_AWS_LATENCY_MS.DynamoDB} ms per request)`,
    table(['', 'rerun', 'Powertools', 'rerun / Powertools'], rows),
    ...warnings,
    `The repair phase's comparison leaves rerun's repair requests out (${repairOnly.left || 'none'}), not its Lambda time; per correct output it is compared whole.`,
    `Prices (${prices.region}, list, USD): S3 PUT-class $${prices.s3PutClassPer1000} and GET/HEAD $${prices.s3GetClassPer1000} per 1,000 requests; ` +
      `DynamoDB on-demand $${prices.dynamodbWriteUnitPerMillion} per million writes, $${prices.dynamodbReadUnitPerMillion} per million reads; ` +
      `SQS $${prices.sqsRequestPerMillion} per million requests; Lambda Arm $${prices.lambdaArmGbSecond} per GB-second at ${side.memoryMiB} MB ` +
      `(the reference stack's memory) and $${prices.lambdaRequestPerMillion} per million invocations (sources in bench/awsCost.ts).`,
    `End-to-end ceiling here: a handler that does nothing runs at ${side.runnerCeilingItemsPerSecond} items/s through the ` +
      'same runner (moto answers each ReceiveMessage in about 200 ms; the runner polls one batch at a time).',
    '',
  ];
}
