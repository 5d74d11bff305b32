/** One metric of an EMF document. */
export interface EmfMetric {
  readonly name: string;
  readonly value: number;
  /** A CloudWatch unit. @default 'Count' */
  readonly unit?: string;
}

/** What {@link formatEmfLine} writes. */
export interface EmfDocument {
  readonly namespace: string;
  /** Dimension names and values; all of them form the one dimension set. */
  readonly dimensions: Readonly<Record<string, string>>;
  readonly metrics: readonly EmfMetric[];
  /** Epoch ms. */
  readonly timestamp: number;
}

/** EMF's limits (CloudWatch embedded metric format specification). */
const MAX_METRICS = 100;
const MAX_DIMENSIONS = 30;

/**
 * One line of CloudWatch embedded metric format: the `_aws` metadata (Timestamp, and one
 * CloudWatchMetrics directive with the namespace, the dimension set and each metric's name and
 * unit), and each dimension and metric value as a top-level member, as the specification requires.
 * CloudWatch Logs extracts the metrics from such a line in the function's log, asynchronously and
 * without an API call. Pure.
 *
 * @example
 * formatEmfLine({ namespace: 'rerun', dimensions: { Worker: 'normalize' },
 *   metrics: [{ name: 'RecordsFailed', value: 1 }], timestamp: 1767225600000 });
 * // '{"_aws":{"Timestamp":1767225600000,"CloudWatchMetrics":[{"Namespace":"rerun","Dimensions":[["Worker"]],
 * //   "Metrics":[{"Name":"RecordsFailed","Unit":"Count"}]}]},"Worker":"normalize","RecordsFailed":1}'
 */
export function formatEmfLine(document: EmfDocument): string {
  const dimensionNames = Object.keys(document.dimensions);
  if (document.metrics.length > MAX_METRICS) {
    throw new RangeError(`EMF allows ${MAX_METRICS} metrics per directive, got ${document.metrics.length}`);
  }
  if (dimensionNames.length > MAX_DIMENSIONS) {
    throw new RangeError(`EMF allows ${MAX_DIMENSIONS} dimensions per set, got ${dimensionNames.length}`);
  }
  for (const metric of document.metrics) {
    if (metric.name in document.dimensions) {
      throw new RangeError(`EMF member "${metric.name}" cannot be both a dimension and a metric`);
    }
  }
  const root: Record<string, unknown> = {
    _aws: {
      Timestamp: document.timestamp,
      CloudWatchMetrics: [
        {
          Namespace: document.namespace,
          Dimensions: [dimensionNames],
          Metrics: document.metrics.map((m) => ({ Name: m.name, Unit: m.unit ?? 'Count' })),
        },
      ],
    },
    ...document.dimensions,
  };
  for (const metric of document.metrics) root[metric.name] = metric.value;
  return JSON.stringify(root);
}
