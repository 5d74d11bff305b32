import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Exploration, ExplorationBudget } from './explore.js';

/**
 * How much the simulation tier explores. `npm run test:sim` sets RERUN_SIM=full: every bounded
 * configuration explored exhaustively, the random exploration and the mutation suite at full size.
 * Inside `npm test` (RERUN_SIM unset) the same configurations run with a bounded budget of
 * executions each, so the whole suite stays within its time (a schedule found failing is a failure
 * in either mode).
 */
export const SIM_FULL = process.env.RERUN_SIM === 'full';

/**
 * CPU seconds a configuration may take in full mode unless it sets its own (`SimConfig.cpuBudget`):
 * a budget in CPU time (process.cpuUsage of the exploring process), not in executions, so that it
 * means the same on a loaded machine, and a configuration meant to be exhaustive (the default)
 * fails its test when it does not reach the end within it. Every configuration's size was measured
 * to the end (docs/EMULATORS.md, "The simulation tier"); the default leaves several times the room
 * of the largest one that uses it.
 */
export const FULL_MODE_CPU_SECONDS = 60;

/**
 * What one configuration's exploration may spend: `bounded` executions inside npm test; in full
 * mode its own CPU budget or FULL_MODE_CPU_SECONDS.
 */
export function budgetOf(bounded: number, cpuBudget = FULL_MODE_CPU_SECONDS): ExplorationBudget {
  return SIM_FULL ? { cpuSeconds: cpuBudget } : { executions: bounded };
}

/** A test's time limit: the exhaustive runs of the largest configurations take minutes on 2 shared cores. */
export const SIM_TIMEOUT_MS = SIM_FULL ? 60 * 60_000 : 10 * 60_000;

/**
 * Writes an exploration's figures to `.ci-report/sim/<configuration>.json` (schedules, states,
 * CPU seconds, wall time, whether it reached the end and whether it was meant to), which the closing figures and the simulation table in docs/EMULATORS.md are read from.
 * Written in full mode only; one file per configuration, so parallel test files never share one.
 */
export function recordExploration(exploration: Exploration, extra: Record<string, unknown> = {}): void {
  if (!SIM_FULL) return;
  const slug = `${String(extra.mode ?? 'run')}-${exploration.config}`.replace(/[^A-Za-z0-9+]+/g, '-');
  const file = join(process.cwd(), '.ci-report', 'sim', `${slug}.json`);
  mkdirSync(dirname(file), { recursive: true });
  const { failure, ...figures } = exploration;
  writeFileSync(file, `${JSON.stringify({ ...figures, failed: failure !== undefined, ...extra })}\n`);
}

/** One line of figures for the test's output. */
export function describeExploration(e: Exploration): string {
  const rate = e.ms > 0 ? ((e.schedules + e.merged) / (e.ms / 1000)).toFixed(0) : '-';
  return `${e.config}: ${e.schedules} schedules, ${e.states} states, ${e.merged} merged, ${e.exhaustive ? 'exhaustive' : 'budget reached'}, ${e.cpuSeconds.toFixed(1)} CPU s, ${(e.ms / 1000).toFixed(1)} s wall (${rate} executions/s)`;
}
