/**
 * Replays one schedule of the simulation tier and prints its trace, as a failure prints it:
 *
 *   npx tsx test/sim/replay.ts '<configuration name>|<pick>,<pick>,...'
 *
 * (the line a failing test prints after `replay:`). The picks are followed in order, then the
 * first request at every later point; the configurations are those of test/sim/configs.ts.
 */
import { boundedConfigs } from './configs.js';
import { execute, formatFailure, replayChooser } from './explore.js';

const line = process.argv[2] ?? process.env.SIM_REPLAY;
if (!line?.includes('|')) {
  console.error("usage: npx tsx test/sim/replay.ts '<configuration name>|<pick>,<pick>,...'");
  process.exit(2);
}
const [name, picks = ''] = line.split('|');
const config = [...boundedConfigs(0), ...boundedConfigs(1)].find((c) => c.name === name);
if (!config) {
  console.error(`no configuration named "${name}" in test/sim/configs.ts`);
  process.exit(2);
}
const run = await execute(config, replayChooser(picks === '' ? [] : picks.split(',')));
console.log(formatFailure(config, run, run.violations.length > 0 ? 'replayed, fails' : 'replayed, passes'));
process.exit(run.violations.length > 0 ? 1 : 0);
