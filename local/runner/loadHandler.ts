import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HandlerExportMissingError, HandlerModuleLoadError } from './errors.js';
import type { SqsLambdaHandler } from './LocalRunner.js';

/**
 * Imports a handler module the way Lambda's `Handler` setting names it (`file.exportName`) and
 * returns the exported function. A `.ts` path works when the process runs under tsx (`npm run rerun`
 * in the repository does; the installed `rerun` bin is plain node). Relative paths resolve from the current directory.
 *
 * The module is imported once per process (ES module cache), like a warm Lambda environment:
 * what it builds at module scope (SDK clients, configuration read from the environment) is built
 * once, so set the environment variables it reads BEFORE loading it.
 *
 * @example
 * const handler = await loadHandler('functions/normalize/handler.ts');
 * const response = await handler(event, context);
 */
export async function loadHandler<H extends (...args: never[]) => unknown = SqsLambdaHandler>(
  modulePath: string,
  exportName = 'handler',
): Promise<H> {
  const absolute = resolve(modulePath);
  if (!existsSync(absolute)) {
    throw new HandlerModuleLoadError(
      `The handler module ${absolute} does not exist. Pass the path of a .ts or .js file.`,
    );
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    // Plain node (the installed `rerun` bin) cannot import TypeScript before Node 22.18.
    const typescriptHint =
      (error as { code?: string }).code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?ts$/.test(absolute)
        ? ' Node cannot run TypeScript here: compile the handler to .js/.mjs, or run rerun under tsx ' +
          '(node --import tsx node_modules/rerun/dist/app/cli/rerun.js ...).'
        : '';
    throw new HandlerModuleLoadError(`Importing the handler module ${absolute} failed: ${detail}${typescriptHint}`, {
      cause: error,
    });
  }
  // A CommonJS module imported from ESM exposes its exports under `default`.
  const fromDefault =
    typeof module.default === 'object' && module.default !== null
      ? (module.default as Record<string, unknown>)[exportName]
      : undefined;
  const candidate = module[exportName] ?? fromDefault;
  if (typeof candidate !== 'function') {
    const exported = Object.keys(module);
    throw new HandlerExportMissingError(
      `The handler module ${absolute} has no function export named "${exportName}"` +
        ` (its exports: ${exported.length > 0 ? exported.join(', ') : 'none'}).`,
    );
  }
  return candidate as H;
}
