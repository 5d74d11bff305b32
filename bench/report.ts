import { NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT } from '../src/sizing/sizeWorker.js';
import type { AWS_LIST_PRICES_USD } from './awsCost.js';
import type { BackfillPlanningResult } from './backfillPlanning.js';
import type { BundleFigures } from './bundleSize.js';
import type { ColdStartResult } from './coldStart.js';
import type { CsvReaderComparison } from './csvReaders.js';
import type { FirstRunMixResult } from './firstRunMix.js';
import type { NormalizerThroughput } from './normalizerThroughput.js';
import type { PeakRssResult } from './peakRss.js';
import type { ReprocessPlanningResult } from './reprocessPlanning.js';
import type { ShardedPlanningResult } from './shardedPlanning.js';
import type { SideBySideResult } from './sideBySide.js';
import { formatSideBySide } from './sideBySideTable.js';
import { type TargetCheck, TargetStatus } from './targetCheck.js';
import type { WindowGrainsResult } from './windowGrains.js';

/** Everything one `npm run bench` measured, plus the targets and whether each was met. */
export interface BenchReport {
  readonly environment: {
    readonly emulator: string;
    readonly node: string;
    readonly cpus: number;
    readonly startedAt: string;
    readonly durationSeconds: number;
    /** Seconds each section that ran took. */
    readonly sectionSeconds?: Readonly<Record<string, number>>;
  };
  readonly sideBySide?: SideBySideResult;
  /** The adaptive first run against both fixed paths, per workload (bench/firstRunMix.ts). */
  readonly firstRunMix?: FirstRunMixResult;
  readonly backfillPlanning?: BackfillPlanningResult;
  readonly reprocessPlanning?: ReprocessPlanningResult;
  /** Planning's listing, sequential against sharded, under a modelled LIST latency (in memory). */
  readonly shardedPlanning?: ShardedPlanningResult;
  /** The largest window each grain reaches at a window stage's sizing, directly and from its parts (bench/windowGrains.ts). */
  readonly windowGrains?: WindowGrainsResult;
  readonly bundles?: readonly BundleFigures[];
  /** Import plus first invoke of the normalize and the baseline bundles under the Lambda runtime mode. */
  readonly coldStart?: ColdStartResult;
  /** The worker process over each large input of the rss section (generatedRows.ts). */
  readonly peakRss?: readonly PeakRssResult[];
  /** The normalizer alone, in process, per input format. */
  readonly normalizer?: readonly NormalizerThroughput[];
  /** rerun's CSV reader against csv-parse on the same text (the README's FAQ quotes it). */
  readonly csvReaders?: CsvReaderComparison;
  readonly targets: readonly TargetCheck[];
  /** The AWS list prices the cost figures use (bench/awsCost.ts cites where each comes from). */
  readonly prices: typeof AWS_LIST_PRICES_USD;
  /** Sections that could not run, with the error. */
  readonly failures?: readonly { readonly section: string; readonly error: string }[];
  /** Sections this machine could not run (a tool they need could not be installed), with the reason. */
  readonly notRun?: readonly { readonly section: string; readonly reason: string }[];
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
  const perSection = Object.entries(e.sectionSeconds ?? {}).map(([name, s]) => `${name} ${s} s`);
  out.push(
    `rerun bench: ${e.emulator}; node ${e.node}; ${e.cpus} CPU(s); ${e.startedAt}; ${e.durationSeconds} s` +
      (perSection.length > 0 ? ` (${perSection.join(', ')})` : ''),
    '',
  );
  if (report.sideBySide) out.push(...formatSideBySide(report.sideBySide, table));
  if (report.firstRunMix) formatFirstRunMix(report.firstRunMix, out);
  formatPlanning(report, out);
  formatHandlers(report, out);
  formatRss(report, out);
  formatRest(report, out);
  for (const failure of report.failures ?? []) out.push(`FAILED to run: ${failure.section}: ${failure.error}`);
  for (const skipped of report.notRun ?? []) out.push(`NOT MEASURED: ${skipped.section}: ${skipped.reason}`);
  return `${out.join('\n')}\n`;
}

/** Per workload: S3 requests and their cost per item for each firstRun, and the adaptive verdict. */
function formatFirstRunMix(mix: FirstRunMixResult, out: string[]): void {
  out.push(
    'First run per workload (one warm sandbox, fresh deliveries, versioned input; S3 requests only, list prices)',
    table(
      ['workload', 'firstRun', 'S3 requests per item', 'S3 USD per million items'],
      mix.figures.map((f) => [f.workload, f.firstRun, String(f.requestsPerItem), f.s3UsdPerMillion.toFixed(2)]),
    ),
    ...mix.verdicts.map(
      (v) =>
        `${v.workload}: adaptive ${v.adaptive.toFixed(2)} USD, bound ${v.bound.toFixed(2)} (the cheaper fixed path ${v.cheaperFixed.toFixed(2)} + 5 %): ${v.met ? 'met' : 'MISSED'}; ` +
        `adaptive-probe (unknownPrefix 'check') ${v.probe.toFixed(2)}: ${v.probeMet ? 'met' : 'MISSED'}`,
    ),
    '',
  );
}

/** The planning sections: backfill, reprocess, sharded listing. */
function formatPlanning(report: BenchReport, out: string[]): void {
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
  const wg = report.windowGrains;
  if (wg) out.push(...formatWindowGrains(wg), '');
  const sp = report.shardedPlanning;
  if (sp) {
    const n = (x: number) => x.toLocaleString('en-US');
    const row = (label: string, r: ShardedPlanningResult['sequential']) => [
      label,
      r.shards === 1 ? n(r.requests) : `${n(r.requests)} (${n(r.splits)} ranges split off)`,
      String(r.maxInFlight),
      ms(r.ms),
    ];
    out.push(
      `Sharded planning: listing ${n(sp.keys)} keys at a modelled ${sp.listLatencyMs} ms per LIST (in memory; same order: ${sp.sameOrder ? 'yes' : 'NO'}), ${sp.speedup} x faster`,
      table(
        ['', 'LIST requests', 'in flight', 'time'],
        [
          row('sequential (one page after the other)', sp.sequential),
          row(`${sp.sharded.shards} shards`, sp.sharded),
          [
            'scaled to 1,000,000 keys (linear)',
            `${n(sp.extrapolated.at1M.sequentialRequests)} vs ${n(sp.extrapolated.at1M.shardedRequests)}`,
            '',
            `${sp.extrapolated.at1M.sequentialMinutes} min vs ${sp.extrapolated.at1M.shardedMinutes} min`,
          ],
          [
            'scaled to 100,000,000 keys (linear)',
            `${n(sp.extrapolated.at100M.sequentialRequests)} vs ${n(sp.extrapolated.at100M.shardedRequests)}`,
            '',
            `${sp.extrapolated.at100M.sequentialHours} h vs ${sp.extrapolated.at100M.shardedHours} h`,
          ],
        ],
      ),
      '',
    );
  }
  if (sp) {
    const usd = (x: number) => `$${x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
    const row = (label: string, c: ShardedPlanningResult['cost100M']['sqs']) => [
      label,
      usd(c.listing),
      usd(c.queue),
      usd(c.job),
      usd(c.invokes),
      usd(c.total),
    ];
    out.push(
      'Reprocessing 100,000,000 objects by each engine (list prices, us-east-1; LIST requests as counted above; Lambda duration left out: the same per object)',
      table(
        ['engine', 'LIST + manifest', 'SQS', 'job fees', 'Lambda invokes', 'total'],
        [
          row('sqs (plan, 10 per message batch)', sp.cost100M.sqs),
          row('batch-operations (plan, CSV manifest)', sp.cost100M.batchOperationsPlanned),
          row('batch-operations (--generate-manifest)', sp.cost100M.batchOperationsGenerated),
        ],
      ),
      '',
    );
  }
}

/** The bundles and their cold starts. */
function formatHandlers(report: BenchReport, out: string[]): void {
  if (report.bundles) {
    out.push(
      'Handlers: the deployed bundles (cdk synth assets; minified ESM, AWS SDK inside; bytes read at start: the entry and the chunks it imports, not those only a dynamic import loads) and cold import in a fresh node process with no node_modules in reach',
      table(
        ['handler', 'bytes at start', 'gzip', 'all chunks', 'cold import'],
        report.bundles.map((b) => [
          b.handler,
          String(b.bytes),
          String(b.gzipBytes),
          String(b.totalBytes),
          `${b.coldImportMs} ms (median of ${b.runs})`,
        ]),
      ),
      '',
    );
  }
  const cold = report.coldStart;
  if (cold) {
    out.push(
      'Cold start under the Lambda runtime mode (aws-lambda-rie, Node 24, aws-lambda-ric): import + first invoke of one new item, a new emulator each run; CPU of the runtime processes (10 ms ticks) and wall time',
      table(
        ['bundle', 'median CPU', 'CPU runs (ms)', 'median wall', 'wall runs (ms)'],
        [cold.normalize, cold.powertools, ...(cold.bareS3 ? [cold.bareS3] : [])].map((f) => [
          f.handler,
          `${f.medianCpuMs} ms`,
          f.cpuMs.join(', '),
          `${f.medianMs} ms`,
          f.firstInvokeMs.join(', '),
        ]),
      ),
      '',
    );
  }
}

/** Peak RSS and throughput of the worker process, with the sizing warnings and CPU profiles. */
function formatRss(report: BenchReport, out: string[]): void {
  const rssRuns = report.peakRss ?? [];
  if (rssRuns.length > 0) {
    const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
    out.push(
      `Peak RSS and throughput of the worker process (bundled runner + normalize handler, ${rssRuns[0]?.memoryMiB} MB function memory) over one large input per format (every 50th row bad)`,
      table(
        ['', ...rssRuns.map((r) => r.format)],
        [
          ['input', ...rssRuns.map((r) => gib(r.inputBytes))],
          ['peak RSS (VmHWM)', ...rssRuns.map((r) => `${r.peakRssMiB} MiB`)],
          ['highest sampled RSS', ...rssRuns.map((r) => `${r.sampledPeakRssMiB} MiB`)],
          ['peak RSS of the same process over an empty queue', ...rssRuns.map((r) => `${r.idleRssMiB} MiB`)],
          ['output', ...rssRuns.map((r) => gib(r.outputBytes))],
          ['quarantine side output', ...rssRuns.map((r) => `${(r.quarantineBytes / 1024 ** 2).toFixed(1)} MiB`)],
          ['MiB per CPU second', ...rssRuns.map((r) => String(r.mibPerCpuSecond))],
          [
            'time',
            ...rssRuns.map(
              (r) => `${r.seconds} s (${(r.inputBytes / 1024 ** 2 / Math.max(r.seconds, 0.001)).toFixed(1)} MiB/s)`,
            ),
          ],
        ],
      ),
      '',
    );
    // Each format against the figure the sizing plans it with (a CSV's row width is not declared,
    // so wide CSV rows are planned with the csv figure too).
    for (const run of rssRuns) {
      const planned = NORMALIZE_MIB_PER_CPU_SECOND_BY_FORMAT[run.format === 'ndjson' ? 'ndjson' : 'csv'];
      if (run.mibPerCpuSecond >= planned) continue;
      out.push(
        `WARNING sizing: src/sizing/sizeWorker.ts plans ${run.format} inputs with ${planned} MiB per CPU second, above the ${run.mibPerCpuSecond} measured: a maximal ${run.format} input would eat into the timeout's margin`,
        '',
      );
    }
    for (const r of rssRuns) {
      const profile = r.cpuProfile;
      if (!profile) continue;
      out.push(
        `CPU profile of the worker process over the ${r.format} input (node --cpu-prof, ${profile.file}): ${profile.busyMs} ms busy, ${profile.idleMs} ms idle; self time`,
        table(
          ['area', 'ms', '%'],
          profile.areas.map((a) => [a.area, String(a.selfMs), String(a.percent)]),
        ),
        table(
          ['function', 'where', 'ms', '%'],
          profile.top.map((f) => [f.name, f.where, String(f.selfMs), String(f.percent)]),
        ),
        '',
      );
    }
  }
}

/** The normalizer and CSV reader sections, then the targets. */
function formatRest(report: BenchReport, out: string[]): void {
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
  if (report.csvReaders) {
    const csv = report.csvReaders;
    out.push(
      'CSV readers alone, the same text (median MiB per CPU second)',
      table(
        ['reader', 'MiB per CPU second', 'valid rows kept after a bad one'],
        [
          [
            'rerun CsvRecordReader',
            String(csv.rerunMibPerCpuSecond),
            `${csv.validRowsKept.rerun} of ${csv.validRowsKept.expected}`,
          ],
          [
            'csv-parse 7 (stream)',
            String(csv.csvParseMibPerCpuSecond),
            `${csv.validRowsKept.csvParse} of ${csv.validRowsKept.expected}`,
          ],
        ],
      ),
      `rerun is ${csv.speedup}x csv-parse over ${(csv.inputBytes / 1024 ** 2).toFixed(1)} MiB (${csv.records} records)`,
      '',
    );
  }
  if (report.targets.length > 0) {
    out.push(
      'Targets',
      // One line each: the measured figures are long, a right-aligned column would pad every row to the longest.
      ...report.targets.map((t) => `${t.id.padEnd(24)} ${t.status.padEnd(12)} ${t.measured}`),
      ...report.targets.flatMap((t) =>
        t.status === TargetStatus.MISSED
          ? [`${t.id}: missed by ${t.missedBy ?? '?'}${t.why ? `. Why: ${t.why}` : ''}`]
          : [],
      ),
      '',
    );
  }
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

function ms(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${n} ms`;
}

/** The window grains section: the measured costs, then each grain's largest window at the stack's sizing. */
function formatWindowGrains(wg: WindowGrainsResult): string[] {
  const n = (x: number) => x.toLocaleString('en-US');
  const z = wg.sizing;
  return [
    `Window grains: the largest window each grain reaches at a window stage's sizing (${z.timeoutSeconds} s timeout, ` +
      `${z.marginSeconds} s margin, maxInputs ${n(z.maxInputs)}), inputs spread evenly. ` +
      `A model: an input costs ${wg.perInputMs} ms directly and ${wg.perInputPartsMs} ms from parts (measured on ` +
      `${n(wg.inputs)} inputs at the modelled latency), a listing page ${wg.listPageMs} ms (modelled; the emulator took ` +
      `${wg.emulatorListPageMs} ms).`,
    table(
      ['grain', 'parts', 'largest directly', 'largest from its parts'],
      wg.grains.map((g) => [
        g.grain,
        g.parts ? `${g.partsPerWindow} ${g.parts}` : 'none',
        n(g.largestDirect),
        g.parts ? n(g.largestWithParts) : '',
      ]),
    ),
    ...wg.millionDay.map(
      (d) =>
        `A day of 1,000,000 inputs from its hours at a ${d.sizing.timeoutSeconds} s timeout and maxInputs ${n(d.sizing.maxInputs)}: ` +
        (d.built
          ? `built in ${n(d.invocations)} invocations, one after another, each listing the day (${d.listingSeconds} s).`
          : `NOT built: ${d.why}.`),
    ),
  ];
}
