/**
 * `npm run bench`: rerun side by side with a Powertools baseline, and the project's other figures.
 *
 *   tsx bench/run.ts [--json] [--only side,first-run,planning,reprocess,sharding,windows,bundles,cold-start,rss,normalizer,csv] [--items N] [--repeats N]
 *                    [--planning-items N] [--reprocess-items N] [--sharding-keys N] [--window-inputs N] [--rss-bytes N] [--normalizer-bytes N]
 *                    [--cold-start-runs N] [--rss-formats csv,csv-wide,ndjson] [--cpu-prof DIR]
 *
 * Starts its own emulator (moto with atomic conditional writes, as the tests and `rerun dev` use;
 * AWS_ENDPOINT_URL overrides it). Prints a table (or, with --json, one JSON document on stdout) and
 * the targets with whether each was met; progress goes to stderr. Exit code 0 unless a
 * section failed to run (a missed target is reported, not an error); a failed section is reported
 * and the others still run. `--cpu-prof DIR`: the rss section also runs the worker once more per format
 * under `node --cpu-prof` (profiles written to DIR/csv, DIR/csv-wide and DIR/ndjson) and reports where its CPU time goes.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startMotoServer } from '../local/emulator/motoServer.js';
import { createPipelineClients } from '../src/ledger/pipelineClients.js';
import { AWS_LIST_PRICES_USD } from './awsCost.js';
import { measureBackfillPlanning } from './backfillPlanning.js';
import { bundleEntry, measureBundle, stackWorkerBundles } from './bundleSize.js';
import {
  BenchSectionNotRunnableError,
  COLD_START_MIN_RUNS,
  ensureLambdaRuntimeTools,
  measureColdStart,
} from './coldStart.js';
import { compareCsvReaders } from './csvReaders.js';
import { measureFirstRunMix } from './firstRunMix.js';
import { measureNormalizerThroughput } from './normalizerThroughput.js';
import { measurePeakRss } from './peakRss.js';
import { type BenchReport, formatBenchReport } from './report.js';
import { measureReprocessPlanning } from './reprocessPlanning.js';
import { measureShardedPlanning } from './shardedPlanning.js';
import { runSideBySide } from './sideBySide.js';
import { checkTargets } from './targets.js';
import { measureWindowGrains } from './windowGrains.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const SECTIONS = [
  'side',
  'first-run',
  'planning',
  'reprocess',
  'sharding',
  'windows',
  'bundles',
  'cold-start',
  'rss',
  'normalizer',
  'csv',
] as const;
const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    only: { type: 'string' },
    items: { type: 'string', default: '200' },
    repeats: { type: 'string', default: '3' },
    'planning-items': { type: 'string', default: '10000' },
    // 10,000 inputs: a few minutes. --reprocess-items 100000 is the documented size (about 40 minutes).
    'reprocess-items': { type: 'string', default: '10000' },
    // 100,000 keys: about 11 s in all. --sharding-keys 1000000 is the size (about 70 s).
    'sharding-keys': { type: 'string', default: '100000' },
    // 600 inputs of one day: about a minute at the modelled latency.
    'window-inputs': { type: 'string', default: '600' },
    'rss-bytes': { type: 'string', default: String(1024 ** 3) },
    'normalizer-bytes': { type: 'string', default: String(64 * 1024 ** 2) },
    'cold-start-runs': { type: 'string', default: String(COLD_START_MIN_RUNS) },
    'rss-formats': { type: 'string', default: 'csv,csv-wide,ndjson' },
    'cpu-prof': { type: 'string' },
  },
});
const only = new Set(values.only ? values.only.split(',') : SECTIONS);
for (const section of only) {
  if (!(SECTIONS as readonly string[]).includes(section)) {
    throw new Error(`unknown section ${section} (sections: ${SECTIONS.join(', ')})`);
  }
}
const positive = (name: string, value: string | undefined) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer (got ${value})`);
  return n;
};
const items = positive('items', values.items);
const repeats = positive('repeats', values.repeats);
const planningItems = positive('planning-items', values['planning-items']);
const reprocessItems = positive('reprocess-items', values['reprocess-items']);
const shardingKeys = positive('sharding-keys', values['sharding-keys']);
const windowInputs = positive('window-inputs', values['window-inputs']);
const rssBytes = positive('rss-bytes', values['rss-bytes']);
const normalizerBytes = positive('normalizer-bytes', values['normalizer-bytes']);
const coldStartRuns = positive('cold-start-runs', values['cold-start-runs']);
const RSS_FORMATS = ['csv', 'csv-wide', 'ndjson'] as const;
const rssFormats = (values['rss-formats'] ?? '').split(',').map((format) => {
  const known = RSS_FORMATS.find((f) => f === format);
  if (!known) throw new Error(`--rss-formats: unknown format ${format} (formats: ${RSS_FORMATS.join(', ')})`);
  return known;
});

const started = Date.now();
const log = (line: string) => process.stderr.write(`[${Math.round((Date.now() - started) / 1000)} s] ${line}\n`);
// The normalizer, csv and sharding sections need no emulator.
const needsEmulator = [...only].some((name) => name !== 'normalizer' && name !== 'csv' && name !== 'sharding');
const moto = process.env.AWS_ENDPOINT_URL || !needsEmulator ? undefined : await startMotoServer();
const endpoint = moto?.endpoint ?? process.env.AWS_ENDPOINT_URL ?? 'http://127.0.0.1:1';
process.env.AWS_ACCESS_KEY_ID ||= 'test';
process.env.AWS_SECRET_ACCESS_KEY ||= 'test';
const clients = createPipelineClients({ endpoint, region: 'us-east-1' });

const sections: {
  -readonly [K in
    | 'sideBySide'
    | 'firstRunMix'
    | 'backfillPlanning'
    | 'reprocessPlanning'
    | 'shardedPlanning'
    | 'windowGrains'
    | 'bundles'
    | 'coldStart'
    | 'peakRss'
    | 'normalizer'
    | 'csvReaders']?: BenchReport[K];
} = {};
// Each section runs on its own: one that fails is reported and the others still run.
const failures: { section: string; error: string }[] = [];
// Sections this machine cannot run (a tool they need cannot be installed): not measured, with the reason.
const notRun: { section: string; reason: string }[] = [];
// Seconds each section took, so the default run's time can be kept in check section by section.
const sectionSeconds: Record<string, number> = {};
const section = async (name: (typeof SECTIONS)[number], run: () => Promise<void>) => {
  if (!only.has(name)) return;
  const sectionStarted = Date.now();
  try {
    await run();
    sectionSeconds[name] = Math.round((Date.now() - sectionStarted) / 1000);
  } catch (error) {
    if (error instanceof BenchSectionNotRunnableError) {
      log(`${name}: NOT MEASURED: ${error.message}`);
      notRun.push({ section: name, reason: error.message });
      return;
    }
    log(`${name}: FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    failures.push({ section: name, error: error instanceof Error ? error.message : String(error) });
  }
};
try {
  await section('side', async () => {
    sections.sideBySide = await runSideBySide({ endpoint, clients, items, repeats, log });
  });
  await section('first-run', async () => {
    sections.firstRunMix = await measureFirstRunMix({ endpoint, items, log });
  });
  await section('planning', async () => {
    sections.backfillPlanning = await measureBackfillPlanning({ clients, items: planningItems, days: 30, log });
  });
  await section('reprocess', async () => {
    sections.reprocessPlanning = await measureReprocessPlanning({ clients, endpoint, items: reprocessItems, log });
  });
  await section('sharding', async () => {
    sections.shardedPlanning = await measureShardedPlanning({ keys: shardingKeys, shards: 16, log });
  });
  await section('windows', async () => {
    sections.windowGrains = await measureWindowGrains({ endpoint, inputs: windowInputs, log });
  });
  await section('bundles', async () => {
    log('bundles: the stack worker assets (cdk synth, SDK inside) and cold imports...');
    const bundles = Object.entries(await stackWorkerBundles()).map(([worker, file]) => measureBundle(worker, file, 5));
    bundles.push(
      measureBundle('powertools-baseline', await bundleEntry('bench/baseline/handler.ts', 'powertools-baseline'), 5),
    );
    sections.bundles = bundles;
  });
  await section('cold-start', async () => {
    log(
      'cold-start: the normalize bundle (cdk synth asset) and the Powertools baseline under aws-lambda-rie, Node 24...',
    );
    const bundles = {
      normalize: (await stackWorkerBundles()).normalize,
      powertools: await bundleEntry('bench/baseline/handler.ts', 'powertools-baseline'),
      bareS3: await bundleEntry('bench/baseline/bareS3Handler.ts', 'bare-s3'),
    };
    const tools = ensureLambdaRuntimeTools(log);
    sections.coldStart = await measureColdStart({ endpoint, clients, bundles, runs: coldStartRuns, log, tools });
  });
  await section('rss', async () => {
    // Each target is judged on the hardest of these (report.ts).
    const results = [];
    for (const format of rssFormats) {
      results.push(
        await measurePeakRss({
          endpoint,
          clients,
          format,
          bytes: rssBytes,
          log,
          ...(values['cpu-prof'] ? { cpuProfileDir: resolve(values['cpu-prof'], format) } : {}),
        }),
      );
    }
    sections.peakRss = results;
  });
  await section('normalizer', async () => {
    sections.normalizer = await measureNormalizerThroughput({
      bytes: normalizerBytes,
      repeats: Math.max(repeats, 5),
      log,
    });
  });
  await section('csv', async () => {
    sections.csvReaders = await compareCsvReaders({ bytes: normalizerBytes, repeats: Math.max(repeats, 5), log });
  });
} finally {
  await moto?.stop();
}

const report: BenchReport = {
  environment: {
    emulator: moto
      ? 'moto 5 (atomic conditional writes), started by the bench'
      : needsEmulator
        ? `external endpoint ${endpoint}`
        : 'none (in-process sections only)',
    node: process.versions.node,
    cpus: availableParallelism(),
    startedAt: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    sectionSeconds,
  },
  ...sections,
  targets: checkTargets(sections),
  prices: AWS_LIST_PRICES_USD,
  ...(failures.length > 0 ? { failures } : {}),
  ...(notRun.length > 0 ? { notRun } : {}),
};
process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatBenchReport(report));
process.exitCode = failures.length > 0 ? 1 : 0;
