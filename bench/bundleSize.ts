import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { synthesizeWorkerBundles, WORKER_NAMES, type WorkerName } from '../infra/workerBundles.js';

/** Size and cold import time of one bundled handler. */
export interface BundleFigures {
  readonly handler: string;
  /** What a cold start reads and parses: `index.mjs` and the chunks it imports statically ({@link bundleStartModules}). */
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Every module of the bundle, the chunks only a dynamic `import()` loads too. */
  readonly totalBytes: number;
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
 * The two workers' bundles exactly as the stack builds them (infra/workerBundles.ts synthesizes the
 * real CDK app and takes each worker's asset out of the cloud assembly, outside the project tree).
 * Returns worker name to bundle file.
 *
 * @example
 * const { normalize } = await stackWorkerBundles(); // '/tmp/rerun-lambda-bundles/<digest>/normalize/index.mjs'
 */
export async function stackWorkerBundles(): Promise<Record<WorkerName, string>> {
  const bundles = await synthesizeWorkerBundles();
  return Object.fromEntries(WORKER_NAMES.map((w) => [w, join(bundles[w].directory, 'index.mjs')])) as Record<
    WorkerName,
    string
  >;
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
 * const figures = measureBundle('normalize', (await stackWorkerBundles()).normalize, 5);
 */
export function measureBundle(handler: string, file: string, runs = 5): BundleFigures {
  const dir = dirname(file);
  const read = (files: readonly string[]) => Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
  const code = read(bundleStartModules(dir, basename(file)));
  const all = read(readdirSync(dir).filter((f) => f.endsWith('.mjs') || f.endsWith('.js')));

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
    totalBytes: all.byteLength,
    coldImportMs: Math.round((times[Math.floor(times.length / 2)] ?? 0) * 10) / 10,
    runs,
  };
}

/**
 * The files of a bundle that Node.js reads and parses when it imports `entry`: the entry and every
 * chunk reached from it through static imports (`import{a}from"./chunk.mjs"`, `import"./chunk.mjs"`,
 * `export{a}from"./chunk.mjs"`), not those only a dynamic `import("./x.mjs")` reaches. Read from
 * esbuild's ESM output, whose imports of its own chunks are always relative. A one-file bundle is
 * its entry alone.
 *
 * @example
 * bundleStartModules('/tmp/rerun-lambda-bundles/<digest>/normalize'); // ['index.mjs', 'chunk-ABC.mjs', ...]
 */
export function bundleStartModules(dir: string, entry = 'index.mjs'): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(dir, file), 'utf8');
    // `import` or `export`, then a clause or nothing, then the quoted path: never `import(`.
    for (const match of code.matchAll(/\b(?:import|export)\s*(?:[\w$*{}\s,]*?\bfrom\s*)?["']\.\/([^"']+)["']/g)) {
      visit(match[1] as string);
    }
  };
  visit(entry);
  return [...seen];
}
