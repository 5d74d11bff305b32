import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** Size and cold import time of one bundled handler. */
export interface BundleFigures {
  readonly handler: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  /** Median over the runs of a fresh `node` process importing the bundle (the AWS SDK loads from node_modules). */
  readonly coldImportMs: number;
  readonly runs: number;
}

/** Where bundles are written: inside the project so `@aws-sdk/*` (external) resolves from node_modules. */
const OUT_DIR = resolve('node_modules/.cache/rerun-bench');

/**
 * Every Lambda entry point of the project (functions/* /handler.ts) and the Powertools baseline's.
 *
 * @example
 * handlerEntries(); // ['functions/normalize/handler.ts', 'functions/summarize/handler.ts', 'bench/baseline/handler.ts']
 */
export function handlerEntries(): string[] {
  const functions = readdirSync('functions', { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join('functions', d.name, 'handler.ts'))
    .filter((path) => {
      try {
        return readdirSync(join(path, '..')).includes('handler.ts');
      } catch {
        return false;
      }
    });
  return [...functions.sort(), 'bench/baseline/handler.ts'];
}

/**
 * Bundles a handler as the stack does (esbuild, ESM, minified, `@aws-sdk/*` external) into
 * node_modules/.cache/rerun-bench and returns the bundle's path.
 *
 * @example
 * const file = await bundleHandler('functions/normalize/handler.ts');
 */
export async function bundleHandler(entry: string, name = entry.replace(/[/\\.]/g, '_')): Promise<string> {
  mkdirSync(OUT_DIR, { recursive: true });
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['@aws-sdk/*'],
    banner: {
      js: "import { createRequire as __rerunCreateRequire } from 'node:module';const require = __rerunCreateRequire(import.meta.url);",
    },
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (!code) throw new Error(`esbuild produced no output for ${entry}`);
  const file = join(OUT_DIR, `${name}.mjs`);
  writeFileSync(file, code);
  return file;
}

/**
 * Bundles a handler the way the stack does (infra/constructs/SqsWorker.ts: esbuild, ESM, minified,
 * `@aws-sdk/*` external because the Lambda runtime ships it), then imports it `runs` times, each in
 * a fresh node process, and keeps the median time of the import (module scope included: clients,
 * configuration). The target is node20, the local runtime (the stack targets node24; the size
 * difference is negligible).
 *
 * @example
 * const figures = await measureBundle('functions/normalize/handler.ts', 5);
 */
export async function measureBundle(entry: string, runs = 5): Promise<BundleFigures> {
  const file = await bundleHandler(entry);
  const code = readFileSync(file);

  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const script =
      'const t = performance.now(); await import(process.argv[1]); ' +
      'process.stdout.write(String(performance.now() - t)); process.exit(0);';
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, file], {
      env: {
        ...process.env,
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
    handler: entry,
    bytes: code.byteLength,
    gzipBytes: gzipSync(code).byteLength,
    coldImportMs: Math.round((times[Math.floor(times.length / 2)] ?? 0) * 10) / 10,
    runs,
  };
}
