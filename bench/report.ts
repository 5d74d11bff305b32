import type { BackfillPlanningResult } from './backfillPlanning.js';
import type { BundleFigures } from './bundleSize.js';
import type { NormalizerThroughput } from './normalizerThroughput.js';
import type { PeakRssResult } from './peakRss.js';
import type { ReprocessPlanningResult } from './reprocessPlanning.js';
import type { SideBySideResult } from './sideBySide.js';
import { MODELLED_AWS_LATENCY_MS } from './workerThroughput.js';

/** Everything one `npm run bench` measured, plus the targets and whether each was met. */
export interface BenchReport {
  readonly environment: {
    readonly emulator: string;
    readonly node: string;
    readonly cpus: number;
    readonly startedAt: string;
    readonly durationSeconds: number;
  };
  readonly sideBySide?: SideBySideResult;
  readonly backfillPlanning?: BackfillPlanningResult;
  readonly reprocessPlanning?: ReprocessPlanningResult;
  readonly bundles?: readonly BundleFigures[];
  readonly peakRss?: PeakRssResult;
  /** The normalizer alone, in process, per input format. */
  readonly normalizer?: readonly NormalizerThroughput[];
  readonly targets: readonly TargetCheck[];
  /** Sections that could not run, with the error. */
  readonly failures?: readonly { readonly section: string; readonly error: string }[];
}

/** One target of the issue, with the measured value. */
export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

/**
 * The targets, checked against what was measured (a section that did not run has no line).
 *
 * @example
 * const targets = checkTargets({ sideBySide, backfillPlanning, peakRss });
 */
export function checkTargets(report: Pick<BenchReport, 'sideBySide' | 'backfillPlanning' | 'peakRss'>): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const side = report.sideBySide;
  if (side) {
    const r = side.systems.rerun;
    const p = side.systems.powertools;
    checks.push({
      target: 'first run: at most 3 S3 requests and no DynamoDB request per item (no side effect)',
      measured: `${r.first.requestsPerItem.S3} S3, ${r.first.requestsPerItem.DynamoDB} DynamoDB`,
      met: r.first.requestsPerItem.S3 <= 3 && r.first.requestsPerItem.DynamoDB === 0,
    });
    const rerunRequests = r.rerun.requestsPerItem.S3 + r.rerun.requestsPerItem.DynamoDB;
    checks.push({
      target: 'rerun: at most 2 requests per skipped item',
      measured: `${rerunRequests} (${r.rerun.requestsPerItem.S3} S3, ${r.rerun.requestsPerItem.DynamoDB} DynamoDB)`,
      met: rerunRequests <= 2,
    });
    checks.push({
      target: 'rerun: under 1 KiB read per skipped item',
      measured: `${r.rerun.bodyBytesPerItem} B of response bodies`,
      met: r.rerun.bodyBytesPerItem < 1024,
    });
    const ratio = p.worker.firstItemsPerSecond > 0 ? r.worker.firstItemsPerSecond / p.worker.firstItemsPerSecond : 0;
    const e2e = p.first.itemsPerSecond > 0 ? r.first.itemsPerSecond / p.first.itemsPerSecond : 0;
    checks.push({
      target: 'first-run throughput at least 1.3 x the Powertools baseline',
      measured:
        `worker ${ratio.toFixed(2)} x (${r.worker.firstItemsPerSecond} vs ${p.worker.firstItemsPerSecond} items/s); ` +
        `with modelled AWS latency ${(r.workerWithLatency.firstItemsPerSecond / Math.max(p.workerWithLatency.firstItemsPerSecond, 0.001)).toFixed(2)} x; ` +
        `end to end ${e2e.toFixed(2)} x (runner ceiling ${side.runnerCeilingItemsPerSecond} items/s)`,
      met: ratio >= 1.3,
    });
    checks.push({
      target: 'a deleted or corrupted output is repaired by a rerun',
      measured: `rerun ${r.repair.repaired}/${r.repair.deleted + r.repair.corrupted}, Powertools ${p.repair.repaired}/${p.repair.deleted + p.repair.corrupted}`,
      met: r.repair.repaired === r.repair.deleted + r.repair.corrupted,
    });
  }
  const plan = report.backfillPlanning;
  if (plan) {
    checks.push({
      target: `backfill planning for ${plan.items.toLocaleString('en-US')} items: at least 100 x fewer requests than one HEAD per item`,
      measured: `${plan.ratio} x (${plan.planner.requests} vs ${plan.headPerItem.requests})`,
      met: plan.ratio >= 100,
    });
  }
  const rss = report.peakRss;
  if (rss) {
    checks.push({
      target: `peak RSS under 256 MiB for a ${(rss.inputBytes / 1024 ** 3).toFixed(2)} GiB input`,
      measured: `${rss.peakRssMiB} MiB`,
      met: rss.peakRssMiB < 256,
    });
  }
  return checks;
}

/**
 * The human-readable report: one table per section, then the targets.
 *
 * @example
 * process.stdout.write(formatBenchReport(report));
 */
export function formatBenchReport(report: BenchReport): string {
  const out: string[] = [];
  const e = report.environment;
  out.push(`rerun bench: ${e.emulator}; node ${e.node}; ${e.cpus} CPU(s); ${e.startedAt}; ${e.durationSeconds} s`, '');
  const side = report.sideBySide;
  if (side) {
    const r = side.systems.rerun;
    const p = side.systems.powertools;
    const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)} x` : '-');
    out.push(
      `Side by side: ${side.items} items (valid CSV/NDJSON), same emulator, same local runner (batch 10, 4 concurrent invocations)`,
      table(
        ['', 'rerun', 'Powertools', 'rerun / Powertools'],
        [
          ['first run: S3 requests / item', num(r.first.requestsPerItem.S3), num(p.first.requestsPerItem.S3), ''],
          [
            'first run: DynamoDB requests / item',
            num(r.first.requestsPerItem.DynamoDB),
            num(p.first.requestsPerItem.DynamoDB),
            '',
          ],
          [
            'first run: SQS requests / item (runner)',
            num(r.first.requestsPerItem.SQS),
            num(p.first.requestsPerItem.SQS),
            '',
          ],
          [
            `first run: items / s, worker alone (median of ${side.repeats})`,
            num(r.worker.firstItemsPerSecond),
            num(p.worker.firstItemsPerSecond),
            ratio(r.worker.firstItemsPerSecond, p.worker.firstItemsPerSecond),
          ],
          [
            `first run: items / s, worker alone, + modelled AWS latency (S3 ${MODELLED_AWS_LATENCY_MS.S3} ms, DynamoDB ${MODELLED_AWS_LATENCY_MS.DynamoDB} ms)`,
            num(r.workerWithLatency.firstItemsPerSecond),
            num(p.workerWithLatency.firstItemsPerSecond),
            ratio(r.workerWithLatency.firstItemsPerSecond, p.workerWithLatency.firstItemsPerSecond),
          ],
          [
            'first run: items / s, end to end through the runner',
            num(r.first.itemsPerSecond),
            num(p.first.itemsPerSecond),
            ratio(r.first.itemsPerSecond, p.first.itemsPerSecond),
          ],
          ['rerun, all done: S3 requests / item', num(r.rerun.requestsPerItem.S3), num(p.rerun.requestsPerItem.S3), ''],
          [
            'rerun, all done: DynamoDB requests / item',
            num(r.rerun.requestsPerItem.DynamoDB),
            num(p.rerun.requestsPerItem.DynamoDB),
            '',
          ],
          [
            'rerun, all done: SQS requests / item (runner)',
            num(r.rerun.requestsPerItem.SQS),
            num(p.rerun.requestsPerItem.SQS),
            '',
          ],
          [
            'rerun, all done: bytes read / skipped item (S3 bodies)',
            num(r.rerun.s3BodyBytesPerItem),
            num(p.rerun.s3BodyBytesPerItem),
            '',
          ],
          [
            'rerun, all done: bytes read / skipped item (S3 + DynamoDB bodies)',
            num(r.rerun.bodyBytesPerItem),
            num(p.rerun.bodyBytesPerItem),
            '',
          ],
          [
            'rerun, all done: items / s, worker alone',
            num(r.worker.rerunItemsPerSecond),
            num(p.worker.rerunItemsPerSecond),
            ratio(r.worker.rerunItemsPerSecond, p.worker.rerunItemsPerSecond),
          ],
          [
            'rerun, all done: items / s, worker alone, + modelled AWS latency',
            num(r.workerWithLatency.rerunItemsPerSecond),
            num(p.workerWithLatency.rerunItemsPerSecond),
            ratio(r.workerWithLatency.rerunItemsPerSecond, p.workerWithLatency.rerunItemsPerSecond),
          ],
          [
            'rerun, all done: items / s, end to end through the runner',
            num(r.rerun.itemsPerSecond),
            num(p.rerun.itemsPerSecond),
            ratio(r.rerun.itemsPerSecond, p.rerun.itemsPerSecond),
          ],
          [
            `repair: outputs deleted (${r.repair.deleted}) or corrupted (${r.repair.corrupted}) behind the worker, then a rerun`,
            `${r.repair.repaired} repaired`,
            `${p.repair.repaired} repaired`,
            '',
          ],
          ['outputs byte-identical after the first run', side.outputsIdentical ? 'yes' : 'NO', '', ''],
        ],
      ),
      ...(['first', 'rerun', 'repair'] as const).flatMap((phase) =>
        (['rerun', 'powertools'] as const).flatMap((system) => {
          const anomaly = side.systems[system][phase].anomaly;
          return anomaly ? [`WARNING ${system} ${phase}: ${anomaly} (its time includes a visibility timeout)`] : [];
        }),
      ),
      `End-to-end ceiling here: a handler that does nothing runs at ${side.runnerCeilingItemsPerSecond} items/s through the ` +
        'same runner (moto answers each ReceiveMessage in about 200 ms; the runner polls one batch at a time).',
      '',
    );
  }
  const plan = report.backfillPlanning;
  if (plan) {
    out.push(
      `Backfill planning: ${plan.items.toLocaleString('en-US')} outputs over ${plan.days} daily partitions`,
      table(
        ['', 'requests', 'time'],
        [
          ['one HEAD per item (per-item done-check)', String(plan.headPerItem.requests), ms(plan.headPerItem.ms)],
          ['ListObjectsV2 of the outputs prefix', String(plan.listing.requests), ms(plan.listing.ms)],
          [
            `rerun backfill planner (bulk done-check; ${plan.planner.partitions} partitions, ${plan.planner.tasks} to run)`,
            String(plan.planner.requests),
            ms(plan.planner.ms),
          ],
        ],
      ),
      '',
    );
  }
  const rp = report.reprocessPlanning;
  if (rp) {
    const n = (x: number) => x.toLocaleString('en-US');
    const row = (label: string, r: ReprocessPlanningResult['listing'], items: number) => [
      label,
      n(items),
      `${n(r.requests.list)} list + ${n(r.requests.lookup)} lookup + ${n(r.requests.head)} HEAD`,
      ms(r.ms),
      `${r.peakRssMiB} MiB`,
    ];
    out.push(
      `Reprocess planning (rerun reprocess --dry-run): ${n(rp.items)} inputs, ${n(rp.missing)} outputs missing, ${n(rp.orphans)} orphans`,
      table(
        ['', 'inputs', 'requests', 'time', 'peak RSS'],
        [
          row('listings only, a tenth of the objects', rp.small, rp.small.items),
          row('listings only (missing, stale by LastModified, orphans)', rp.listing, rp.items),
          row('--verify (one HEAD per output that looks current)', rp.verify, rp.items),
          [
            'scaled to 100,000,000 inputs: listings only (time: moto, linear)',
            n(100_000_000),
            `${n(rp.at100M.listRequests)} list + ${n(rp.at100M.lookups)} lookup`,
            `${rp.at100M.listingHours} h`,
            `${rp.at100M.peakRssMiB} MiB (flat)`,
          ],
          [
            'scaled to 100,000,000 inputs: --verify (time: moto, linear)',
            n(100_000_000),
            `+ ${n(rp.at100M.verifyHeads)} HEAD`,
            `${rp.at100M.verifyHours} h`,
            '',
          ],
        ],
      ),
      '',
    );
  }
  if (report.bundles) {
    out.push(
      'Handlers: the deployed bundles (cdk synth assets; minified ESM, AWS SDK inside) and cold import in a fresh node process with no node_modules in reach',
      table(
        ['handler', 'bytes', 'gzip', 'cold import'],
        report.bundles.map((b) => [
          b.handler,
          String(b.bytes),
          String(b.gzipBytes),
          `${b.coldImportMs} ms (median of ${b.runs})`,
        ]),
      ),
      '',
    );
  }
  const rss = report.peakRss;
  if (rss) {
    out.push(
      `Peak RSS of the worker process (bundled runner + normalize handler) over one ${(rss.inputBytes / 1024 ** 3).toFixed(2)} GiB CSV`,
      table(
        ['', 'value'],
        [
          ['peak RSS (VmHWM)', `${rss.peakRssMiB} MiB`],
          ['highest sampled RSS', `${rss.sampledPeakRssMiB} MiB`],
          ['peak RSS of the same process over an empty queue', `${rss.idleRssMiB} MiB`],
          ['output', `${(rss.outputBytes / 1024 ** 3).toFixed(2)} GiB`],
          [
            'time',
            `${rss.seconds} s (${(rss.inputBytes / 1024 ** 2 / Math.max(rss.seconds, 0.001)).toFixed(1)} MiB/s)`,
          ],
        ],
      ),
      '',
    );
  }
  if (report.normalizer) {
    out.push(
      'Normalizer alone, in process (64 KiB byte chunks, counting sinks; median of the runs)',
      table(
        ['format', 'input', 'records', 'MiB/s (wall)', 'MiB per CPU second', 'CPU runs'],
        report.normalizer.map((n) => [
          n.format,
          `${(n.inputBytes / 1024 ** 2).toFixed(1)} MiB`,
          String(n.records),
          String(n.mibPerSecond),
          String(n.mibPerCpuSecond),
          n.cpuRuns.join(', '),
        ]),
      ),
      '',
    );
  }
  if (report.targets.length > 0) {
    out.push(
      'Targets',
      table(
        ['target', 'measured', 'met'],
        report.targets.map((t) => [t.target, t.measured, t.met ? 'yes' : 'NO']),
      ),
      '',
    );
  }
  for (const failure of report.failures ?? []) out.push(`FAILED to run: ${failure.section}: ${failure.error}`);
  return `${out.join('\n')}\n`;
}

function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [render(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(render)].join('\n');
}

function num(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

function ms(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${n} ms`;
}
