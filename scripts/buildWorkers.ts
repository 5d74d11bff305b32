/**
 * The prebuilt reference workers of the package: bundles functions/<name>/handler.ts with esbuild's
 * API into `<outdir>/<name>/index.mjs` and the chunks it imports (each with its `.map`), with the
 * very build {@link SqsWorker}'s bundling runs (WORKER_BUNDLING of src/cdk/workerBundling.ts,
 * translated by src/cdk/workerEsbuildOptions.ts, split). `npm run build` runs it into
 * dist/workers, where `referenceWorker(name)` finds the bundles.
 *
 * Usage: npx tsx scripts/buildWorkers.ts [outdir]   (default: dist/workers)
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ReferenceWorker, type ReferenceWorkerName } from '../src/cdk/referenceWorker.js';
import { WORKER_BUNDLING } from '../src/cdk/workerBundling.js';
import { workerEsbuildOptions } from '../src/cdk/workerEsbuildOptions.js';

const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

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
      workerEsbuildOptions(WORKER_BUNDLING, {
        entry: join(root, 'functions', name, 'handler.ts'),
        outdir: dir,
        cwd: root,
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
