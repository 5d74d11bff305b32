/**
 * Judges a saved `npm run bench -- --json` report again with the targets as they stand: the figures
 * are the run's own, only the judgement is recomputed (a target added or changed after the run is
 * judged on the figures the run measured).
 *
 *   npx tsx bench/judge.ts report.json [--json]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type BenchReport, formatBenchReport } from './report.js';
import { checkTargets } from './targets.js';

const { values, positionals } = parseArgs({
  options: { json: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const [file] = positionals;
if (!file) {
  process.stderr.write('usage: npx tsx bench/judge.ts report.json [--json]\n');
  process.exit(2);
}
const saved = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
const report: BenchReport = { ...saved, targets: checkTargets(saved) };
process.stdout.write(values.json ? `${JSON.stringify(report.targets, null, 2)}\n` : formatBenchReport(report));
