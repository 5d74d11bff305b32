import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import type { OutcomeHook } from '../worker/outcomes.js';
import { formatEmfLine } from './emf.js';
import { tallyingOutcomeHook } from './outcomeMetrics.js';

/** Options of {@link emfOutcomeMetrics}. */
export interface EmfOutcomeMetricsOptions {
  /**
   * The CloudWatch namespace of the metrics.
   * @default 'rerun'
   */
  readonly namespace?: string;
  /**
   * Dimensions added to `Worker` (the handler's worker name), e.g. `{ Stage: 'prod' }`.
   * @default {}
   */
  readonly dimensions?: Readonly<Record<string, string>>;
  /**
   * Where each EMF line goes. In Lambda it must reach the function's log: stdout is.
   * @default writes the line to process.stdout
   */
  readonly sink?: (line: string) => void;
  /**
   * The clock of each line's `Timestamp` (epoch ms).
   * @default Date.now
   */
  readonly now?: () => number;
}

/** The names of {@link EmfOutcomeMetricsOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const EMF_OUTCOME_METRICS_OPTION_NAMES = {
  dimensions: true,
  namespace: true,
  now: true,
  sink: true,
} as const satisfies OptionNames<EmfOutcomeMetricsOptions>;

/**
 * An `onOutcome` hook that writes CloudWatch metrics with no dependency: it counts the outcomes of
 * an invocation ({@link OutcomeMetric}: records processed, skipped and failed, entries quarantined,
 * publish races lost, side effects executed) and, when the handler flushes it, writes one line of
 * embedded metric format per worker, every metric of unit Count with dimension `Worker`. Zeros are
 * written too, so a failure alarm reads 0 instead of missing data.
 *
 * @example
 * export const handler = createSqsBatchHandler({
 *   worker, store, sqs,
 *   onOutcome: emfOutcomeMetrics({ namespace: 'my-pipeline' }),
 * });
 */
export function emfOutcomeMetrics(options: EmfOutcomeMetricsOptions = {}): OutcomeHook {
  checkOptions('emfOutcomeMetrics', options, EMF_OUTCOME_METRICS_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const namespace = options.namespace ?? 'rerun';
  const sink = options.sink ?? ((line: string) => process.stdout.write(`${line}\n`));
  const now = options.now ?? Date.now;
  return tallyingOutcomeHook((worker, counts) =>
    sink(
      formatEmfLine({
        namespace,
        dimensions: { ...options.dimensions, Worker: worker },
        metrics: Object.entries(counts).map(([name, value]) => ({ name, value })),
        timestamp: now(),
      }),
    ),
  );
}
