/**
 * `npm run test:chaos`: the full fault-injection suite, with a printed table of figures.
 *
 *   tsx test/chaos/run.ts [--seed N] [--only NAME[,NAME...]] [--json] [--list] [--cpu-hogs N] [--report FILE]
 *
 * Starts its own emulator (moto with atomic conditional writes; AWS_ENDPOINT_URL overrides it),
 * then runs, each on fresh resources, compared with a clean run of the same inputs (the scenarios
 * drive both stages: normalize with the ledger and the webhook, and the summary stage fed by
 * backfills and the schedule's message):
 *   - kill-small-item / kill-multipart-item: SIGKILL of the runner before and after every request of
 *     one item's work (receive, HEAD, GET, PUTs or multipart parts, ledger claim, webhook POST, ledger
 *     completion, delete), each followed by a fresh runner process;
 *   - kill-summary-task: the same for one partition task of the summary stage (lineage listings,
 *     HEAD, input GETs, staging PUT and read-back, publish, cleanup, marker, delete);
 *   - http-faults, four-runners-dup-reorder-mutate, random-kills, everything-at-once (see
 *     test/chaos/support/scenarios.ts).
 * `--cpu-hogs N` keeps N other processes spinning on the CPU for the whole run, so the suite runs on a
 * loaded machine (issue 12: healthy messages must not reach a DLQ under load).
 * `--report FILE` also writes one verdict per scenario in the shape of Vitest's JSON report, which
 * `.ci/run`'s closing line counts with the vitest tiers.
 * Exits 1 when anything was lost or duplicated, or a DLQ held anything but the poison.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { startMotoServer } from '../../local/emulator/motoServer.js';
import { createPipelineClients } from '../../src/ledger/pipelineClients.js';
import { type ScenarioVerdict, scenarioVerdict, vitestShapedReport } from './support/chaosReport.js';
import { type ChaosRow, formatChaosTable, scenarioRow } from './support/chaosTable.js';
import { largeCsv } from './support/inputs.js';
import {
  discoverItemRequests,
  type KillPointResult,
  killPointsOf,
  killPointsRow,
  runItemBoundaryKills,
} from './support/itemBoundaryKills.js';
import { type ChaosEnvironment, runChaosScenario, type ScenarioResult } from './support/runChaosScenario.js';
import { chaosRunner, chaosTopology, fullScenarios } from './support/scenarios.js';
import { discoverSummaryTaskRequests, runSummaryTaskKills } from './support/summaryTaskKills.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '0' },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    'cpu-hogs': { type: 'string', default: '0' },
    report: { type: 'string' },
  },
});
const seed = Number(values.seed);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer (got ${values.seed})`);
const cpuHogs = Number(values['cpu-hogs']);
if (!Number.isInteger(cpuHogs) || cpuHogs < 0)
  throw new Error(`--cpu-hogs must be a whole number (got ${values['cpu-hogs']})`);
const scenarios = fullScenarios(seed);
const boundaryItems = [
  {
    name: 'kill-small-item',
    item: {
      key: 'incoming/kill me/orders+returns.csv',
      body: 'id,customer,amount\n1,Ada,10.50\n2,broken\n3,Grace,7.25\n',
    },
  },
  // 6 MB of CSV normalizes to more than the 8 MiB part size: a 2-part multipart output.
  { name: 'kill-multipart-item', item: { key: 'incoming/kill me/large.csv', body: largeCsv(6_000_000) } },
];
const summaryTask = {
  name: 'kill-summary-task',
  day: '2026-01-05',
  inputs: [
    { key: 'incoming/dt=2026-01-05/orders.csv', body: 'id,customer,amount\n1,Ada,10.50\n2,broken\n3,Grace,7.25\n' },
    { key: 'incoming/dt=2026-01-05/events.ndjson', body: '{"id":1,"kind":"click"}\n{"id":2,"kind":"view"}\n' },
  ],
};
const names = [...boundaryItems.map((b) => b.name), summaryTask.name, ...scenarios.map((s) => s.name)];
if (values.list) {
  process.stdout.write(`${names.join('\n')}\n`);
  process.exit(0);
}
const only = values.only ? new Set(values.only.split(',')) : undefined;
for (const name of only ?? []) if (!names.includes(name)) throw new Error(`unknown scenario ${name} (see --list)`);
const selected = (name: string) => only === undefined || only.has(name);

const log = (text: string) => process.stderr.write(`${text}\n`);
const pointPassed = (r: KillPointResult) => r.killed && r.lost === 0 && r.duplicated === 0 && r.problems.length === 0;
/** One line per kill point: ok, or FAIL with its problems. */
const logKillPoints = (results: readonly KillPointResult[]) => {
  for (const r of results) {
    const ok = pointPassed(r);
    log(
      `  ${ok ? 'ok  ' : 'FAIL'} ${r.label} (${(r.durationMs / 1000).toFixed(1)} s)${ok ? '' : `: ${r.problems.join('; ')}`}`,
    );
  }
};
/** The problems of a kill-point row: each failed point with its own. */
const killPointProblems = (results: readonly KillPointResult[]) =>
  results.filter((r) => !pointPassed(r)).map((r) => `${r.label}: ${r.problems.join('; ') || 'failed'}`);
// Each hog is a child that spins until it is killed (at the end, or when this process dies: the hog
// polls its parent's pid and exits when the parent is gone, so a killed suite leaves none behind).
const hogs = Array.from({ length: cpuHogs }, () =>
  spawn(
    process.execPath,
    ['-e', `const p=${process.pid};let n=0;for(;;){if(++n%5e7===0){try{process.kill(p,0)}catch{process.exit(0)}}}`],
    {
      stdio: 'ignore',
    },
  ),
);
if (cpuHogs > 0) log(`cpu hogs: ${cpuHogs} spinning process(es) on ${availableParallelism()} CPU(s)`);
const moto = process.env.AWS_ENDPOINT_URL ? undefined : await startMotoServer();
const endpoint = moto?.endpoint ?? (process.env.AWS_ENDPOINT_URL as string);
process.env.AWS_ACCESS_KEY_ID ||= 'test';
process.env.AWS_SECRET_ACCESS_KEY ||= 'test';
const env: ChaosEnvironment = {
  endpoint,
  clients: createPipelineClients({ endpoint, region: 'us-east-1' }),
  topology: chaosTopology,
  runner: chaosRunner,
};

const startTime = Date.now();
const rows: ChaosRow[] = [];
const verdicts: ScenarioVerdict[] = [];
const details: { boundaries: Record<string, KillPointResult[]>; scenarios: ScenarioResult[] } = {
  boundaries: {},
  scenarios: [],
};
try {
  for (const { name, item } of boundaryItems) {
    if (!selected(name)) continue;
    const started = Date.now();
    log(`${name}: discovering the item's requests...`);
    const discovery = await discoverItemRequests(env, item);
    const points = killPointsOf(discovery.sequence);
    log(`${name}: ${discovery.sequence.map((r) => r.operation).join(' > ')}; ${points.length} kill points`);
    const results = await runItemBoundaryKills(env, item, discovery, points, 3);
    logKillPoints(results);
    details.boundaries[name] = results;
    const row = killPointsRow(name, results, Date.now() - started);
    rows.push(row);
    verdicts.push(scenarioVerdict(row, killPointProblems(results)));
  }
  if (selected(summaryTask.name)) {
    const { name, inputs, day } = summaryTask;
    const started = Date.now();
    log(`${name}: discovering the task's requests...`);
    const discovery = await discoverSummaryTaskRequests(env, inputs, day);
    const points = killPointsOf(discovery.sequence);
    log(`${name}: ${discovery.sequence.map((r) => r.operation).join(' > ')}; ${points.length} kill points`);
    const results = await runSummaryTaskKills(env, inputs, day, discovery, points, 3);
    logKillPoints(results);
    details.boundaries[name] = results;
    const failed = results.filter((r) => !r.killed || r.problems.length > 0).length;
    const row = {
      ...killPointsRow(name, results, Date.now() - started),
      itemsVerified: 0,
      summariesVerified: results.length,
      notes: `${results.length} kill points of one partition task, ${failed} failed`,
    };
    rows.push(row);
    verdicts.push(scenarioVerdict(row, killPointProblems(results)));
  }
  for (const scenario of scenarios) {
    if (!selected(scenario.name)) continue;
    log(`${scenario.name} (seed ${scenario.seed})...`);
    const result = await runChaosScenario(env, scenario);
    for (const problem of result.problems) log(`  ${problem}`);
    details.scenarios.push(result);
    const row = scenarioRow(result);
    rows.push(row);
    verdicts.push(scenarioVerdict(row, result.problems));
  }
} finally {
  for (const hog of hogs) hog.kill('SIGKILL');
  await moto?.stop();
}

const failed = verdicts.some((v) => !v.passed);
if (values.report) {
  mkdirSync(dirname(values.report), { recursive: true });
  writeFileSync(
    values.report,
    `${JSON.stringify(vitestShapedReport(verdicts, { startTime, seed, cpuHogs }), null, 2)}\n`,
  );
}
if (values.json) {
  process.stdout.write(`${JSON.stringify({ seed, cpuHogs, rows, details, failed }, null, 2)}\n`);
} else {
  process.stdout.write(
    `\nrerun chaos suite (seed ${seed}, ${cpuHogs} cpu hog(s); reproduce: npm run test:chaos -- --seed ${seed}${cpuHogs ? ` --cpu-hogs ${cpuHogs}` : ''})\n\n`,
  );
  process.stdout.write(formatChaosTable(rows));
  process.stdout.write(
    `\n${failed ? 'FAILED: something was lost, duplicated or dead-lettered wrongly.' : 'Nothing lost, nothing duplicated, DLQ = poison only.'}\n`,
  );
}
process.exit(failed ? 1 : 0);
