import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildRerunApp } from '../infra/buildApp.js';

/** Size and cold import time of one bundled handler. */
export interface BundleFigures {
  readonly handler: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  /**
   * Median over the runs of a fresh `node` process importing the bundle from a folder with no
   * node_modules in reach: the AWS SDK loads from inside the bundle, as it does on Lambda.
   */
  readonly coldImportMs: number;
  readonly runs: number;
}

/** Where bundles are copied: outside the project, so nothing but the bundle itself can resolve `@aws-sdk/*`. */
const OUT_DIR = join(tmpdir(), 'rerun-bench-bundles');

/**
 * The two workers' bundles exactly as the stack builds them: the real CDK app is synthesized
 * (NodejsFunction with the stack's bundling settings, the SDK inside) and each worker's asset is
 * copied out of the cloud assembly. Returns worker name to bundle file.
 *
 * @example
 * const { normalize } = stackWorkerBundles(); // '/tmp/rerun-bench-bundles/normalize/index.mjs'
 */
export function stackWorkerBundles(): Record<string, string> {
  const outdir = mkdtempSync(join(tmpdir(), 'rerun-bench-synth-'));
  try {
    const context = JSON.parse(readFileSync('cdk.json', 'utf8')).context as Record<string, unknown>;
    const { app, stack } = buildRerunApp({ nag: false, appProps: { outdir, context } });
    const assembly = app.synth();
    const template = assembly.getStackByName(stack.stackName).template as {
      Resources: Record<string, { Type: string; Properties?: { Description?: string; Code?: { S3Key?: string } } }>;
    };
    const bundles: Record<string, string> = {};
    for (const resource of Object.values(template.Resources)) {
      const worker = /^rerun (\w+) worker$/.exec(resource.Properties?.Description ?? '')?.[1];
      const key = resource.Properties?.Code?.S3Key;
      if (resource.Type !== 'AWS::Lambda::Function' || !worker || !key) continue;
      const dir = join(OUT_DIR, worker);
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'index.mjs');
      copyFileSync(join(assembly.directory, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs'), file);
      bundles[worker] = file;
    }
    if (Object.keys(bundles).length === 0) throw new Error('the synthesized stack has no rerun worker function');
    return bundles;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * Bundles a module that is not a stack worker (the Powertools baseline's handler, the bench's
 * runner process) the way the stack bundles its workers: esbuild, ESM, minified, the SDK inside.
 * Returns the bundle's path.
 *
 * @example
 * const file = await bundleEntry('bench/baseline/handler.ts', 'powertools-baseline');
 */
export async function bundleEntry(entry: string, name: string): Promise<string> {
  const dir = join(OUT_DIR, name);
  mkdirSync(dir, { recursive: true });
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    mainFields: ['module', 'main'],
    banner: {
      js: "import { createRequire as __rerunCreateRequire } from 'node:module';const require = __rerunCreateRequire(import.meta.url);",
    },
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (!code) throw new Error(`esbuild produced no output for ${entry}`);
  const file = join(dir, 'index.mjs');
  writeFileSync(file, code);
  return file;
}

/**
 * Imports a bundle `runs` times, each in a fresh node process in the bundle's own folder (no
 * node_modules in reach), and keeps the median time of the import (module scope included: clients,
 * configuration, the bundled SDK).
 *
 * @example
 * const figures = measureBundle('normalize', stackWorkerBundles().normalize, 5);
 */
export function measureBundle(handler: string, file: string, runs = 5): BundleFigures {
  const code = readFileSync(file);

  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const script =
      'const t = performance.now(); await import(process.argv[1]); ' +
      'process.stdout.write(String(performance.now() - t)); process.exit(0);';
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, file], {
      cwd: dirname(file),
      env: {
        PATH: process.env.PATH,
        // What the handlers read at module scope; nothing is called.
        OUTPUT_BUCKET: 'bench-out',
        INPUT_BUCKET: 'bench-in',
        IDEMPOTENCY_TABLE: 'bench-idempotency',
        AWS_REGION: 'us-east-1',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        LOG_LEVEL: 'error',
      },
      encoding: 'utf8',
    });
    times.push(Number(out));
  }
  times.sort((a, b) => a - b);
  return {
    handler,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code).byteLength,
    coldImportMs: Math.round((times[Math.floor(times.length / 2)] ?? 0) * 10) / 10,
    runs,
  };
}
