import type { WorkerDefinition } from './defineWorker.js';

/**
 * Why an object is not an input of this worker, or undefined when it is. An event or a Batch
 * Operations manifest row may name any bucket (a forged message, a manifest listing the wrong
 * bucket): a worker that read it would write outputs of objects the pipeline never reads, into the
 * output bucket itself when the row named that (`normalized/rerun-output/...`). So, before any
 * request:
 * - with `inputBuckets` declared, a bucket not listed is refused, the output bucket included;
 * - the worker's own outputs (the output bucket under its `outputPrefixes`) are never an input,
 *   even in a layout that reads and writes one bucket;
 * - with `inputPrefixes` declared, a key under none of them is refused.
 * The refusal is a skip with its reason: retrying cannot change it, and it is no crash to dead-letter.
 *
 * @example
 * outsideInputs({ outputBucket: 'out', inputBuckets: ['in'] }, { bucket: 'out', key: 'incoming/a.csv' });
 * // 's3://out/incoming/a.csv is in the worker's output bucket, which is never one of its inputs (it reads in)'
 */
export function outsideInputs(
  worker: Pick<WorkerDefinition, 'outputBucket' | 'outputPrefixes' | 'inputBuckets' | 'inputPrefixes'>,
  object: { readonly bucket: string; readonly key: string },
): string | undefined {
  const name = `s3://${object.bucket}/${object.key}`;
  const buckets = worker.inputBuckets;
  if (buckets && !buckets.includes(object.bucket)) {
    const reads = `it reads ${buckets.join(', ')}`;
    return object.bucket === worker.outputBucket
      ? `${name} is in the worker's output bucket, which is never one of its inputs (${reads})`
      : `${name} is in a bucket this pipeline does not read (${reads}): refused, not read`;
  }
  if (object.bucket === worker.outputBucket && worker.outputPrefixes?.some((p) => object.key.startsWith(p))) {
    return `${name} is one of the worker's own outputs (under ${worker.outputPrefixes.join(', ')}), never an input`;
  }
  const prefixes = worker.inputPrefixes;
  if (prefixes && !prefixes.some((p) => object.key.startsWith(p))) {
    return `${name} is outside the prefixes this pipeline reads (${prefixes.join(', ')}): refused, not read`;
  }
  return undefined;
}

/**
 * The bucket names of a comma-separated list, as the construct passes them in `INPUT_BUCKETS`:
 * undefined for an empty or unset variable (no bucket is then refused for its name).
 *
 * @example
 * inputBucketsFrom('rerun-input, other-input'); // ['rerun-input', 'other-input']
 */
export function inputBucketsFrom(list: string | undefined): readonly string[] | undefined {
  const buckets = (list ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  return buckets.length > 0 ? buckets : undefined;
}
