import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { normalizeStage } from '../normalize/normalizeStage.js';
import { ReferenceWorkerBundleMissingError, StackConfigurationInvalidError } from './errors.js';
import type { WorkerSource } from './workerSource.js';

/**
 * rerun's own workers, shipped prebuilt in the package (`dist/workers/<name>/index.mjs`, bundled by
 * `npm run build` with the settings of src/cdk/workerBundling.ts, the AWS SDK inside).
 *
 * - `normalize`: the reference CSV/NDJSON normalizer (functions/normalize/handler.ts), the worker
 *   {@link RerunPipeline} is made for. It reads OUTPUT_BUCKET (required), MAX_INPUT_BYTES, LEDGER_TABLE
 *   and NOTIFY_URL (the webhook, which needs the ledger), LOG_LEVEL, and CODE_VERSION_PREFIX:
 *   RerunPipeline sets them all (LEDGER_TABLE and NOTIFY_URL with its `webhook` only). It writes `normalized/`
 *   and `quarantine/` (RerunPipeline's default `outputPrefixes`), `failures/`, and under `code-versions/`
 *   when its code version first ran (RerunPipeline grants it a conditional write there).
 * - `summarize`: the daily summary stage (functions/summarize/handler.ts), for an {@link SqsWorker}
 *   on a FIFO queue of partition tasks. It reads OUTPUT_BUCKET and INPUT_BUCKET (both required).
 */
export const ReferenceWorker = {
  NORMALIZE: 'normalize',
  SUMMARIZE: 'summarize',
} as const;
export type ReferenceWorkerName = (typeof ReferenceWorker)[keyof typeof ReferenceWorker];

/**
 * Where the reference normalizer writes (NORMALIZE_PREFIXES of src/normalize/normalizeWorker.ts,
 * repeated so that importing the construct does not load the normalizer; a test keeps them equal).
 */
export const NORMALIZE_OUTPUT_PREFIXES: readonly string[] = ['normalized/', 'quarantine/'];

/**
 * Where the prebuilt bundles are: `dist/workers` of the package. From the compiled module
 * (`dist/src/cdk/referenceWorker.js`) that is `../../workers`; from the sources in a checkout
 * (`src/cdk/referenceWorker.ts`, under tsx or vitest) `../../dist/workers`, what `npm run build` wrote.
 */
export const REFERENCE_WORKERS_DIR: string = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../../dist/workers' : '../../workers', import.meta.url),
);

/**
 * One of rerun's own workers as a {@link WorkerSource}, ready-made code for
 * {@link RerunPipeline} or {@link SqsWorker}: no esbuild, no lockfile, no Docker at synth.
 * Throws {@link ReferenceWorkerBundleMissingError} when the package holds no prebuilt bundle (a
 * checkout without `npm run build`).
 *
 * @example
 * new RerunPipeline(stack, 'Pipeline', { worker: referenceWorker('normalize') });
 */
export function referenceWorker(name: ReferenceWorkerName): WorkerSource {
  return referenceWorkerIn(REFERENCE_WORKERS_DIR, name);
}

/** {@link referenceWorker} with the bundles in `workersDir` (`<workersDir>/<name>/index.mjs`). */
export function referenceWorkerIn(workersDir: string, name: ReferenceWorkerName): WorkerSource {
  const names = Object.values(ReferenceWorker) as string[];
  if (!names.includes(name)) {
    throw new StackConfigurationInvalidError([
      `referenceWorker: "${String(name)}" is not one of rerun's workers (${names.join(', ')})`,
    ]);
  }
  const directory = join(workersDir, name);
  const bundle = join(directory, 'index.mjs');
  if (!existsSync(bundle)) throw new ReferenceWorkerBundleMissingError(name, bundle);
  return {
    code: Code.fromAsset(directory),
    handler: 'index.handler',
    // Its keys as data: a stack with outputs: true publishes them for the tools (--stack).
    ...(name === ReferenceWorker.NORMALIZE
      ? { outputPrefixes: NORMALIZE_OUTPUT_PREFIXES, stage: normalizeStage() }
      : {}),
  };
}
