import type { ChaosRow } from './chaosTable.js';

/** One scenario's verdict: passed, or failed with every problem its oracle found. */
export interface ScenarioVerdict {
  readonly scenario: string;
  readonly passed: boolean;
  readonly durationMs: number;
  /** Why it failed (empty when it passed). */
  readonly problems: readonly string[];
}

/**
 * The verdict of a scenario's row: it passes only when nothing was lost or duplicated, the DLQ held
 * exactly the poison (each with its failure record) and the oracle reported no problem at all. A
 * kill-point row passes only when every point's runner was killed at its boundary, too (`problems`
 * then lists each failed point).
 *
 * @example
 * scenarioVerdict(row, result.problems); // { scenario: 'http-faults', passed: true, durationMs: 61234, problems: [] }
 */
export function scenarioVerdict(row: ChaosRow, problems: readonly string[]): ScenarioVerdict {
  const counted = row.lost > 0 || row.duplicated > 0 || !row.dlqOnlyPoison;
  const all =
    counted && problems.length === 0 ? [`${row.lost} lost, ${row.duplicated} duplicated, DLQ = poison: no`] : problems;
  return { scenario: row.scenario, passed: all.length === 0, durationMs: row.durationMs, problems: all };
}

/**
 * The subset of Vitest's JSON report (`--reporter=json`) that `.ci/run`'s closing line reads, with
 * one test per scenario verdict, so the chaos suite counts in the same "N passed, N failed" line as
 * the vitest tiers. Nothing is ever pending or todo: every selected scenario runs to a verdict.
 *
 * @example
 * writeFileSync('.ci-report/chaos.json', JSON.stringify(vitestShapedReport(verdicts, { startTime, seed: 0, cpuHogs: 1 })));
 */
export function vitestShapedReport(
  verdicts: readonly ScenarioVerdict[],
  run: { readonly startTime: number; readonly seed: number; readonly cpuHogs: number },
) {
  const failed = verdicts.filter((v) => !v.passed).length;
  const title = `chaos suite (seed ${run.seed}, ${run.cpuHogs} cpu hog(s))`;
  return {
    numTotalTestSuites: 1,
    numPassedTestSuites: failed === 0 ? 1 : 0,
    numFailedTestSuites: failed === 0 ? 0 : 1,
    numPendingTestSuites: 0,
    numTotalTests: verdicts.length,
    numPassedTests: verdicts.length - failed,
    numFailedTests: failed,
    numPendingTests: 0,
    numTodoTests: 0,
    startTime: run.startTime,
    success: failed === 0,
    testResults: [
      {
        name: 'test/chaos/run.ts',
        status: failed === 0 ? 'passed' : 'failed',
        startTime: run.startTime,
        endTime: run.startTime + verdicts.reduce((n, v) => n + v.durationMs, 0),
        message: '',
        assertionResults: verdicts.map((v) => ({
          ancestorTitles: [title],
          fullName: `${title} ${v.scenario}`,
          title: v.scenario,
          status: v.passed ? 'passed' : 'failed',
          duration: v.durationMs,
          failureMessages: [...v.problems],
        })),
      },
    ],
  };
}
