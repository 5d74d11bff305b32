/**
 * `npm run build` (and `prepack`): compiles the package into dist/ with tsconfig.build.json (ESM and
 * .d.ts), then copies what the compiled code reads at run time beside it: the emulator's Python
 * wrapper, moto's pinned requirements and the samples of `rerun dev --demo`. dist/ mirrors the
 * repository (dist/src, dist/local, dist/app, dist/functions), so every path the code computes from
 * its own location holds in both. Last, the prebuilt reference workers: dist/workers/<name>/index.mjs
 * (scripts/buildWorkers.ts), which `referenceWorker(name)` of rerun-pipeline/cdk deploys as they are.
 *
 * Usage: npx tsx scripts/buildPackage.ts
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildReferenceWorkers } from './buildWorkers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

// The package does not ship the stack (`rerun dev --runtime lambda` says so, see app/dev/runDev.ts):
// app/ does not import infra/, so tsc should emit none; any that a future import pulls in is removed.
rmSync(join(dist, 'infra'), { recursive: true, force: true });
// The application wing and the handler are run, never imported by a user: no declarations.
for (const wing of ['app', 'functions']) removeDeclarations(join(dist, wing));

cpSync(join(root, 'local', 'emulator', 'atomicMotoServer.py'), join(dist, 'local', 'emulator', 'atomicMotoServer.py'));
cpSync(join(root, 'requirements', 'moto.txt'), join(dist, 'requirements', 'moto.txt'));
cpSync(join(root, 'examples'), join(dist, 'examples'), { recursive: true });
chmodSync(join(dist, 'app', 'cli', 'rerun.js'), 0o755);
// The AWS SDK inside, with the construct's own bundling settings (src/cdk/workerBundling.ts).
await buildReferenceWorkers(join(dist, 'workers'));

function removeDeclarations(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) removeDeclarations(path);
    else if (entry.name.endsWith('.d.ts')) rmSync(path);
  }
}
