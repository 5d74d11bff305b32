import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Exploration } from './explore.js';

/**
 * How much the simulation tier explores. `npm run test:sim` sets RERUN_SIM=full: every bounded
 * configuration explored exhaustively, the random exploration and the mutation suite at full size.
 * Inside `npm test` (RERUN_SIM unset) the same configurations run with a bounded budget of
 * executions each, so the whole suite stays within its time (a schedule found failing is a failure
 * in either mode).
 */
export const SIM_FULL = process.env.RERUN_SIM === 'full';

/**
 * Executions per configuration in full mode, unless the configuration sets its own: since S3's first
 * deliveries create at once and removals look again (2026-12-04), the largest configurations grew
 * from thousands of schedules to tens of thousands (recreate single-part+side: 248 to 2,576; revert
 * while building: 22,625 before), and exploring each to the end no longer fits the CI run's time.
 * A configuration that ends below it was explored to the end (`exhaustive` in its figures).
 */
export const FULL_MODE_BUDGET = 5_000;

/** Executions per configuration: `bounded` inside npm test; in full mode its own budget or FULL_MODE_BUDGET. */
export function budgetOf(bounded: number, full = FULL_MODE_BUDGET): number {
  return SIM_FULL ? full : bounded;
}

/** A test's time limit: the exhaustive runs of the largest configurations take minutes on 2 shared cores. */
export const SIM_TIMEOUT_MS = SIM_FULL ? 60 * 60_000 : 10 * 60_000;

/**
 * Writes an exploration's figures to `.ci-report/sim/<configuration>.json` (schedules, states,
 * time), which the closing figures and the simulation table in docs/EMULATORS.md are read from.
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
  return `${e.config}: ${e.schedules} schedules, ${e.states} states, ${e.merged} merged, ${e.exhaustive ? 'exhaustive' : 'budget reached'}, ${(e.ms / 1000).toFixed(1)} s (${rate} executions/s)`;
}
