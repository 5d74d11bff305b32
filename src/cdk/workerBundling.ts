import { resolve } from 'node:path';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import {
  type BundlingOptions,
  type NodejsFunctionProps,
  OutputFormat,
  SourceMapMode,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import { splitBundleCommand } from './workerEsbuildOptions.js';

/** The Node.js runtime of every rerun worker function (the bundles target it). */
export const WORKER_RUNTIME: Runtime = Runtime.NODEJS_24_X;

/**
 * The esbuild settings of every rerun worker bundle, in one place: {@link SqsWorker} hands them to
 * `NodejsFunction` for a `{ entry }` worker, and `npm run build` (scripts/buildWorkers.ts) translates
 * them into esbuild's API for the prebuilt reference workers (`referenceWorker`). A setting the
 * translation does not know fails that build, so the two bundles cannot drift apart.
 *
 * Minified ESM (`index.mjs`) with a source map next to it and no source text in it, for Node 24,
 * split (see {@link entryFunctionProps}): what only a dynamic `import()` reaches is in chunks of its own;
 * `module` before `main` (the SDK's ES builds); a `require` in scope for CommonJS dependencies.
 * The AWS SDK is bundled at the versions of the lockfile, never taken from the runtime: AWS no
 * longer documents which SDK a Node runtime ships, and an older SDK silently drops input members
 * it does not know, such as PutObject's IfNoneMatch (docs/AWS-BEHAVIOUR.md, "SDK versions in
 * the runtime"): the conditional writes would then vanish from the wire.
 *
 * @example
 * new NodejsFunction(scope, 'Fn', { entry, runtime: WORKER_RUNTIME, bundling: { ...WORKER_BUNDLING } });
 */
export const WORKER_BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node24',
  minify: true,
  sourceMap: true,
  sourceMapMode: SourceMapMode.DEFAULT,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // ESM output: CommonJS dependencies that call require() need one in scope.
  banner:
    "import { createRequire as __rerunCreateRequire } from 'node:module';const require = __rerunCreateRequire(import.meta.url);",
  bundleAwsSDK: true,
} as const satisfies BundlingOptions;

/** What {@link entryFunctionProps} reads of a `{ entry }` worker source (SqsWorker's WorkerSource). */
export interface EntrySource {
  readonly entry: string;
  readonly handler?: string;
  readonly depsLockFilePath?: string;
  readonly projectRoot?: string;
  readonly tsconfig?: string;
}

/**
 * The `NodejsFunction` props of a function built from a worker's entry, with the settings of the
 * prebuilt reference workers ({@link WORKER_BUNDLING}): the SqsWorker's and the Batch Operations
 * handler's functions are bundled the same way.
 *
 * NodejsFunction writes one file, so a module reached only through a dynamic `import()` would still
 * be read and parsed at every cold start (the X-Ray SDK of a function without tracing, the DynamoDB
 * client of one without a ledger). Unless `extraBundling` changes the settings, an `afterBundling`
 * hook therefore builds the entry again with esbuild's code splitting, with the same settings
 * (src/cdk/workerEsbuildOptions.ts), the esbuild of the project (NodejsFunction's own) and its
 * tsconfig: `index.mjs` then holds what every invocation needs, and each lazily imported module
 * a chunk beside it that is read when the `import()` runs.
 *
 * @example
 * new NodejsFunction(scope, 'Function', { ...common, ...entryFunctionProps({ entry: 'worker.ts' }) });
 */
export function entryFunctionProps(
  source: EntrySource,
  extraBundling: BundlingOptions = {},
): Pick<NodejsFunctionProps, 'entry' | 'handler' | 'projectRoot' | 'depsLockFilePath' | 'bundling'> {
  // Settings of the caller's own are not translated to the split build: NodejsFunction's one file then.
  const split = Object.keys(extraBundling).length === 0;
  return {
    entry: source.entry,
    handler: source.handler ?? 'handler',
    // Nothing of rerun's own repository: the consumer's lockfile (found from the working
    // directory) unless the caller names one.
    ...(source.projectRoot ? { projectRoot: source.projectRoot } : {}),
    ...(source.depsLockFilePath ? { depsLockFilePath: source.depsLockFilePath } : {}),
    bundling: {
      ...WORKER_BUNDLING,
      mainFields: [...WORKER_BUNDLING.mainFields],
      ...(source.tsconfig ? { tsconfig: source.tsconfig } : {}),
      // Synth must never need Docker: esbuild runs locally (a dependency of the consumer's app).
      forceDockerBundling: false,
      ...(split
        ? {
            commandHooks: {
              beforeBundling: () => [],
              beforeInstall: () => [],
              afterBundling: (inputDir: string, outputDir: string) => [
                splitBundleCommand(WORKER_BUNDLING, {
                  entry: resolve(source.entry),
                  outdir: outputDir,
                  cwd: inputDir,
                  ...(source.tsconfig ? { tsconfig: source.tsconfig } : {}),
                }),
              ],
            },
          }
        : {}),
      ...extraBundling,
    },
  };
}
