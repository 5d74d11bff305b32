import { describe, expect, it } from 'vitest';
import { scenarioVerdict, vitestShapedReport } from './support/chaosReport.js';
import type { ChaosRow } from './support/chaosTable.js';

const row = (overrides: Partial<ChaosRow> = {}): ChaosRow => ({
  scenario: 'http-faults',
  seed: 1,
  faultsInjected: 12,
  kills: 0,
  itemsVerified: 40,
  lost: 0,
  duplicated: 0,
  dlqOnlyPoison: true,
  durationMs: 61_000,
  ...overrides,
});

describe('scenarioVerdict: a scenario passes only with nothing lost, duplicated or wrongly dead-lettered', () => {
  it('passes a clean row with no problem', () => {
    expect(scenarioVerdict(row(), [])).toEqual({
      scenario: 'http-faults',
      passed: true,
      durationMs: 61_000,
      problems: [],
    });
  });

  it('fails a row with anything lost or duplicated, or a DLQ that held more than the poison, with its problems', () => {
    const lost = scenarioVerdict(row({ lost: 1 }), ['LOST normalized/a.ndjson: missing']);
    expect(lost).toMatchObject({ passed: false, problems: ['LOST normalized/a.ndjson: missing'] });
    expect(scenarioVerdict(row({ duplicated: 2 }), ['DUPLICATED x', 'DUPLICATED y']).passed).toBe(false);
    // A count without a line still fails, and says which counts.
    expect(scenarioVerdict(row({ dlqOnlyPoison: false }), [])).toMatchObject({
      passed: false,
      problems: ['0 lost, 0 duplicated, DLQ = poison: no'],
    });
  });

  it('fails a kill-point row whose counts are clean when a point reports a problem (a boundary never reached)', () => {
    const verdict = scenarioVerdict(row({ scenario: 'kill-small-item' }), [
      'kill before S3:HeadObject#1: the boundary was never reached',
    ]);
    expect(verdict).toMatchObject({ scenario: 'kill-small-item', passed: false });
  });
});

describe("vitestShapedReport: the chaos verdicts in the fields .ci/run's closing line sums", () => {
  it('counts one test per scenario verdict, failed ones with their problems, none pending or todo', () => {
    const report = vitestShapedReport(
      [
        scenarioVerdict(row(), []),
        scenarioVerdict(row({ scenario: 'random-kills', durationMs: 2000 }), []),
        scenarioVerdict(row({ scenario: 'everything-at-once', lost: 1 }), ['LOST summaries/x: missing']),
      ],
      { startTime: 1_000, seed: 0, cpuHogs: 1 },
    );
    expect(report).toMatchObject({
      numTotalTests: 3,
      numPassedTests: 2,
      numFailedTests: 1,
      numPendingTests: 0,
      numTodoTests: 0,
      success: false,
    });
    expect(report.testResults[0]?.assertionResults.map((a) => [a.title, a.status, a.failureMessages])).toEqual([
      ['http-faults', 'passed', []],
      ['random-kills', 'passed', []],
      ['everything-at-once', 'failed', ['LOST summaries/x: missing']],
    ]);
  });

  it('reports success only when every scenario passed', () => {
    const report = vitestShapedReport([scenarioVerdict(row(), [])], { startTime: 0, seed: 0, cpuHogs: 1 });
    expect(report).toMatchObject({ success: true, numPassedTests: 1, numFailedTests: 0, numFailedTestSuites: 0 });
  });
});
