import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { boundedConfigs } from './configs.js';
import { exploreExhaustively } from './explore.js';
import { windowTaskConfigs } from './windowConfigs.js';

/**
 * Measures configurations to the end (or to a CPU cap), one JSON line each: the sizes the CPU
 * budgets and the docs' table are made from.
 *
 *   npx tsx test/sim/measure.ts --crashes 1 --cpu 180 --out sizes.jsonl [--shard 1/2] [--reverse] [name substring]
 *
 * A configuration already in the `--out` file is skipped (a stopped measurement resumes).
 */
const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const crashes = Number(option('--crashes') ?? '0');
const cap = Number(option('--cpu') ?? 'Infinity');
const out = option('--out');
const reverse = args.includes('--reverse');
if (reverse) args.splice(args.indexOf('--reverse'), 1);
const [shard, shards] = (option('--shard') ?? '1/1').split('/').map(Number) as [number, number];
const filter = args[0] ?? '';
const done = new Set(
  out && existsSync(out)
    ? readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { config: string }).config)
    : [],
);
const all = [...boundedConfigs(crashes), ...windowTaskConfigs(crashes)]
  .filter((c) => c.name.includes(filter))
  .filter((_, i) => i % shards === shard - 1)
  .filter((c) => !done.has(c.name));
if (reverse) all.reverse();
for (const config of all) {
  // As `npm run test:sim` explores it: one event-loop turn per settle (Scheduler.settle).
  const e = await exploreExhaustively(config, { cpuSeconds: cap }, { verifySettle: false });
  const line = JSON.stringify({
    config: e.config,
    schedules: e.schedules,
    merged: e.merged,
    executions: e.schedules + e.merged,
    states: e.states,
    exhaustive: e.exhaustive,
    failed: e.failure !== undefined,
    cpuSeconds: Number(e.cpuSeconds.toFixed(1)),
    wallSeconds: Number((e.ms / 1000).toFixed(1)),
  });
  console.log(line);
  if (out) appendFileSync(out, `${line}\n`);
}
