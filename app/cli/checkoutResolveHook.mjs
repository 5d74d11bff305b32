/**
 * A module resolve hook for a checkout of the repository (registered by app/cli/checkoutImports.ts).
 * A module inside the checkout that imports `rerun-pipeline` (the worker guide's "Write your own worker"
 * there) refers to this very package, whose `exports` name the compiled dist/, which only
 * `npm run build` makes. The CLI of a checkout runs from the TypeScript sources, so the import gets
 * the source file of the same subpath instead (`./dist/src/index.js` -> `./src/index.ts`): no build,
 * never a stale one, and the worker shares the library instance `rerun dev` runs.
 */
import { existsSync, readFileSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8'));
const NAME = manifest.name;

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL ?? '';
  const own = specifier === NAME || specifier.startsWith(`${NAME}/`);
  // Only the package's own modules see themselves by name (Node's self-reference); an installed
  // copy under node_modules/ resolves as usual.
  if (own && parent.startsWith(ROOT.href) && !parent.includes('/node_modules/')) {
    const target = manifest.exports?.[specifier === NAME ? '.' : `.${specifier.slice(NAME.length)}`];
    const built = typeof target === 'string' ? target : target?.default;
    if (typeof built === 'string' && built.startsWith('./dist/') && built.endsWith('.js')) {
      const source = new URL(`${built.slice('./dist/'.length, -'.js'.length)}.ts`, ROOT);
      // Resolved on by the next hooks (tsx's), which then also load it as TypeScript.
      if (existsSync(source)) return nextResolve(source.href, context);
    }
  }
  return nextResolve(specifier, context);
}
