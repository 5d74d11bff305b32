import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import type { OutcomeHook } from '../worker/outcomes.js';
import { tallyingOutcomeHook } from './outcomeMetrics.js';

/**
 * The part of a Powertools for AWS Lambda `Metrics` (`@aws-lambda-powertools/metrics`) that
 * {@link powertoolsOutcomeMetrics} uses; rerun does not depend on the package.
 */
export interface PowertoolsMetricsLike {
  addMetric(name: string, unit: 'Count', value: number): unknown;
  addDimension(name: string, value: string): unknown;
  publishStoredMetrics(): unknown;
}

/** Options of {@link powertoolsOutcomeMetrics}. */
export interface PowertoolsOutcomeMetricsOptions {
  /**
   * Publish at each flush (once per invocation), with the dimension `Worker`. Set it to false when
   * the function publishes itself, e.g. with Powertools' `logMetrics` middleware; the counts are
   * then added without the `Worker` dimension and go out with the function's own metrics.
   * @default true
   */
  readonly publish?: boolean;
}

/** The names of {@link PowertoolsOutcomeMetricsOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const POWERTOOLS_OUTCOME_METRICS_OPTION_NAMES = {
  publish: true,
} as const satisfies OptionNames<PowertoolsOutcomeMetricsOptions>;

/**
 * An `onOutcome` hook that counts outcomes ({@link OutcomeMetric}) with a Powertools `Metrics`, so
 * they share its namespace, service and default dimensions. At each flush it adds the invocation's
 * counts (unit Count, zeros included), adds the dimension `Worker`, and publishes: Powertools
 * writes the EMF line. It publishes what else the instance has stored too, as `logMetrics` does at
 * the end of a handler.
 *
 * @example
 * import { Metrics } from '@aws-lambda-powertools/metrics';
 * const metrics = new Metrics({ namespace: 'my-pipeline', serviceName: 'normalize' });
 * export const handler = createSqsBatchHandler({ worker, store, sqs, onOutcome: powertoolsOutcomeMetrics(metrics) });
 */
export function powertoolsOutcomeMetrics(
  metrics: PowertoolsMetricsLike,
  options: PowertoolsOutcomeMetricsOptions = {},
): OutcomeHook {
  checkOptions(
    'powertoolsOutcomeMetrics',
    options,
    POWERTOOLS_OUTCOME_METRICS_OPTION_NAMES,
    (m) => new WorkerConfigurationError(m),
  );
  const publish = options.publish ?? true;
  // Powertools publishes one dimension set per call: one publish per worker.
  return tallyingOutcomeHook((worker, counts) => {
    for (const [name, value] of Object.entries(counts)) metrics.addMetric(name, 'Count', value);
    if (publish) {
      metrics.addDimension('Worker', worker);
      metrics.publishStoredMetrics();
    }
  });
}
