import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { StackConfigurationInvalidError } from './errors.js';

/**
 * esbuild's build options for a worker bundle, as plain JSON (the subset of esbuild's `BuildOptions`
 * that {@link workerEsbuildOptions} sets), so that a bundling command can carry them.
 */
export interface WorkerEsbuildOptions {
  readonly entryPoints: string[];
  readonly bundle: true;
  readonly platform: 'node';
  readonly target?: string;
  readonly format: 'esm' | 'cjs';
  readonly outdir: string;
  readonly splitting: boolean;
  readonly entryNames: 'index';
  readonly outExtension: Record<string, string>;
  readonly minify: boolean;
  readonly sourcemap: boolean | 'linked' | 'inline' | 'external' | 'both';
  readonly sourcesContent: boolean;
  readonly external: string[];
  readonly banner?: { js: string };
  readonly mainFields?: string[];
  readonly tsconfig?: string;
  readonly absWorkingDir: string;
  readonly logLevel: 'warning';
}

/** The bundling options {@link workerEsbuildOptions} translates; any other makes it throw. */
const TRANSLATED = new Set([
  'format',
  'target',
  'minify',
  'sourceMap',
  'sourceMapMode',
  'sourcesContent',
  'mainFields',
  'banner',
  'bundleAwsSDK',
]);

/**
 * The esbuild options of a worker bundle for `bundling` (WORKER_BUNDLING of workerBundling.ts): the
 * flags aws-cdk-lib's NodejsFunction turns them into (its `buildEsbuildArgs`), as esbuild API
 * options, with code splitting for ESM. The entry becomes `<outdir>/index.mjs` (`index.js` for
 * CommonJS, which cannot split); a module reached only through a dynamic `import()` (the X-Ray SDK
 * of `traceAwsClients`, the dedupe ledger's DynamoDB client, the SDK's unused credential providers)
 * goes to a chunk of its own beside it, read only when that `import()` runs, and the modules every
 * path needs to shared chunks the entry imports. A bundling option this translation does not know
 * throws, so a new setting cannot silently differ between NodejsFunction's flags and this build.
 *
 * @example
 * workerEsbuildOptions(WORKER_BUNDLING, { entry: 'functions/normalize/handler.ts', outdir: 'dist/workers/normalize', cwd: process.cwd() });
 */
export function workerEsbuildOptions(
  bundling: BundlingOptions,
  where: { readonly entry: string; readonly outdir: string; readonly cwd: string; readonly tsconfig?: string },
): WorkerEsbuildOptions {
  const unknown = Object.keys(bundling).filter((key) => !TRANSLATED.has(key));
  if (unknown.length > 0) {
    throw new StackConfigurationInvalidError([
      `the worker bundle's esbuild build cannot translate the bundling options ${unknown.join(', ')} yet`,
    ]);
  }
  const format = bundling.format ?? 'cjs';
  const sourceMap = bundling.sourceMapMode ?? bundling.sourceMap;
  // NodejsFunction: `--sourcemap` for the default mode (a linked .map file), `--sourcemap=<mode>` otherwise.
  const sourcemap = !sourceMap
    ? false
    : (bundling.sourceMapMode ?? 'default') === 'default'
      ? true
      : (bundling.sourceMapMode as 'linked' | 'inline' | 'external' | 'both');
  return {
    entryPoints: [where.entry],
    bundle: true,
    platform: 'node',
    ...(bundling.target ? { target: bundling.target } : {}),
    format,
    outdir: where.outdir,
    // esbuild splits ESM only. The entry keeps NodejsFunction's file name (index.mjs, the handler's module).
    splitting: format === 'esm',
    entryNames: 'index',
    outExtension: { '.js': format === 'esm' ? '.mjs' : '.js' },
    minify: bundling.minify ?? false,
    sourcemap,
    sourcesContent: bundling.sourcesContent ?? true,
    // bundleAwsSDK: nothing external (NodejsFunction's default externals are @aws-sdk/*).
    external: bundling.bundleAwsSDK ? [] : ['@aws-sdk/*'],
    ...(bundling.banner ? { banner: { js: bundling.banner } } : {}),
    ...(bundling.mainFields ? { mainFields: [...bundling.mainFields] } : {}),
    ...(where.tsconfig ? { tsconfig: where.tsconfig } : {}),
    // NodejsFunction runs esbuild in the project root: module ids in the bundle are relative to it.
    absWorkingDir: where.cwd,
    logLevel: 'warning',
  };
}

/**
 * The shell command that builds a worker bundle with {@link workerEsbuildOptions} into `outdir`,
 * with the esbuild of the project it runs in (NodejsFunction runs its command hooks in the project
 * root, where it found esbuild). NodejsFunction writes one file and cannot split; run after it
 * (`commandHooks.afterBundling`), this replaces its `index.mjs` with the split one and its chunks.
 *
 * @example
 * splitBundleCommand(WORKER_BUNDLING, { entry, outdir, cwd: projectRoot });
 * // node --input-type=module -e '...' '{"entryPoints":[...],...}'
 */
export function splitBundleCommand(
  bundling: BundlingOptions,
  where: { readonly entry: string; readonly outdir: string; readonly cwd: string; readonly tsconfig?: string },
): string {
  const options = workerEsbuildOptions(bundling, where);
  const script = "const { build } = await import('esbuild'); await build(JSON.parse(process.argv[1]));";
  return ['node', '--input-type=module', '-e', shellQuoted(script), shellQuoted(JSON.stringify(options))].join(' ');
}

/** `text` as one POSIX shell word. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
