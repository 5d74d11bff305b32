/**
 * The prebuilt reference workers of the package: bundles functions/<name>/handler.ts with esbuild's
 * API into `<outdir>/<name>/index.mjs` (and its `.map`), with the very settings {@link SqsWorker}
 * hands to NodejsFunction (WORKER_BUNDLING of src/cdk/workerBundling.ts), translated here the way
 * aws-cdk-lib's NodejsFunction turns them into esbuild arguments. `npm run build` runs it into
 * dist/workers, where `referenceWorker(name)` finds the bundles.
 *
 * Usage: npx tsx scripts/buildWorkers.ts [outdir]   (default: dist/workers)
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BuildOptions, build } from 'esbuild';
import { ReferenceWorker, type ReferenceWorkerName } from '../src/cdk/referenceWorker.js';
import { WORKER_BUNDLING } from '../src/cdk/workerBundling.js';

const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/** What NodejsFunction's output file is called for each format (aws-lambda-nodejs, bundling.ts). */
const OUTFILE = { esm: 'index.mjs', cjs: 'index.js' } as const;

/**
 * The esbuild build options NodejsFunction would run for `bundling` (its `buildEsbuildArgs`: the
 * CLI flags, here as API options) with the entry, the output folder and the tsconfig. A bundling
 * option this translation does not know throws: a new setting in WORKER_BUNDLING must be
 * translated here, or the prebuilt workers would silently differ from the construct's bundles.
 *
 * @example
 * esbuildOptionsFor(WORKER_BUNDLING, { entry: 'functions/normalize/handler.ts', outdir: 'dist/workers/normalize' });
 */
export function esbuildOptionsFor(
  bundling: BundlingOptions,
  where: { readonly entry: string; readonly outdir: string; readonly tsconfig?: string; readonly cwd?: string },
): BuildOptions {
  const known = new Set([
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
  const unknown = Object.keys(bundling).filter((key) => !known.has(key));
  if (unknown.length > 0) {
    throw new Error(`scripts/buildWorkers.ts cannot translate the bundling options ${unknown.join(', ')} yet`);
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
    outfile: join(where.outdir, OUTFILE[format]),
    minify: bundling.minify ?? false,
    sourcemap,
    sourcesContent: bundling.sourcesContent ?? true,
    // bundleAwsSDK: nothing external (NodejsFunction's default externals are @aws-sdk/*).
    external: bundling.bundleAwsSDK ? [] : ['@aws-sdk/*'],
    ...(bundling.banner ? { banner: { js: bundling.banner } } : {}),
    ...(bundling.mainFields ? { mainFields: [...bundling.mainFields] } : {}),
    ...(where.tsconfig ? { tsconfig: where.tsconfig } : {}),
    // NodejsFunction runs esbuild in the project root: module ids in the bundle are relative to it.
    absWorkingDir: where.cwd ?? root,
    logLevel: 'warning',
  };
}

/**
 * Bundles each reference worker into `<outdir>/<name>/`. Returns the folders written.
 *
 * @example
 * await buildReferenceWorkers(join(root, 'dist', 'workers')); // ['.../normalize', '.../summarize']
 */
export async function buildReferenceWorkers(
  outdir: string,
  names: readonly ReferenceWorkerName[] = Object.values(ReferenceWorker),
): Promise<string[]> {
  const written: string[] = [];
  for (const name of names) {
    const dir = join(outdir, name);
    rmSync(dir, { recursive: true, force: true });
    await build(
      esbuildOptionsFor(WORKER_BUNDLING, {
        entry: join('functions', name, 'handler.ts'),
        outdir: dir,
        tsconfig: join(root, 'tsconfig.json'),
      }),
    );
    written.push(dir);
  }
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = resolve(process.argv[2] ?? join(root, 'dist', 'workers'));
  for (const dir of await buildReferenceWorkers(outdir)) process.stdout.write(`${dir}\n`);
}
