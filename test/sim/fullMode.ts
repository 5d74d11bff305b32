/**
 * How `npm run test:sim` (full mode) explores the configurations that need more than the default
 * CPU budget (FULL_MODE_CPU_SECONDS, test/sim/simMode.ts), by name. Every other configuration is
 * explored to the end within the default, and its test fails when it is not.
 *
 * Each figure was measured alone, to the end or to a CPU cap, with `npx tsx test/sim/measure.ts`
 * (process.cpuUsage of the exploring process; docs/EMULATORS.md, "The simulation tier", has every
 * configuration's size). An exhaustive one gets three times its measured CPU time, so that a slower
 * machine does not fail it; a bounded one (`bounded`: why, with its size) gets a budget the tier can
 * afford, and its test fails if it ever reaches the end within it (then it is marked exhaustive).
 */
export interface FullMode {
  /** CPU seconds in full mode (SimConfig.cpuBudget). */
  readonly cpuBudget: number;
  /** Too large to explore to the end in the tier's time: why, with its measured size (SimConfig.bounded). */
  readonly bounded?: string;
}

/** CPU seconds a bounded configuration explores in full mode. */
const BOUNDED_CPU_SECONDS = 15;

function bounded(reason: string): FullMode {
  return { cpuBudget: BOUNDED_CPU_SECONDS, bounded: reason };
}

/** By configuration name (configs.ts, windowConfigs.ts). */
export const FULL_MODE: Readonly<Record<string, FullMode>> = {
  // Exhaustive, above a third of the default: three times the CPU seconds measured alone on 2026-12-06.
  'recreate single-part+side, crashes 0': { cpuBudget: 75 }, // 24.6 s
  'recreate multipart, crashes 0': { cpuBudget: 70 }, // 22.1 s
  'delete single-part+side, crashes 1': { cpuBudget: 75 }, // 25.1 s
  'recreate single-part, crashes 1': { cpuBudget: 185 }, // 61.7 s
  'create then delete single-part+side, crashes 1': { cpuBudget: 115 }, // 37.4 s
  'overwrite single-part+side, crashes 1': { cpuBudget: 105 }, // 34.5 s
  'delete multipart+side, crashes 1': { cpuBudget: 100 }, // 33.3 s
  'revert single-part+side, crashes 1': { cpuBudget: 170 }, // 55.8 s
  'summary of a built day single-part+side, crashes 1': { cpuBudget: 125 }, // 41.1 s
  // With sleep sets (explore.ts): 44.9 s; without them it did not end within 60 s. So too the summary
  // after a create with no crash, which now ends in 11.8 s (the default budget).
  'overwrite multipart+side, crashes 0': { cpuBudget: 135 },
  // Bounded until 2026-12-07: they end since states forget where a crashed actor crashed and a crash
  // that leaves a state another crash left is not replayed (explore.ts). Three times the CPU seconds
  // measured to the end that day, beside the quick tier on the other core.
  'recreate single-part+side, crashes 1': { cpuBudget: 300 }, // 99.4 s, 59,737 states
  'overwrite multipart+side, crashes 1': { cpuBudget: 545 }, // 181.3 s, 51,813 states
  'recreate multipart, crashes 1': { cpuBudget: 620 }, // 206.4 s, 103,433 states
  // Bounded until 2026-12-08: measured to its end that day (it had not ended within 80 CPU s).
  'revert while building single-part+side, crashes 0': { cpuBudget: 270 }, // 88.8 s, 96,466 states
  // Bounded: too large for the tier's time.
  'recreate multipart+side, crashes 0': bounded(
    'ends, clean, after 1,755.9 CPU s with sleep sets (253,890 executions, 802,707 states), on 2026-12-07: the whole tier has about 2,400',
  ),
  'prune after delete single-part+side, crashes 0': bounded(
    'did not end within 600 CPU s on 2026-12-08 (195,214 executions, 341,755 states by then, clean); 80 CPU s with sleep sets reached 49,797 states',
  ),
  'window task from parts: two deliveries of a day racing, crashes 0': bounded(
    'did not end within 450 CPU s with 8 reads in flight (105,367 executions, 360,539 states by then, clean), on 2026-12-07',
  ),
  'prune after delete single-part+side, crashes 1': bounded(
    'did not end within 900 CPU s on 2026-12-07, with the crash reductions (331,042 executions, 296,905 states by then, clean); 80 CPU s before them reached 39,453 states',
  ),
};

/** The full-mode budget of the configuration named `name`, if it is not the default. */
export function fullModeOf(name: string): { cpuBudget?: number; exhaustive?: false; bounded?: string } {
  const mode = FULL_MODE[name];
  if (!mode) return {};
  return mode.bounded !== undefined
    ? { cpuBudget: mode.cpuBudget, exhaustive: false, bounded: mode.bounded }
    : { cpuBudget: mode.cpuBudget };
}
