import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { StackWorkerSynthesizer } from '../dev/StackWorkerSynthesizer.js';

/** The project root (app/cli/ is two folders down): a checkout, or the installed package's dist/. */
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** `.ts` when this runs from the sources (a checkout, under tsx), `.js` when compiled (the package). */
const MODULE_EXTENSION = extname(fileURLToPath(import.meta.url));
/** The stack's bundle synthesis: in a checkout only (the package does not ship infra/). */
const WORKER_BUNDLES = join(PROJECT_ROOT, 'infra', `workerBundles${MODULE_EXTENSION}`);

/**
 * The reference stack's {@link StackWorkerSynthesizer}, for `rerun dev --runtime lambda`, or
 * undefined where there is no stack (the installed package): `runDev` then says that this mode needs
 * a checkout. The stack is found where it lies, as bin/rerun.js finds the sources, and loaded only
 * when the session synthesizes (synthesis needs aws-cdk-lib): the application does not import the
 * wing above it, which imports the application's topology.
 *
 * @example
 * runDev({ runtime: 'lambda', synthesizeStackWorkers: locateStackWorkers(), ... });
 */
export function locateStackWorkers(): StackWorkerSynthesizer | undefined {
  if (!existsSync(WORKER_BUNDLES)) return undefined;
  return async () => {
    const stack = (await import(pathToFileURL(WORKER_BUNDLES).href)) as {
      synthesizeStackWorkers: StackWorkerSynthesizer;
    };
    return stack.synthesizeStackWorkers();
  };
}
