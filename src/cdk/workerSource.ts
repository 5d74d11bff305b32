import type { Code } from 'aws-cdk-lib/aws-lambda';
import type { OptionNames } from '../options/checkOptions.js';
import type { DeterministicKeyRule } from '../pipeline/keyRule.js';
import type { ObjectStage } from '../pipeline/pipelineDescription.js';

/**
 * Where a worker's code comes from: a handler module that CDK bundles with esbuild
 * (`NodejsFunction`, TypeScript or JavaScript, the AWS SDK bundled inside, split into chunks:
 * src/cdk/workerBundling.ts), or ready-made code.
 * Bundling an entry needs esbuild installed in your project (`npm install -D esbuild`): this
 * construct never falls back to Docker.
 */
export type WorkerSource =
  | {
      /** Path of the handler module (`.ts`, `.mts`, `.js`, `.mjs`), absolute or relative to the working directory. */
      readonly entry: string;
      /**
       * Exported handler function name.
       * @default 'handler'
       */
      readonly handler?: string;
      /**
       * The lockfile esbuild resolves dependencies against (package-lock.json, yarn.lock, pnpm-lock.yaml, bun.lockb).
       * @default the lockfile CDK finds by walking up from the working directory (your project's)
       */
      readonly depsLockFilePath?: string;
      /**
       * Root of the project the entry belongs to.
       * @default the folder of `depsLockFilePath`
       */
      readonly projectRoot?: string;
      /**
       * tsconfig.json esbuild compiles the entry with.
       * @default none: esbuild's own lookup next to the entry
       */
      readonly tsconfig?: string;
      /** @see the `{ code }` form's `outputPrefixes`. @default not declared */
      readonly outputPrefixes?: readonly string[];
    }
  | {
      /** Ready-made code (a prebuilt bundle: `Code.fromAsset('dist/worker')`). It must carry its own AWS SDK. */
      readonly code: Code;
      /** `file.export` of the handler inside `code` (`index.handler`). */
      readonly handler: string;
      /**
       * The key prefixes the worker writes its outputs under, when the source declares them
       * (`referenceWorker('normalize')` does): RerunPipeline grants these unless its own
       * `outputPrefixes` prop says otherwise.
       * @default not declared
       */
      readonly outputPrefixes?: readonly string[];
      /**
       * The pipeline stage the code runs, when the source declares it (`referenceWorker('normalize')`
       * does): RerunPipeline publishes it with `outputs: true` unless its `pipeline` prop says otherwise.
       * @default not declared
       */
      readonly stage?: ObjectStage<DeterministicKeyRule>;
    };

/** The names of {@link WorkerSource} (either form), checked by checkOptions (tsc fails when this list and the type differ). */
export const WORKER_SOURCE_NAMES = {
  code: true,
  depsLockFilePath: true,
  entry: true,
  handler: true,
  outputPrefixes: true,
  projectRoot: true,
  stage: true,
  tsconfig: true,
} as const satisfies OptionNames<WorkerSource>;

/** Why a worker source would be refused (empty: it is usable): one form, with what that form needs. */
export function sourceViolations(source: WorkerSource | undefined): string[] {
  if (!source || typeof source !== 'object') return ['worker: give { entry } or { code, handler }'];
  const s = source as { entry?: unknown; code?: unknown; handler?: unknown };
  if (s.entry !== undefined && s.code !== undefined) return ['worker: give either entry or code, not both'];
  if (s.entry === undefined && s.code === undefined) return ['worker: give { entry } or { code, handler }'];
  if (s.code !== undefined && (typeof s.handler !== 'string' || s.handler === '')) {
    return ['worker: code needs its handler ("index.handler")'];
  }
  if (s.entry !== undefined && (typeof s.entry !== 'string' || s.entry === '')) {
    return ['worker: entry must be the path of the handler module'];
  }
  return [];
}
