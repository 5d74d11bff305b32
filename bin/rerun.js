#!/usr/bin/env node
/**
 * The `rerun` command. Installed from the package, it runs the compiled CLI (dist/app/cli/rerun.js)
 * with plain node. In a checkout of the repository, where the CLI's sources sit beside it, it runs
 * those under tsx (a devDependency) instead, so `npx rerun` in a checkout never runs a stale build
 * and needs no `npm run build` first. The package ships no sources, so it always takes the first way.
 */
import { existsSync } from 'node:fs';

const sources = new URL('../app/cli/rerun.ts', import.meta.url);
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  await import('../dist/app/cli/rerun.js');
}
