import type { InvocationReport } from '../../local/runner/invocationReport.js';

/** Options of {@link ProgressReporter}. */
export interface ProgressReporterOptions {
  /** Where progress goes (stderr: stdout is reserved for the READY and SUMMARY lines). */
  write: (text: string) => void;
  /**
   * Rewrite one compact line in place (a terminal) instead of one line per invocation (a log).
   * @default false
   */
  tty?: boolean;
}

/** Totals over all invocations so far. */
export interface ProgressTotals {
  invocations: number;
  records: number;
  deleted: number;
  retained: number;
  /** Invocations that failed as a whole (error, invalid response, timeout). */
  failedInvocations: number;
}

/**
 * Shows what the local runner does: a line per invocation on a log, or one updating status line
 * on a terminal.
 *
 * @example
 * const progress = new ProgressReporter({ write: (s) => process.stderr.write(s), tty: process.stderr.isTTY });
 * new LocalRunner({ ...options, onInvocation: (r) => progress.invocation(r) });
 */
export class ProgressReporter {
  readonly totals: ProgressTotals = { invocations: 0, records: 0, deleted: 0, retained: 0, failedInvocations: 0 };
  private readonly write: (text: string) => void;
  private readonly tty: boolean;
  private lineOpen = false;

  constructor(options: ProgressReporterOptions) {
    this.write = options.write;
    this.tty = options.tty ?? false;
  }

  invocation(report: InvocationReport): void {
    const t = this.totals;
    t.invocations++;
    t.records += report.messageIds.length;
    t.deleted += report.deleted.length;
    t.retained += report.retained.length;
    if (report.outcome !== 'success' && report.outcome !== 'partial') t.failedInvocations++;
    if (this.tty) {
      this.write(
        `\r\x1b[2Kinvocations ${t.invocations} | records ${t.records} | deleted ${t.deleted} | ` +
          `retained ${t.retained} | failed invocations ${t.failedInvocations}`,
      );
      this.lineOpen = true;
      return;
    }
    const error = report.error ? ` - ${report.error}` : '';
    this.write(
      `invocation ${report.requestId.slice(0, 8)} ${report.outcome}: ${report.messageIds.length} record(s), ` +
        `${report.deleted.length} deleted, ${report.retained.length} retained, ${report.durationMs} ms${error}\n`,
    );
  }

  /** Prints a message on its own line (closing the status line first). */
  note(text: string): void {
    this.finish();
    this.write(`${text}\n`);
  }

  /** Ends the status line, if one is open. */
  finish(): void {
    if (this.lineOpen) this.write('\n');
    this.lineOpen = false;
  }
}
