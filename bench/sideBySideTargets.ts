import { costPerMillionItems } from './awsCost.js';
import type { FirstRunMixFigures } from './firstRunMix.js';
import type { PhaseFigures, SideBySideResult } from './sideBySide.js';
import { operationsPerItem, type TargetCheck, TargetStatus } from './targetCheck.js';
import { MODELLED_AWS_LATENCY_MS } from './workerThroughput.js';

/**
 * Items per second are bound by the serial request chain of an item when round trips dominate:
 * at equal concurrency, throughput is inversely proportional to the chain's latency. The chain is
 * the requests per item, each at its modelled latency (the requests of one item are sequential in
 * both workers; SQS is per batch, not per item, and the same for both, so it is left out).
 *
 * @example
 * chainLatencyMs({ S3: 1, DynamoDB: 0 }); // 25
 */
export function chainLatencyMs(requestsPerItem: { readonly S3: number; readonly DynamoDB: number }): number {
  return requestsPerItem.S3 * MODELLED_AWS_LATENCY_MS.S3 + requestsPerItem.DynamoDB * MODELLED_AWS_LATENCY_MS.DynamoDB;
}

const x = (n: number) => `${n.toFixed(2)} x`;
const ratioOf = (a: number, b: number) => (b > 0 ? a / b : 0);
const round2 = (n: number) => Math.round(n * 100) / 100;
const requestsOf = (phase: PhaseFigures) => round2(phase.requestsPerItem.S3 + phase.requestsPerItem.DynamoDB);
const chainNote = (phase: PhaseFigures) =>
  `${chainLatencyMs(phase.requestsPerItem)} ms (${phase.requestsPerItem.S3} S3 + ${phase.requestsPerItem.DynamoDB} DynamoDB)`;

/** A target on requests per item of one rerun phase: at most `limit`, counted, never assumed. */
function requestsTarget(id: TargetCheck['id'], phase: PhaseFigures, limit: number, target: string): TargetCheck {
  const n = requestsOf(phase);
  const met = n <= limit;
  return {
    id,
    target,
    status: met ? TargetStatus.MET : TargetStatus.MISSED,
    met,
    measured: `${n} (${operationsPerItem(phase)} per item)`,
    ...(met ? {} : { missedBy: `${round2(n - limit)} request(s) per item too many` }),
  };
}

/**
 * The side-by-side targets, each judged on its hardest figure, with the bound the modelled
 * latencies and the counted request chains put on each throughput ratio.
 *
 * @example
 * const [firstRequests, firstRun] = sideBySideTargets(report.sideBySide);
 */
export function sideBySideTargets(side: SideBySideResult, afterOverwrite?: FirstRunMixFigures): TargetCheck[] {
  const r = side.systems.rerun;
  return [
    requestsTarget(
      'first-run-requests',
      r.first,
      2,
      '2 requests per new object (S3 + DynamoDB; the least a first run can do: read the input, write the output)',
    ),
    firstRunTarget(side),
    duplicateTarget(side, afterOverwrite),
    rerunTarget(side),
    costTarget(side),
  ];
}

/**
 * Requests per duplicate, as issue 32 sets them: 1 for a `rerun reprocess` re-send; for S3's second
 * delivery of an event, 1 on a prefix the sandbox has seen overwritten (the first-run section's
 * `duplicateAfterOverwrite`) and 3 otherwise (printed with its floor of 1). S3's second delivery is a
 * fresh delivery like its first, so nothing but a request tells them apart: on a prefix of new objects
 * the first run creates first (2 requests), and its duplicate pays the GET and the create (412) before
 * the HEAD finds it done.
 */
function duplicateTarget(side: SideBySideResult, afterOverwrite: FirstRunMixFigures | undefined): TargetCheck {
  const r = side.systems.rerun;
  const resend = requestsOf(r.rerun);
  const fresh = requestsOf(r.duplicate);
  const seen = afterOverwrite ? round2(afterOverwrite.requestsPerItem) : undefined;
  const over = [
    resend > 1 ? `a rerun reprocess re-send ${round2(resend - 1)}` : '',
    fresh > 3 ? `S3's second delivery ${round2(fresh - 3)}` : '',
    seen !== undefined && seen > 1 ? `S3's second delivery on a prefix seen overwritten ${round2(seen - 1)}` : '',
  ].filter((t) => t !== '');
  const met = over.length === 0 && seen !== undefined;
  return {
    id: 'requests-per-duplicate',
    target:
      '1 request per rerun reprocess re-send and per S3 second delivery on a prefix the sandbox has seen overwritten; 3 per S3 second delivery otherwise (floor 1); S3 + DynamoDB, no side effect',
    status: met
      ? TargetStatus.MET
      : seen === undefined && over.length === 0
        ? TargetStatus.NOT_MEASURED
        : TargetStatus.MISSED,
    met,
    measured:
      `a rerun reprocess re-send: ${resend} (${operationsPerItem(r.rerun)} per item); ` +
      `S3's second delivery: ${fresh} (${operationsPerItem(r.duplicate)} per item; floor 1, bound 3); ` +
      `on a prefix seen overwritten: ${afterOverwrite ? `${seen} (${operationsPerItem(afterOverwrite)} per item over ${afterOverwrite.items})` : 'not measured (the first-run section did not run)'}`,
    ...(over.length > 0 ? { missedBy: `${over.join('; ')} request(s) per item too many` } : {}),
  };
}

function firstRunTarget(side: SideBySideResult): TargetCheck {
  const r = side.systems.rerun;
  const p = side.systems.powertools;
  const latency = ratioOf(r.workerWithLatency.firstItemsPerSecond, p.workerWithLatency.firstItemsPerSecond);
  const e2e = ratioOf(r.endToEnd.itemsPerSecond, p.endToEnd.itemsPerSecond);
  const bound = ratioOf(chainLatencyMs(p.first.requestsPerItem), chainLatencyMs(r.first.requestsPerItem));
  const missed: string[] = [];
  const why: string[] = [];
  if (latency < 1.25) {
    missed.push(`under modelled latency ${x(latency)}, ${x(1.25 - latency)} short of 1.25 x`);
    why.push(
      `an item's request chain is ${chainNote(r.first)} for rerun against ${chainNote(p.first)} for Powertools: ` +
        `where round trips bound both at the same concurrency the ratio cannot exceed ${x(bound)}`,
    );
  }
  if (e2e < 1.2) {
    missed.push(`end to end ${x(e2e)}, ${x(1.2 - e2e)} short of 1.2 x`);
    why.push(
      `end to end both run under the runner's ceiling of ${side.runnerCeilingItemsPerSecond} items/s ` +
        `(moto answers each ReceiveMessage in about 200 ms and the runner polls one batch at a time); ` +
        `rerun reached ${r.endToEnd.itemsPerSecond} items/s of it`,
    );
  }
  return {
    id: 'first-run-vs-powertools',
    target: '>= 1.25 x items/s under modelled latency (bound printed), and >= 1.2 x end to end',
    status: missed.length === 0 ? TargetStatus.MET : TargetStatus.MISSED,
    met: missed.length === 0,
    measured:
      `modelled latency ${x(latency)} (${r.workerWithLatency.firstItemsPerSecond} vs ${p.workerWithLatency.firstItemsPerSecond} items/s, median of ${side.repeats}); ` +
      `end to end ${x(e2e)} (${r.endToEnd.itemsPerSecond} vs ${p.endToEnd.itemsPerSecond} items/s, median of ${r.endToEnd.runs.length}: ` +
      `${r.endToEnd.runs.join(', ')} vs ${p.endToEnd.runs.join(', ')}); ` +
      `latency bound ${x(bound)} (${chainNote(r.first)} vs ${chainNote(p.first)} per item); ` +
      `worker alone, for reference ${x(ratioOf(r.worker.firstItemsPerSecond, p.worker.firstItemsPerSecond))}`,
    ...(missed.length > 0 ? { missedBy: missed.join('; '), why: why.join('; ') } : {}),
    bound: round2(bound),
  };
}

function rerunTarget(side: SideBySideResult): TargetCheck {
  const r = side.systems.rerun;
  const p = side.systems.powertools;
  const ratio = ratioOf(r.workerWithLatency.rerunItemsPerSecond, p.workerWithLatency.rerunItemsPerSecond);
  const bound = ratioOf(chainLatencyMs(p.rerun.requestsPerItem), chainLatencyMs(r.rerun.requestsPerItem));
  const ofBound = ratioOf(ratio, bound);
  const met = ratio >= 1 || ofBound >= 0.9;
  return {
    id: 'rerun-vs-powertools',
    target: '>= 1.0 x items/s under modelled latency, or >= 0.9 of the printed bound',
    status: met ? TargetStatus.MET : TargetStatus.MISSED,
    met,
    measured:
      `modelled latency ${x(ratio)} (${r.workerWithLatency.rerunItemsPerSecond} vs ${p.workerWithLatency.rerunItemsPerSecond} items/s, median of ${side.repeats}); ` +
      `latency bound ${x(bound)} (${chainNote(r.rerun)} vs ${chainNote(p.rerun)} per duplicate), measured / bound = ${x(ofBound)}`,
    ...(met
      ? bound < 1
        ? {
            why: `a duplicate's chain bounds the ratio at ${x(bound)}: one ${MODELLED_AWS_LATENCY_MS.S3} ms S3 HEAD against one ${MODELLED_AWS_LATENCY_MS.DynamoDB} ms DynamoDB write`,
          }
        : {}
      : {
          missedBy: `${x(ratio)}, ${x(1 - ratio)} short of 1.0 x and ${x(ofBound)} of the bound ${x(bound)} (0.9 needed)`,
          why: `a duplicate costs rerun ${chainNote(r.rerun)} and Powertools ${chainNote(p.rerun)}`,
        }),
    bound: round2(bound),
  };
}

/** S3 requests billed as writes (awsCost.ts): what rebuilding an output sends. */
const WRITES = new Set(['S3:PutObject', 'S3:CreateMultipartUpload', 'S3:UploadPart', 'S3:CompleteMultipartUpload']);

/**
 * rerun's repair phase without the repair itself: every write, and one GET per repaired output
 * (the read that rebuilt it), are left out; the done-checks of every item (HEADs, conditional GETs)
 * and SQS stay, with the phase's whole Lambda usage. The baseline makes no repair requests, because
 * it repairs nothing.
 *
 * @example
 * repairWithoutRepairWrites(result.systems.rerun.repair); // { total: 1.2, left: '40 GetObject, 40 PutObject' }
 */
export function repairWithoutRepairWrites(repair: PhaseFigures & { readonly repaired: number }): {
  total: number;
  left: string;
} {
  const kept: Record<string, number> = {};
  const left: string[] = [];
  for (const [op, n] of Object.entries(repair.operations)) {
    const leftOut = WRITES.has(op) ? n : op === 'S3:GetObject' ? Math.min(n, repair.repaired) : 0;
    if (leftOut > 0) left.push(`${leftOut} ${op.replace(/^\w+:/, '')}`);
    if (n > leftOut) kept[op] = n - leftOut;
  }
  return { total: costPerMillionItems(kept, repair.items, repair.lambda).total, left: left.join(', ') };
}

/**
 * USD per million outputs: the phase's cost spread over `outputs` of its items (infinite when none).
 *
 * @example
 * perOutputs(repair, repair.repaired); // what each output the repair made correct cost
 */
export function perOutputs(phase: PhaseFigures, outputs: number): number {
  return outputs > 0 ? round2((phase.costPerMillionItems.total * phase.items) / outputs) : Number.POSITIVE_INFINITY;
}

const usd = (n: number) => (Number.isFinite(n) ? `$${n}` : 'no output (infinite)');

function costTarget(side: SideBySideResult): TargetCheck {
  const r = side.systems.rerun;
  const p = side.systems.powertools;
  const rows = (['first', 'duplicate', 'rerun', 'overwrite', 'replay'] as const).map((phase) => ({
    phase: phase as string,
    rerun: r[phase].costPerMillionItems.total,
    powertools: p[phase].costPerMillionItems.total,
  }));
  const repair = repairWithoutRepairWrites(r.repair);
  rows.push({
    phase: 'repair (repair writes left out)',
    rerun: repair.total,
    powertools: p.repair.costPerMillionItems.total,
  });
  rows.push({
    phase: 'repair per million outputs it made correct',
    rerun: perOutputs(r.repair, r.repair.repaired),
    powertools: perOutputs(p.repair, p.repair.repaired),
  });
  const dearer = rows.filter((row) => row.rerun > row.powertools);
  const lambda = (phase: PhaseFigures) =>
    `$${phase.costPerMillionItems.lambda} Lambda, ${phase.lambda.msPerItem} ms per item`;
  return {
    id: 'cost-per-million',
    target:
      '<= Powertools in every phase (USD per million items: requests, Lambda duration at the stack memory and Lambda requests, at AWS list prices; the repair phase without the repair requests), and the repair per output it made correct',
    status: dearer.length === 0 ? TargetStatus.MET : TargetStatus.MISSED,
    met: dearer.length === 0,
    measured:
      rows.map((row) => `${row.phase} ${usd(row.rerun)} vs ${usd(row.powertools)}`).join('; ') +
      `; Lambda in the first run: rerun ${lambda(r.first)}, Powertools ${lambda(p.first)} (${side.memoryMiB} MB)` +
      `; correct outputs after the repair: rerun ${r.repair.correctOutputs} of ${r.repair.items} (${r.repair.repaired} of ${r.repair.deleted + r.repair.corrupted} damaged repaired), ` +
      `Powertools ${p.repair.correctOutputs} of ${p.repair.items} (${p.repair.repaired} repaired); ` +
      `per million outputs correct after the repair (not judged): rerun ${usd(perOutputs(r.repair, r.repair.correctOutputs))}, ` +
      `Powertools ${usd(perOutputs(p.repair, p.repair.correctOutputs))}` +
      `; the repair phase's comparison leaves rerun's repair requests out (${repair.left || 'none'}), not its Lambda time`,
    ...(dearer.length === 0
      ? {}
      : {
          missedBy: dearer
            .map((row) => `${row.phase} $${round2(row.rerun - row.powertools)} per million dearer`)
            .join('; '),
          why: dearer
            .map((row) => {
              const phase = row.phase.startsWith('repair') ? 'repair' : (row.phase as 'first');
              return `${row.phase}: rerun ${operationsPerItem(r[phase])} per item and ${lambda(r[phase])}; Powertools ${operationsPerItem(p[phase])} and ${lambda(p[phase])}`;
            })
            .join('; '),
        }),
  };
}
