import type { ScenarioResult } from './runChaosScenario.js';

/** One row of the chaos table (a scenario, or all kill points of one item). */
export interface ChaosRow {
  readonly scenario: string;
  readonly seed: number | string;
  readonly faultsInjected: number;
  readonly kills: number;
  readonly itemsVerified: number;
  /** Daily summaries verified (the summary stage); undefined for rows without one. */
  readonly summariesVerified?: number;
  readonly lost: number;
  readonly duplicated: number;
  /** True when the DLQ held exactly the poison messages (or proven crash-storm victims), each with its failure record. */
  readonly dlqOnlyPoison: boolean;
  readonly durationMs: number;
  /** Short notes: what the faults turned into, repeats the sink absorbed, restarts. */
  readonly notes?: string;
}

/**
 * Formats the chaos figures as a plain-text table with a totals row.
 *
 * @example
 * process.stdout.write(formatChaosTable(rows));
 */
export function formatChaosTable(rows: readonly ChaosRow[]): string {
  const header = [
    'scenario',
    'seed',
    'faults injected',
    'kills',
    'items verified',
    'summaries verified',
    'lost',
    'duplicated',
    'DLQ = poison',
    'time',
  ];
  const line = (r: ChaosRow) => [
    r.scenario,
    String(r.seed),
    String(r.faultsInjected),
    String(r.kills),
    String(r.itemsVerified),
    r.summariesVerified === undefined ? '-' : String(r.summariesVerified),
    String(r.lost),
    String(r.duplicated),
    r.dlqOnlyPoison ? 'yes' : 'NO',
    `${(r.durationMs / 1000).toFixed(1)} s`,
  ];
  const sum = (f: (r: ChaosRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const total = [
    `total (${rows.length} scenarios)`,
    '',
    String(sum((r) => r.faultsInjected)),
    String(sum((r) => r.kills)),
    String(sum((r) => r.itemsVerified)),
    String(sum((r) => r.summariesVerified ?? 0)),
    String(sum((r) => r.lost)),
    String(sum((r) => r.duplicated)),
    rows.every((r) => r.dlqOnlyPoison) ? 'yes' : 'NO',
    `${(sum((r) => r.durationMs) / 1000).toFixed(1)} s`,
  ];
  const table = [header, ...rows.map(line), total];
  const widths = header.map((_, i) => Math.max(...table.map((cells) => (cells[i] ?? '').length)));
  const render = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const out = [render(header), rule, ...rows.map((r) => render(line(r))), rule, render(total)];
  const notes = rows.filter((r) => r.notes).map((r) => `  ${r.scenario}: ${r.notes}`);
  return `${out.join('\n')}\n${notes.length > 0 ? `\n${notes.join('\n')}\n` : ''}`;
}

/** The row of a scenario result. */
export function scenarioRow(result: ScenarioResult): ChaosRow {
  const t = result.summaryTasks;
  const s = result.summaries;
  const kinds = Object.entries(result.faultsByKind)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  return {
    scenario: result.name,
    seed: result.seed,
    faultsInjected: result.faultsInjected,
    kills: result.kills,
    itemsVerified: result.itemsVerified,
    summariesVerified: result.summaries.summariesVerified,
    lost: result.lost,
    duplicated: result.duplicated,
    // Every dead letter must also carry its reason (a failure record): issue 12, item 2.
    dlqOnlyPoison: result.dlqNonPoison === 0 && result.dlqMissingPoison === 0 && result.dlqWithoutFailureRecord === 0,
    durationMs: result.durationMs,
    notes: [
      kinds ? `faults: ${kinds}` : 'no HTTP faults',
      `${result.requests} requests`,
      `${result.runnerStarts} runner process(es) started`,
      `${result.recordsFailed} record attempt(s) failed then retried`,
      `${result.invocationsTimedOut} invocation timeout(s)`,
      `${result.sinkRepeats} webhook repeat(s) absorbed by Idempotency-Key`,
      `${result.keptForDeleted} output(s) of deleted inputs kept (written before the delete)`,
      `${result.openUploads} abandoned multipart upload(s)`,
      `${result.failureRecords} failure record(s) for dead-lettered messages` +
        (result.dlqWithoutFailureRecord > 0 ? ` (${result.dlqWithoutFailureRecord} DLQ message(s) without one)` : ''),
      ...(result.crashStorm && result.crashStorm.length > 0
        ? [`healthy dead letters proven a crash storm: ${result.crashStorm.join(', ')}`]
        : []),
      `summary stage: ${t.midRun} task(s) mid-run + ${t.duplicates} duplicate(s) + ${t.scheduled} scheduled, ` +
        `${t.catchUp} stale day(s) re-enqueued by the catch-up backfill, ${result.killsByStage.summarize} kill(s); ` +
        `${s.summariesEqualToClean} summaries equal to the clean run's, ${s.summariesWithKeptDeleted} with outputs ` +
        `of deleted inputs kept; ${s.stagingLeftovers} staging copy(ies) left by interrupted runs (invisible; the lifecycle rule expires them)`,
    ].join('; '),
  };
}
